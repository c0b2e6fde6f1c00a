package io.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.shedlock.LeaseholdLockProvider;
import io.leasehold.spring.integration.LeaseholdLock;
import io.leasehold.spring.integration.LeaseholdLockRegistry;
import io.leasehold.testkit.LeaseholdCluster;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The auto-configured beans against a real three-node cluster, and the cases where there are none.
 */
class LeaseholdAutoConfigurationTest {
  static LeaseholdCluster cluster;

  /** Reads what the cluster holds, outside every context. */
  static LeaseholdClient observer;

  @BeforeAll
  static void start() throws IOException {
    cluster = LeaseholdCluster.start(3);
    observer = cluster.clientBuilder().build();
  }

  @AfterAll
  static void stop() {
    if (observer != null) {
      observer.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  LeaseholdAutoConfiguration.class,
                  LeaseholdShedLockAutoConfiguration.class,
                  LeaseholdLockRegistryAutoConfiguration.class,
                  LeaseholdHealthContributorAutoConfiguration.class));

  /** The runner with the cluster's endpoints and timeouts for a loaded machine. */
  private ApplicationContextRunner withCluster() {
    return runner.withPropertyValues(
        "leasehold.endpoints=" + cluster.endpoints(),
        "leasehold.request-timeout=20s",
        "leasehold.attempt-timeout=3s");
  }

  private static Optional<LeaseInfo> held(String name) {
    return observer.blocking().get(name);
  }

  @Test
  void theClientBeanAcquiresAndReleasesAndIsClosedWithTheContext() throws Exception {
    AtomicReference<LeaseholdClient> bean = new AtomicReference<>();
    withCluster()
        .withPropertyValues("leasehold.holder=boot-client-test")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseholdClient.class);
              LeaseholdClient client = context.getBean(LeaseholdClient.class);
              bean.set(client);
              assertThat(client.holder()).isEqualTo("boot-client-test");

              Lease lease = client.blocking().acquire("boot/client", Duration.ofSeconds(10));
              assertThat(held("boot/client")).map(LeaseInfo::holder).contains("boot-client-test");
              lease.release().join();
              assertThat(held("boot/client")).isEmpty();

