package io.leasehold.server.fuzz;

import io.grpc.ManagedChannel;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The API fuzz test with authentication and roles: three nodes with mutual TLS, client certificates
 * required (the identity is the certificate's CN) and "h1" the initial admin, who then grants
 * {@code client} to "h2" and {@code reader} to "h3"; "h4" holds no role. Calls go out as any of the
 * four, so every call is also a check of the authorization point: an identity is refused
 * (PERMISSION_DENIED) exactly the calls its roles do not allow, and a call it may make is refused
 * only for naming a holder other than itself or for a lease another identity holds. Grants of these
 * four never change during a run ({@link AuthGuard}); roles and grants of others are fuzzed and
 * compared with the replay like the rest of the state.
 *
 * <p>The holders of {@link Atoms#HOLDERS} include the four identities, so valid Acquires often name
 * their caller and are granted. See {@link ApiFuzzing} for what is sent and checked; {@value
 * #TRIES} calls by default (fewer than the plaintext variant's, as each call costs a TLS
 * connection's worth more), {@code -Dleasehold.fuzz.seed} and {@code -Dleasehold.fuzz.tries} change
 * the seed and the number of calls.
 */
class AuthApiFuzzTest extends ApiFuzzing {
  static final int TRIES = 1_000;
  static final List<String> CLIENTS = List.of("h1", "h2", "h3", "h4");

  /** What the built-in reader role allows: reads, lists, watches and the cluster's status. */
  static final Set<String> READS =
      Set.of(
          "leasehold.v1.Leases/Get",
          "leasehold.v1.Leases/List",
          "leasehold.v1.Leases/Watch",
          "leasehold.v1.Leases/GetSession",
          "leasehold.v1.Leases/ListSessions",
          "leasehold.v1.Routing/Lookup",
          "leasehold.v1.Routing/ListRoutes",
          "leasehold.v1.Registry/Resolve",
          "leasehold.v1.Cluster/Status");

  static final String WHO_AM_I = "leasehold.v1.Auth/WhoAmI";

  @Override
  protected FuzzVariant variant() {
    return new FuzzVariant(
        "mtls-roles",
        AuthApiFuzzTest::start,
        List.of(
            new FuzzVariant.Identity("h1", FuzzClusters.channelAs("h1"), method -> true),
            new FuzzVariant.Identity(
                "h2", FuzzClusters.channelAs("h2"), AuthApiFuzzTest::clientMayCall),
            new FuzzVariant.Identity(
                "h3",
                FuzzClusters.channelAs("h3"),
                method -> READS.contains(method) || method.equals(WHO_AM_I)),
            new FuzzVariant.Identity("h4", FuzzClusters.channelAs("h4"), WHO_AM_I::equals)),
        true);
  }

  @Override
  protected int defaultTries() {
    return TRIES;
  }

  /**
   * The built-in client role: every call of Leases, Routing and Registry, the cluster's status; and
   * WhoAmI.
   */
  static boolean clientMayCall(String method) {
    return method.startsWith("leasehold.v1.Leases/")
        || method.startsWith("leasehold.v1.Routing/")
        || method.startsWith("leasehold.v1.Registry/")
        || READS.contains(method)
        || method.equals(WHO_AM_I);
  }

  /**
   * Starts the nodes with "h1" as initial admin, grants the roles as h1, and waits until every node
   * has applied them.
   */
  static TestCluster start(Path dir) throws IOException {
    TestCluster cluster =
        FuzzClusters.startMutualTls(dir, CLIENTS, (id, b) -> b.initialAdmin("h1"));
    try {
      ManagedChannel channel =
          FuzzClusters.channelAs("h1").open(cluster, dir, cluster.awaitLeader().id());
      try {
        AuthGrpc.AuthBlockingStub auth = AuthGrpc.newBlockingStub(channel);
        for (GrantRoleRequest grant :
            List.of(
                GrantRoleRequest.newBuilder().setIdentity("h2").setRole("client").build(),
                GrantRoleRequest.newBuilder().setIdentity("h3").setRole("reader").build())) {
          TestCluster.await(
              "h1 to grant " + grant.getIdentity() + " the role " + grant.getRole(),
              Duration.ofSeconds(30),
              () -> auth.withDeadlineAfter(5, TimeUnit.SECONDS).grantRole(grant) != null);
        }
      } finally {
        channel.shutdownNow();
      }
      // h1 administers by being the initial admin until the leader's bootstrap grants it the role.
      // A replayed grant of the admin role to anyone else before that grant would end h1's rights.
      TestCluster.await(
          "h1 granted the admin role on every node",
          Duration.ofSeconds(30),
          () ->
              cluster.running().stream()
                  .allMatch(n -> n.stateMachine().core().access().hasUnrestrictedAdmin()));
      cluster.awaitConverged();
      return cluster;
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }
}
