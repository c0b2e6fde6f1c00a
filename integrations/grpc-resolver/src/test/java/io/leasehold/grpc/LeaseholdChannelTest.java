package io.leasehold.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RegisterOptions;
import io.leasehold.client.Registration;
import io.leasehold.testkit.LeaseholdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Channels built for leasehold: targets, against a three-node cluster and a real gRPC server per
 * instance.
 */
class LeaseholdChannelTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  static LeaseholdCluster cluster;
  static LeaseholdClient registrar;

  private final List<AutoCloseable> cleanup = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    cluster = LeaseholdCluster.start(3);
    registrar = Resolvers.client(cluster);
  }

  @AfterAll
  static void stop() {
    registrar.close();
    cluster.close();
  }

  @AfterEach
  void closeWhatTheTestOpened() throws Exception {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).close();
    }
  }

  @Test
  void callsSpreadOverEverySERVINGInstance() throws Exception {
    List<Backend> backends = List.of(backend("a"), backend("b"), backend("c"));
    for (Backend b : backends) {
      register(registrar, "spread", b);
    }
    ManagedChannel channel = roundRobin("leasehold://" + cluster.endpoints() + "/spread");

    awaitEveryOneCalled(channel, backends);
    Map<Backend, Integer> window = window(channel, backends, 30);
    for (Backend b : backends) {
      assertTrue(window.get(b) >= 5, "round robin over all three: " + window);
    }
  }

  @Test
  void aDrainingInstanceStopsReceivingNewCalls() throws Exception {
    Backend a = backend("a");
    Backend b = backend("b");
    Registration ra = register(registrar, "drain", a);
    register(registrar, "drain", b);
    ManagedChannel channel = roundRobin("leasehold://" + cluster.endpoints() + "/drain");
    awaitEveryOneCalled(channel, List.of(a, b));

    ra.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
    Resolvers.await(
        () -> "a draining instance to get no calls: " + a,
        WAIT,
        () -> window(channel, List.of(a, b), 10).get(a) == 0);
    Map<Backend, Integer> after = window(channel, List.of(a, b), 20);
    assertEquals(Map.of(a, 0, b, 20), after, "every call to the SERVING one");
  }

  @Test
  void anInstanceWhoseRegistrationExpiresDisappears() throws Exception {
    Backend stays = backend("stays");
    Backend lapses = backend("lapses");
    register(registrar, "expiry", stays);
    LeaseholdClient instanceClient =
        LeaseholdClient.builder()
            .endpoints(List.of(cluster.endpoints().split(",")))
            .releaseOnClose(false)
            .build();
    cleanup.add(instanceClient);
    instanceClient
        .register(
            "expiry",
            "lapses",
            lapses.address(),
            Map.of(),
            RegisterOptions.DEFAULTS.withTtl(Duration.ofSeconds(5)))
        .get(20, TimeUnit.SECONDS);
    ManagedChannel channel = roundRobin("leasehold://" + cluster.endpoints() + "/expiry");
    awaitEveryOneCalled(channel, List.of(stays, lapses));

    instanceClient.close(); // the lease is not released: it lapses after its TTL
    assertEquals(
        1,
        registrar.blocking().resolve("expiry").stream()
            .filter(i -> i.instance().equals("lapses"))
            .count(),
        "still registered right after its client went away");
    Resolvers.await(
        () -> "the lapsed instance to get no calls: " + lapses,
        WAIT,
        () -> window(channel, List.of(stays, lapses), 10).get(lapses) == 0);
    assertEquals(
        0,
        registrar.blocking().resolve("expiry").stream()
            .filter(i -> i.instance().equals("lapses"))
            .count());
    assertEquals(
        Map.of(stays, 20, lapses, 0),
        window(channel, List.of(stays, lapses), 20),
        "its server still runs; no call reaches it");
  }

  @Test
  void aNewlyRegisteredInstanceStartsReceivingCalls() throws Exception {
    Backend first = backend("first");
    register(registrar, "growth", first);
    ManagedChannel channel = roundRobin("leasehold://" + cluster.endpoints() + "/growth");
    awaitEveryOneCalled(channel, List.of(first));

    Backend second = backend("second");
    register(registrar, "growth", second);
    awaitEveryOneCalled(channel, List.of(first, second));
  }

  @Test
  void aServiceWithNoServingInstanceFailsCallsUnavailableNamingTheService() throws Exception {
    Backend draining = backend("draining");
    register(registrar, "idle", draining)
        .setStatus(Registration.DRAINING)
        .get(10, TimeUnit.SECONDS);
    ManagedChannel channel = roundRobin("leasehold://" + cluster.endpoints() + "/idle");

    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> check(channel));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
    assertTrue(
        e.getStatus().getDescription().contains("service \"idle\" has no SERVING instance"),
        e.toString());
    assertTrue(
        e.getStatus().getDescription().contains("1 live instance(s) not SERVING"), e.toString());
    assertEquals(0, draining.calls());
  }

  @Test
  void withPickFirstTheLastInstanceLeavingFailsCallsUnavailableNamingTheService() throws Exception {
    Backend only = backend("only");
    Registration r = register(registrar, "last", only);
    ManagedChannel channel =
        track(
            ManagedChannelBuilder.forTarget("leasehold://" + cluster.endpoints() + "/last")
                .usePlaintext()
                .build());
    assertEquals(HealthCheckResponse.ServingStatus.SERVING, check(channel).getStatus());

    r.close();
    Resolvers.await(
        "calls to fail once the last instance deregistered",
        WAIT,
        () -> failsWith(channel, "service \"last\" has no SERVING instance"));
    int reached = only.calls();
    for (int i = 0; i < 5; i++) {
      assertTrue(
          failsWith(channel, "service \"last\" has no SERVING instance"),
          "every later call fails the same way");
    }
    assertEquals(reached, only.calls(), "its server still runs; no call reaches it");
  }

  @Test
  void withRoundRobinCallsFailNamingTheServiceOnceTheLastInstanceDrainedAndStopped()
      throws Exception {
    Backend only = backend("only");
    Registration r = register(registrar, "rr-last", only);
    ManagedChannel channel = roundRobin("leasehold://" + cluster.endpoints() + "/rr-last");
    awaitEveryOneCalled(channel, List.of(only));

    // round_robin keeps a READY backend when the list turns empty; its server stopping ends that.
    r.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
    only.close();
    String expected = "service \"rr-last\" has no SERVING instance";
    Resolvers.await("calls to fail naming the service", WAIT, () -> failsWith(channel, expected));
    // None succeeds after that. round_robin still rebuilds its picker from the stopped backend's
    // subchannel after each reconnect attempt, so a call may carry that connection error instead
    // until the resolver's next answer: UNAVAILABLE either way.
    for (int i = 0; i < 5; i++) {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class, () -> check(channel), "no later call succeeds");
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e::toString);
    }
  }

  @Test
  void endpointsComeFromTheSystemPropertyWhenTheTargetNamesNone() throws Exception {
    Backend b = backend("b");
    register(registrar, "by-property", b);
    System.setProperty(LeaseholdNameResolverProvider.ENDPOINTS_PROPERTY, cluster.endpoints());
    try {
      ManagedChannel channel = roundRobin("leasehold:///by-property");
      awaitEveryOneCalled(channel, List.of(b));
      assertEquals("by-property", channel.authority());
    } finally {
      System.clearProperty(LeaseholdNameResolverProvider.ENDPOINTS_PROPERTY);
    }
  }

  @Test
  void aProviderBuiltWithAClientTakesTheSchemeOverAndLeavesTheClientOpen() throws Exception {
    Backend b = backend("b");
    register(registrar, "by-client", b);
    LeaseholdClient own = Resolvers.client(cluster);
    cleanup.add(own);
    LeaseholdNameResolverProvider provider = new LeaseholdNameResolverProvider(own);
    NameResolverRegistry.getDefaultRegistry().register(provider);
    try {
      ManagedChannel channel = roundRobin("leasehold:///by-client");
      awaitEveryOneCalled(channel, List.of(b));
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  track(
                      ManagedChannelBuilder.forTarget("leasehold://127.0.0.1:1/by-client")
                          .usePlaintext()
                          .build()));
      assertTrue(e.getMessage().startsWith("authority: must be empty"), e.getMessage());
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      assertTrue(!own.isClosed(), "the application's client stays open");
      assertEquals(
          List.of(b.address()),
          own.blocking().resolve("by-client").stream().map(i -> i.address()).toList());
    } finally {
      NameResolverRegistry.getDefaultRegistry().deregister(provider);
    }
  }

  private Backend backend(String name) throws Exception {
    Backend b = new Backend(name);
    cleanup.add(b);
    return b;
  }

  private Registration register(LeaseholdClient client, String service, Backend b)
      throws Exception {
    Registration r =
        client.register(service, b.name(), b.address(), Map.of()).get(20, TimeUnit.SECONDS);
    cleanup.add(r);
    return r;
  }

  private ManagedChannel roundRobin(String target) {
    return track(
        ManagedChannelBuilder.forTarget(target)
            .defaultLoadBalancingPolicy("round_robin")
            .usePlaintext()
            .build());
  }

  private ManagedChannel track(ManagedChannel channel) {
    cleanup.add(() -> channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS));
    return channel;
  }

  private static HealthCheckResponse check(ManagedChannel channel) {
    return HealthGrpc.newBlockingStub(channel)
        .withDeadlineAfter(20, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance());
  }

  /** Whether a call fails UNAVAILABLE with a description containing {@code text}. */
  private static boolean failsWith(ManagedChannel channel, String text) {
    try {
      check(channel);
      return false;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode() == Status.Code.UNAVAILABLE
          && e.getStatus().getDescription().contains(text);
    }
  }

  /** Makes {@code n} calls; how many each backend took. */
  private static Map<Backend, Integer> window(
      ManagedChannel channel, List<Backend> backends, int n) {
    Map<Backend, Integer> before = new HashMap<>();
    backends.forEach(b -> before.put(b, b.calls()));
    for (int i = 0; i < n; i++) {
      check(channel);
    }
    Map<Backend, Integer> taken = new HashMap<>();
    backends.forEach(b -> taken.put(b, b.calls() - before.get(b)));
    return taken;
  }

  private static void awaitEveryOneCalled(ManagedChannel channel, List<Backend> backends) {
    Resolvers.await(
        () -> "every instance to get calls: " + backends,
        WAIT,
        () ->
            window(channel, backends, 3 * backends.size()).values().stream().allMatch(n -> n > 0));
  }
}