              // Left held: closing the context closes the client, which releases it.
              client.blocking().acquire("boot/left-held", Duration.ofSeconds(10));
              assertThat(held("boot/left-held")).isPresent();
            });
    assertThat(bean.get().isClosed()).isTrue();
    Clusters.await(
        Duration.ofSeconds(20),
        "boot/left-held released on close",
        () -> held("boot/left-held").isEmpty());
  }

  @Test
  void endpointsAsIndexedEntriesOrAnEnvironmentVariableGiveTheClientToo() {
    List<String> endpoints = cluster.addresses();
    // As YAML lists give them.
    runner
        .withPropertyValues(
            "leasehold.endpoints[0]=" + endpoints.get(0),
            "leasehold.endpoints[1]=" + endpoints.get(1),
            "leasehold.request-timeout=20s")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseholdClient.class);
              AcquireResult result =
                  context.getBean(LeaseholdClient.class).blocking().tryAcquire("boot/indexed");
              assertThat(result).isInstanceOf(Granted.class);
              ((Granted) result).lease().release().join();
            });
    // LEASEHOLD_ENDPOINTS, as the environment of a container gives it.
    runner
        .withInitializer(
            context ->
                context
                    .getEnvironment()
                    .getPropertySources()
                    .addFirst(
                        new SystemEnvironmentPropertySource(
                            "test-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                            Map.of(
                                "LEASEHOLD_ENDPOINTS",
                                cluster.endpoints(),
                                "LEASEHOLD_HOLDER",
                                "from-environment"))))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseholdClient.class);
              LeaseholdClient client = context.getBean(LeaseholdClient.class);
              assertThat(client.holder()).isEqualTo("from-environment");
              assertThat(client.endpoints()).containsAll(endpoints);
            });
  }

  @Test
  void theLockProviderBeanLocksUnderItsPrefixAndExcludesAnotherClient() throws Exception {
    withCluster()
        .withPropertyValues("leasehold.shedlock.prefix=jobs/")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LockProvider.class);
              LockProvider provider = context.getBean(LockProvider.class);
              assertThat(provider).isInstanceOf(LeaseholdLockProvider.class);
              String holder = context.getBean(LeaseholdClient.class).holder();

              LockConfiguration nightly =
                  new LockConfiguration(
                      ClockProvider.now(), "nightly", Duration.ofSeconds(60), Duration.ZERO);
              Optional<SimpleLock> lock = provider.lock(nightly);
              assertThat(lock).isPresent();
              assertThat(held("jobs/nightly")).map(LeaseInfo::holder).contains(holder);

              try (LeaseholdClient otherClient = cluster.clientBuilder().build();
                  LeaseholdLockProvider other =
                      LeaseholdLockProvider.builder(otherClient).prefix("jobs/").build()) {
                LockConfiguration again =
                    new LockConfiguration(
                        ClockProvider.now(), "nightly", Duration.ofSeconds(60), Duration.ZERO);
                assertThat(other.lock(again)).isEmpty();

                lock.get().unlock();
                AtomicReference<SimpleLock> taken = new AtomicReference<>();
                Clusters.await(
                    Duration.ofSeconds(20),
                    "the other client takes jobs/nightly once unlocked",
                    () -> {
                      other
                          .lock(
                              new LockConfiguration(
                                  ClockProvider.now(),
                                  "nightly",
                                  Duration.ofSeconds(60),
                                  Duration.ZERO))
                          .ifPresent(taken::set);
                      return taken.get() != null;
                    });
                assertThat(held("jobs/nightly"))
                    .map(LeaseInfo::holder)
                    .contains(otherClient.holder());
                taken.get().unlock();
              }
            });
  }

  @Test
  void theLockRegistryBeanLocksWithItsPrefixAndTtl() throws Exception {
    withCluster()
        .withPropertyValues(
            "leasehold.lock-registry.prefix=orders/", "leasehold.lock-registry.ttl=7s")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class);
              LeaseholdLockRegistry registry = context.getBean(LeaseholdLockRegistry.class);

              LeaseholdLock lock = registry.obtain("invoice-1");
              assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
              try {
                LeaseInfo info = held("orders/invoice-1").orElseThrow();
                assertThat(info.holder())
                    .isEqualTo(context.getBean(LeaseholdClient.class).holder());
                assertThat(info.ttl()).isEqualTo(Duration.ofSeconds(7));
                assertThat(info.session()).isZero();
                assertThat(info.token()).isEqualTo(lock.token());

                try (LeaseholdClient otherClient = cluster.clientBuilder().build()) {
                  LeaseholdLock contended =
                      LeaseholdLockRegistry.builder(otherClient)
                          .prefix("orders/")
                          .build()
                          .obtain("invoice-1");
                  assertThat(contended.tryLock()).isFalse();
                }
              } finally {
                lock.unlock();
              }
              Clusters.await(
                  Duration.ofSeconds(20),
                  "orders/invoice-1 released",
                  () -> held("orders/invoice-1").isEmpty());
            });
  }

  @Test
  void theBeansBackOffForTheApplicationsOwn() {
    try (LeaseholdClient own = cluster.clientBuilder().build()) {
      LockProvider ownProvider = configuration -> Optional.empty();
      DefaultLockRegistry ownRegistry = new DefaultLockRegistry();
      withCluster()
          .withBean("ownClient", LeaseholdClient.class, () -> own)
          .withBean("ownProvider", LockProvider.class, () -> ownProvider)
          .withBean("ownRegistry", DefaultLockRegistry.class, () -> ownRegistry)
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                assertThat(context).getBean(LeaseholdClient.class).isSameAs(own);
                assertThat(context).getBean(LockProvider.class).isSameAs(ownProvider);
                assertThat(context).getBean(LockRegistry.class).isSameAs(ownRegistry);
                assertThat(context)
                    .doesNotHaveBean(LeaseholdLockProvider.class)
                    .doesNotHaveBean(LeaseholdLockRegistry.class);
              });
    }
  }

  @Test
  void theApplicationsOwnClientWithoutEndpointsGetsTheProviderAndTheRegistry() {
    try (LeaseholdClient own = cluster.clientBuilder().build()) {
      runner
          .withBean("ownClient", LeaseholdClient.class, () -> own)
          .run(
              context -> {
                assertThat(context)
                    .hasNotFailed()
                    .hasSingleBean(LeaseholdClient.class)
                    .hasSingleBean(LeaseholdLockProvider.class)
                    .hasSingleBean(LeaseholdLockRegistry.class);
                LeaseholdLock lock =
                    context.getBean(LeaseholdLockRegistry.class).obtain("own-client");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                try {
                  assertThat(held(LeaseholdLockRegistry.DEFAULT_PREFIX + "own-client"))
                      .map(LeaseInfo::holder)
                      .contains(own.holder());
                } finally {
                  lock.unlock();
                }
              });
    }
  }

  @Test
  void aCustomizerRunsAfterTheProperties() {
    withCluster()
        .withPropertyValues("leasehold.holder=from-properties")
        .withBean(
            LeaseholdClientBuilderCustomizer.class,
            () -> builder -> builder.holder("from-customizer"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(LeaseholdClient.class).holder())
                  .isEqualTo("from-customizer");
            });
  }

  @Test
  void withoutEndpointsThereAreNoBeans() {
    runner
        .withPropertyValues("leasehold.holder=unused")
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .doesNotHaveBean(LeaseholdClient.class)
                  .doesNotHaveBean(LockProvider.class)
                  .doesNotHaveBean(LockRegistry.class)
                  .doesNotHaveBean(LeaseholdProperties.class);
            });
  }

  @Test
  void theIntegrationsCanBeSwitchedOff() {
    withCluster()
        .withPropertyValues(
            "leasehold.shedlock.enabled=false", "leasehold.lock-registry.enabled=false")
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .doesNotHaveBean(LockProvider.class)
                  .doesNotHaveBean(LockRegistry.class);
            });
  }

  @Test
  void withoutShedLockThereIsNoLockProvider() {
    withCluster()
        .withClassLoader(new FilteredClassLoader(LockProvider.class))
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .hasBean("leaseholdLockRegistry")
                  .doesNotHaveBean("leaseholdLockProvider");
            });
    // ShedLock present, but not the Leasehold provider module.
    withCluster()
        .withClassLoader(new FilteredClassLoader(LeaseholdLockProvider.class))
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .doesNotHaveBean("leaseholdLockProvider");
            });
  }

  @Test
  void withoutSpringIntegrationThereIsNoLockRegistry() {
    withCluster()
        .withClassLoader(new FilteredClassLoader(LockRegistry.class))
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .hasBean("leaseholdLockProvider")
                  .doesNotHaveBean("leaseholdLockRegistry");
            });
    withCluster()
        .withClassLoader(new FilteredClassLoader(LeaseholdLockRegistry.class))
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .doesNotHaveBean("leaseholdLockRegistry");
            });
  }

  @Test
  void theHealthIndicatorIsUpWithTheLeader() {
    withCluster()
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseholdHealthIndicator.class);
              Health health = context.getBean(LeaseholdHealthIndicator.class).health(true);
              assertThat(health.getStatus()).isEqualTo(Status.UP);
              assertThat(cluster.nodeIds()).contains((String) health.getDetails().get("leader"));
              assertThat((java.util.Map<?, ?>) health.getDetails().get("members")).hasSize(3);
            });
  }

  @Test
  void theHealthIndicatorIsDownWhenTheClusterCannotBeReached() throws IOException {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    runner
        .withPropertyValues(
            "leasehold.endpoints=127.0.0.1:" + port,
            "leasehold.request-timeout=2s",
            "leasehold.attempt-timeout=1s",
            "leasehold.discover-members=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              Health health = context.getBean(LeaseholdHealthIndicator.class).health(true);
              assertThat(health.getStatus()).isEqualTo(Status.DOWN);
              assertThat(health.getDetails()).containsKey("error");
            });
  }

  @Test
  void theHealthIndicatorIsAbsentWithoutHealthSupportOrWhenSwitchedOff() {
    withCluster()
        .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .doesNotHaveBean("leaseholdHealthIndicator");
            });
    withCluster()
        .withPropertyValues("management.health.leasehold.enabled=false")
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LeaseholdClient.class)
                  .doesNotHaveBean(LeaseholdHealthIndicator.class);
            });
  }

  @Test
  void badValuesFailTheStartNamingThePropertyAndTheRule(@TempDir Path dir) throws IOException {
    String good = cluster.addresses().get(0);
    Path notPem = Files.writeString(dir.resolve("not-a-certificate.pem"), "hello\n");
    assertFails("endpoints[1]", "must be host:port", "leasehold.endpoints=" + good + ",no-port");
    assertFails("endpoints[0]", "port 70000, out of range", "leasehold.endpoints=localhost:70000");
    assertFails("leasehold.endpoints", "at least one", "leasehold.endpoints=");
    assertFails(
        "request-timeout",
        "must be a positive duration",
        "leasehold.endpoints=" + good,
        "leasehold.request-timeout=-1s");
    assertFails(
        "leasehold.request-timeout",
        "Duration",
        "leasehold.endpoints=" + good,
        "leasehold.request-timeout=soon");
    assertFails("token", "printable ASCII", "leasehold.endpoints=" + good, "leasehold.token=a b");
    assertFails(
        "tls.ca",
        "readable file",
        "leasehold.endpoints=" + good,
        "leasehold.tls.ca=" + dir.resolve("missing.pem"));
    assertFails(
        "tls.key",
        "together with leasehold.tls.cert",
        "leasehold.endpoints=" + good,
        "leasehold.tls.ca=" + notPem,
        "leasehold.tls.cert=" + notPem);
    assertFails(
        "leasehold.tls",
        "holds no PEM certificate",
        "leasehold.endpoints=" + good,
        "leasehold.tls.ca=" + notPem);
    assertFails(
        "leasehold.retry",
        "maxBackoff: must be at least initialBackoff",
        "leasehold.endpoints=" + good,
        "leasehold.retry.max-backoff=10ms");
    assertFails(
        "shedlock.prefix",
        "namespace and a slash",
        "leasehold.endpoints=" + good,
        "leasehold.shedlock.prefix=jobs");
    assertFails(
        "lock-registry.ttl",
        "must be a positive duration",
        "leasehold.endpoints=" + good,
        "leasehold.lock-registry.ttl=0s");
  }

  private void assertFails(String property, String rule, String... properties) {
    runner
        .withPropertyValues(properties)
        .run(
            context -> {
              assertThat(context).as("%s", List.of(properties)).hasFailed();
              StringBuilder messages = new StringBuilder();
              for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                assertThat(t)
                    .as("a cause of the failure")
                    .isNotInstanceOf(NullPointerException.class);
                messages.append(t.getMessage()).append('\n');
              }
              assertThat(messages.toString())
                  .as("%s", List.of(properties))
                  .contains(property)
                  .contains(rule);
            });
  }
}
