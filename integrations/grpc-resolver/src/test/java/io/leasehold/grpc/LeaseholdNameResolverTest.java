package io.leasehold.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.EquivalentAddressGroup;
import io.grpc.Status;
import io.grpc.StatusOr;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Registration;
import io.leasehold.testkit.LeaseholdCluster;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What a resolver hands its listener, and the clients it uses, against a three-node cluster. */
@SuppressWarnings("try") // registrations are resources held for the length of a test
class LeaseholdNameResolverTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  static LeaseholdCluster cluster;
  static LeaseholdClient registrar;

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

  private static String target(String service) {
    return "leasehold://" + cluster.endpoints() + "/" + service;
  }

  @Test
  void eachServingInstanceIsOneAddressGroupInInstanceOrderWithItsNameAndMetadata()
      throws Exception {
    try (Registration two =
            registrar.blocking().register("catalog", "i-2", "127.0.0.1:9002", Map.of("zone", "b"));
        Registration one =
            registrar.blocking().register("catalog", "i-1", "127.0.0.1:9001", Map.of("zone", "a"));
        Resolvers.Started r =
            Resolvers.start(new LeaseholdNameResolverProvider(), target("catalog"))) {
      Resolvers.await(
          () -> "both instances: " + r.recorder().results,
          WAIT,
          () -> List.of("i-1", "i-2").equals(r.recorder().lastInstances()));
      List<EquivalentAddressGroup> groups = r.recorder().last().getValue();
      assertEquals(List.of(new InetSocketAddress("127.0.0.1", 9001)), groups.get(0).getAddresses());
      assertEquals(
          Map.of("zone", "a"),
          groups.get(0).getAttributes().get(LeaseholdNameResolverProvider.METADATA));
      assertEquals(List.of(new InetSocketAddress("127.0.0.1", 9002)), groups.get(1).getAddresses());
      assertEquals(
          Map.of("zone", "b"),
          groups.get(1).getAttributes().get(LeaseholdNameResolverProvider.METADATA));
    }
  }

  @Test
  void instancesLeaveWhenDrainingOrDeregisteredAndJoinWhenServing() throws Exception {
    try (Registration a = registrar.blocking().register("ledger", "a", "127.0.0.1:9101", Map.of());
        Registration b = registrar.blocking().register("ledger", "b", "127.0.0.1:9102", Map.of());
        Resolvers.Started r =
            Resolvers.start(new LeaseholdNameResolverProvider(), target("ledger"))) {
      awaitInstances(r, List.of("a", "b"));
      a.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
      awaitInstances(r, List.of("b"));
      a.setStatus(Registration.SERVING).get(10, TimeUnit.SECONDS);
      awaitInstances(r, List.of("a", "b"));
      b.deregister().get(10, TimeUnit.SECONDS);
      awaitInstances(r, List.of("a"));
      try (Registration c =
          registrar.blocking().register("ledger", "c", "127.0.0.1:9103", Map.of())) {
        awaitInstances(r, List.of("a", "c"));
      }
      awaitInstances(r, List.of("a"));
    }
  }

  @Test
  void anInstanceWhoseAddressIsNotHostPortIsLeftOut() throws Exception {
    try (Registration url =
            registrar.blocking().register("mixed", "url", "http://10.0.0.1/api", Map.of());
        Registration noPort =
            registrar.blocking().register("mixed", "no-port", "10.0.0.2", Map.of());
        Registration good =
            registrar.blocking().register("mixed", "good", "127.0.0.1:9201", Map.of());
        Resolvers.Started r =
            Resolvers.start(new LeaseholdNameResolverProvider(), target("mixed"))) {
      awaitInstances(r, List.of("good"));
      assertEquals(
          List.of(
              "no-port (address \"10.0.0.2\" is not host:port)",
              "url (address \"http://10.0.0.1/api\" has no numeric port)"),
          Instances.of("service/mixed/", registrar.blocking().routes("service/mixed/")).skipped());
    }
  }

  @Test
  void noServingInstanceIsReportedUnavailableNamingTheService() throws Exception {
    try (Registration d = registrar.blocking().register("quiet", "d", "127.0.0.1:9301", Map.of());
        Resolvers.Started r =
            Resolvers.start(new LeaseholdNameResolverProvider(), target("quiet"))) {
      awaitInstances(r, List.of("d"));
      d.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
      Resolvers.await(
          () -> "an error result: " + r.recorder().results,
          WAIT,
          () -> !r.recorder().last().hasValue());
      Status status = r.recorder().last().getStatus();
      assertEquals(Status.Code.UNAVAILABLE, status.getCode());
      assertEquals(
          "service \"quiet\" has no SERVING instance in the Leasehold registry (1 live instance(s) not SERVING)",
          status.getDescription());
    }
  }

  @Test
  void aTargetWithZonesFollowsTheFirstZoneThatHasAServingInstance() throws Exception {
    try (Registration a1 =
            registrar
                .blocking()
                .register("atlas", "a1", "127.0.0.1:9501", Map.of("zone", "eu-a", "tier", "gold"));
        Registration b1 =
            registrar
                .blocking()
                .register("atlas", "b1", "127.0.0.1:9502", Map.of("zone", "eu-b", "tier", "gold"));
        Registration b2 =
            registrar
                .blocking()
                .register("atlas", "b2", "127.0.0.1:9503", Map.of("zone", "eu-b", "tier", "tin"));
        Resolvers.Started r =
            Resolvers.start(
                new LeaseholdNameResolverProvider(), target("atlas") + "?zone=eu-a,eu-b");
        Resolvers.Started gold =
            Resolvers.start(
                new LeaseholdNameResolverProvider(),
                target("atlas") + "?zone=eu-b&meta.tier=gold")) {
      awaitInstances(r, List.of("a1"));
      awaitInstances(gold, List.of("b1"));
      // eu-a empties: the next zone's instances take over, and come back when it fills.
      a1.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
      awaitInstances(r, List.of("b1", "b2"));
      try (Registration a2 =
          registrar.blocking().register("atlas", "a2", "127.0.0.1:9504", Map.of("zone", "eu-a"))) {
        awaitInstances(r, List.of("a2"));
      }
      awaitInstances(r, List.of("b1", "b2"));
      b1.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
      Resolvers.await(
          () -> "an error result: " + gold.recorder().results,
          WAIT,
          () -> !gold.recorder().last().hasValue());
      assertEquals(
          "service \"atlas\" has no SERVING instance in zone eu-b with metadata {tier=gold} in the"
              + " Leasehold registry (1 live instance(s) not SERVING)",
          gold.recorder().last().getStatus().getDescription());
    }
  }

  @Test
  void refreshHandsTheCurrentListOverAgain() throws Exception {
    try (Registration one =
            registrar.blocking().register("again", "one", "127.0.0.1:9401", Map.of());
        Resolvers.Started r =
            Resolvers.start(new LeaseholdNameResolverProvider(), target("again"))) {
      awaitInstances(r, List.of("one"));
      int before = r.recorder().results.size();
      r.refresh();
      Resolvers.await(
          () -> "a second result: " + r.recorder().results,
          WAIT,
          () -> r.recorder().results.size() == before + 1);
      assertEquals(List.of("one"), r.recorder().lastInstances());
    }
  }

  @Test
  void theProvidersOwnClientIsSharedByItsResolversAndClosedWithTheLastOfThem() throws Exception {
    List<LeaseholdClient> made = new CopyOnWriteArrayList<>();
    LeaseholdNameResolverProvider provider =
        new LeaseholdNameResolverProvider(
            Optional.empty(),
            name -> null,
            endpoints -> {
              LeaseholdClient c = Resolvers.client(endpoints);
              made.add(c);
              return c;
            },
            LeaseholdNameResolverProvider.FIRST_LISTING_TIMEOUT);
    try (Registration one =
        registrar.blocking().register("shared", "one", "127.0.0.1:9501", Map.of())) {
      Resolvers.Started first = Resolvers.start(provider, target("shared"));
      Resolvers.Started second = Resolvers.start(provider, target("shared"));
      awaitInstances(first, List.of("one"));
      awaitInstances(second, List.of("one"));
      assertEquals(1, made.size(), "one client for one endpoint list");
      assertEquals(1, provider.openClients());

      first.close();
      awaitInstances(second, List.of("one"));
      assertEquals(1, provider.openClients());
      assertFalse(made.get(0).isClosed(), "still used by the second resolver");
      second.close();
      Resolvers.await(
          "the client closed with its last resolver", WAIT, () -> made.get(0).isClosed());
      assertEquals(0, provider.openClients());
    }
  }

  @Test
  void
      aClusterThatCannotBeReachedFailsUnavailableAfterTheFirstListingTimeoutAndTheClientIsClosedAtShutdown()
          throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    List<LeaseholdClient> made = new CopyOnWriteArrayList<>();
    LeaseholdNameResolverProvider provider =
        new LeaseholdNameResolverProvider(
            Optional.empty(),
            name -> null,
            endpoints -> {
              LeaseholdClient c = Resolvers.client(endpoints);
              made.add(c);
              return c;
            },
            Duration.ofMillis(500));
    Resolvers.Started r = Resolvers.start(provider, "leasehold://127.0.0.1:" + port + "/nowhere");
    Resolvers.await(
        () -> "an error result: " + r.recorder().results, WAIT, () -> r.recorder().last() != null);
    StatusOr<List<EquivalentAddressGroup>> result = r.recorder().last();
    assertFalse(result.hasValue());
    assertEquals(Status.Code.UNAVAILABLE, result.getStatus().getCode());
    assertTrue(
        result
            .getStatus()
            .getDescription()
            .startsWith(
                "the instances of service \"nowhere\" could not be listed from the cluster at [127.0.0.1:"
                    + port
                    + "] within 500 ms"),
        result.getStatus().getDescription());
    r.close();
    Resolvers.await("the client closed at shutdown", WAIT, () -> made.get(0).isClosed());
  }

  @Test
  void aClientThatCannotBeMadeIsReportedUnavailableAndMadeAgainOnRefresh() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    List<LeaseholdClient> made = new CopyOnWriteArrayList<>();
    LeaseholdNameResolverProvider provider =
        new LeaseholdNameResolverProvider(
            Optional.empty(),
            name -> null,
            endpoints -> {
              if (attempts.incrementAndGet() == 1) {
                throw new IllegalStateException("no file descriptors left");
              }
              LeaseholdClient c = Resolvers.client(endpoints);
              made.add(c);
              return c;
            },
            LeaseholdNameResolverProvider.FIRST_LISTING_TIMEOUT);
    try (Registration one =
            registrar.blocking().register("retried", "one", "127.0.0.1:9601", Map.of());
        Resolvers.Started r = Resolvers.start(provider, target("retried"))) {
      Resolvers.await(
          () -> "an error result: " + r.recorder().results,
          WAIT,
          () -> r.recorder().last() != null);
      Status status = r.recorder().last().getStatus();
      assertEquals(Status.Code.UNAVAILABLE, status.getCode());
      assertTrue(
          status
              .getDescription()
              .endsWith(
                  "no client for the cluster at "
                      + List.of(cluster.endpoints().split(","))
                      + ": no file descriptors left"),
          status.getDescription());
      r.refresh();
      awaitInstances(r, List.of("one"));
    }
    Resolvers.await("the client closed at shutdown", WAIT, () -> made.get(0).isClosed());
  }

  private static void awaitInstances(Resolvers.Started r, List<String> instances) {
    Resolvers.await(
        () -> instances + " resolved; results so far: " + r.recorder().results,
        WAIT,
        () -> instances.equals(r.recorder().lastInstances()));
  }
}
