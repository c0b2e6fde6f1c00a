package io.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.shedlock.LeaseholdLockProvider;
import io.leasehold.spring.integration.LeaseholdLock;
import io.leasehold.spring.integration.LeaseholdLockRegistry;
import io.leasehold.testkit.LeaseholdCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The module as an application finds it: registered auto-configurations, metadata, a whole start.
 */
class LeaseholdSpringApplicationTest {
  static LeaseholdCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = LeaseholdCluster.start(3);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** An application with nothing of its own: everything comes from auto-configuration. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  private static SpringApplicationBuilder app(String... properties) {
    return new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE)
        .bannerMode(Banner.Mode.OFF)
        .properties(properties);
  }

  @Test
  void anApplicationGetsTheClientTheProviderAndTheRegistryFromTheEndpointsAlone() throws Exception {
    LeaseholdClient client;
    try (ConfigurableApplicationContext context =
        app(
                "leasehold.endpoints=" + cluster.endpoints(),
                "leasehold.request-timeout=20s",
                "leasehold.holder=boot-app")
            .run()) {
      client = context.getBean(LeaseholdClient.class);
      assertThat(client.holder()).isEqualTo("boot-app");
      assertThat(context.getBean(LeaseholdLockProvider.class)).isNotNull();
      assertThat(context.getBean(LeaseholdHealthIndicator.class).health().getStatus().getCode())
          .isEqualTo("UP");
      LeaseholdLock lock = context.getBean(LeaseholdLockRegistry.class).obtain("app");
      assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
      lock.unlock();
    }
    assertThat(client.isClosed()).isTrue();
  }

  @Test
  void anApplicationWithABadEndpointDoesNotStart() {
    assertThatThrownBy(() -> app("leasehold.endpoints=localhost").run().close())
        .hasStackTraceContaining("endpoints[0]")
        .hasStackTraceContaining("must be host:port");
  }

  @Test
  void theAutoConfigurationsAreRegistered() {
    assertThat(
            ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
                .getCandidates())
        .contains(
            LeaseholdAutoConfiguration.class.getName(),
            LeaseholdShedLockAutoConfiguration.class.getName(),
            LeaseholdLockRegistryAutoConfiguration.class.getName(),
            LeaseholdHealthContributorAutoConfiguration.class.getName());
  }

  @Test
  void thePropertiesHaveMetadataAndTheLibrariesDefaults() throws IOException {
    try (InputStream in =
        getClass()
            .getClassLoader()
            .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("spring-configuration-metadata.json").isNotNull();
      String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(json)
          .contains(
              "\"leasehold.endpoints\"",
              "\"leasehold.tls.ca\"",
              "\"leasehold.session.ttl\"",
              "\"leasehold.shedlock.prefix\"",
              "\"leasehold.lock-registry.ttl\"");
    }
    LeaseholdProperties defaults = new LeaseholdProperties();
    assertThat(defaults.getShedlock().getPrefix()).isEqualTo(LeaseholdLockProvider.DEFAULT_PREFIX);
    assertThat(defaults.getLockRegistry().getPrefix())
        .isEqualTo(LeaseholdLockRegistry.DEFAULT_PREFIX);
  }
}
