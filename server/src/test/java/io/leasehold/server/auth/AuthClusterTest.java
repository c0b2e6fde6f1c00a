package io.leasehold.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.AuditRequest;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListGrantsRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RevokeRoleRequest;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.proto.v1.WhoAmIRequest;
import io.leasehold.proto.v1.WhoAmIResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import io.leasehold.server.raft.PeerTraffic;
import io.leasehold.server.tls.TestCerts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three nodes with mutual TLS on both transports and client certificates required: identities from
 * certificates, the holder bound to the caller, roles (with prefixes) deciding every call on every
 * node, the last admin kept, and the audit history.
 */
class AuthClusterTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static TestCerts.Authority ca;
  static Path certs;
  static final List<ManagedChannel> CHANNELS = new ArrayList<>();
  static final Map<String, TestCerts.Identity> IDS = new HashMap<>();

  @BeforeAll
  static void start() throws IOException {
    certs = Files.createDirectories(dir.resolve("certs"));
    ca = TestCerts.authority(certs, "ca");
    for (String id : new String[] {"n1", "n2", "n3"}) {
      TestCerts.node(certs, ca, id);
    }
    Files.createDirectories(certs.resolve("san"));
    for (String name : new String[] {"root", "alice", "bob", "carol", "dave", "eve", "erin"}) {
      IDS.put(name, TestCerts.node(certs, ca, name));
    }
    cluster =
        TestCluster.start(
            3,
            dir.resolve("data"),
            (id, b) ->
                b.tlsCertFile(certs.resolve(id + ".pem"))
                    .tlsKeyFile(certs.resolve(id + "-key.pem"))
                    .tlsCaFile(ca.pem())
                    .clientCertAuth(true)
                    .initialAdmin("root")
                    .peerTlsCertFile(certs.resolve(id + ".pem"))
                    .peerTlsKeyFile(certs.resolve(id + "-key.pem"))
                    .peerTlsCaFile(ca.pem()));
    AuthGrpc.AuthBlockingStub root = auth("n1", "root");
    root.grantRole(GrantRoleRequest.newBuilder().setIdentity("alice").setRole("client").build());
    root.grantRole(GrantRoleRequest.newBuilder().setIdentity("bob").setRole("client").build());
    root.grantRole(GrantRoleRequest.newBuilder().setIdentity("carol").setRole("reader").build());
    root.addRole(
        AddRoleRequest.newBuilder()
            .setRole(
                AuthRole.newBuilder()
                    .setName("mailbox-client")
                    .setPermission(Permission.CLIENT)
                    .addPrefixes("mailbox/"))
            .build());
    root.grantRole(
        GrantRoleRequest.newBuilder().setIdentity("dave").setRole("mailbox-client").build());
    // The leader records the initial admin's grant once it leads; until then root is admin by
    // configuration only.
    TestCluster.await(
        "the initial admin's grant is recorded",
        Duration.ofSeconds(20),
        () ->
            root.listGrants(ListGrantsRequest.newBuilder().setIdentity("root").build())
                    .getGrantsCount()
                == 1);
    cluster.awaitConverged();
  }

  @AfterAll
  static void stop() {
    CHANNELS.forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  static ManagedChannel channel(String node, String identity) {
    ManagedChannel c =
        Grpc.newChannelBuilder(
                cluster.node(node).clientAddress(), TestCerts.credentials(ca, IDS.get(identity)))
            .build();
    CHANNELS.add(c);
    return c;
  }

  static LeasesGrpc.LeasesBlockingStub leases(String node, String identity) {
    return LeasesGrpc.newBlockingStub(channel(node, identity))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  static AuthGrpc.AuthBlockingStub auth(String node, String identity) {
    return AuthGrpc.newBlockingStub(channel(node, identity))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  static AdminGrpc.AdminBlockingStub admin(String node, String identity) {
    return AdminGrpc.newBlockingStub(channel(node, identity))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  static StatusRuntimeException refused(Status.Code code, Executable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
    assertEquals(code, e.getStatus().getCode(), e::toString);
    return e;
  }

  @Test
  void theIdentityIsTheCertificatesCommonName() {
    WhoAmIResponse me =
        AuthGrpc.newBlockingStub(channel("n2", "alice")).whoAmI(WhoAmIRequest.getDefaultInstance());
    assertEquals("alice", me.getIdentity());
    assertEquals("certificate", me.getAuthenticatedBy());
    assertTrue(me.getAuthenticationEnabled());
    assertEquals(List.of("client"), me.getRolesList().stream().map(AuthRole::getName).toList());
  }

  @Test
  void aSanUriNamesTheIdentityBeforeTheCommonName() {
    TestCerts.Identity frank =
        TestCerts.issue(
            certs.resolve("san"),
            ca,
            "service-cert-7",
            java.time.Instant.now().minusSeconds(3600),
            java.time.Instant.now().plusSeconds(86400),
            List.of("leasehold://holder/frank"));
    ManagedChannel c =
        Grpc.newChannelBuilder(cluster.node("n1").clientAddress(), TestCerts.credentials(ca, frank))
            .build();
    CHANNELS.add(c);
    assertEquals(
        "frank",
        AuthGrpc.newBlockingStub(c).whoAmI(WhoAmIRequest.getDefaultInstance()).getIdentity());
  }

  @Test
  void aliceCannotAcquireAsBobAndAnEmptyHolderIsHerself() {
    for (String node : cluster.ids()) {
      StatusRuntimeException e =
          refused(
              Status.Code.PERMISSION_DENIED,
              () ->
                  leases(node, "alice")
                      .acquire(Requests.acquire("lock/as-bob-" + node, "bob", 30)));
      assertTrue(e.getStatus().getDescription().contains("holder"), e::toString);
    }
    AcquireResponse own =
        leases("n3", "alice")
            .acquire(
                AcquireRequest.newBuilder()
                    .setName("lock/alice-own")
                    .setTtl(Requests.seconds(30))
                    .build());
    assertEquals(Outcome.GRANTED, own.getOutcome());
    assertEquals("alice", own.getLease().getHolder());
    assertFalse(leases("n1", "alice").get(Requests.get("lock/as-bob-n1")).getFound());
  }

  @Test
  void aliceCannotRenewReleaseOrUpdateBobsLeaseEvenWithItsToken() {
    AcquireResponse bobs = leases("n1", "bob").acquire(Requests.acquire("lock/bobs", "bob", 30));
    assertEquals(Outcome.GRANTED, bobs.getOutcome());
    long token = bobs.getLease().getToken();
    for (String node :
        cluster.ids()) { // followers forward: the core refuses it wherever it came in
      refused(
          Status.Code.PERMISSION_DENIED,
          () -> leases(node, "alice").renew(Requests.renew("lock/bobs", token)));
      refused(
          Status.Code.PERMISSION_DENIED,
          () -> leases(node, "alice").release(Requests.release("lock/bobs", token)));
      refused(
          Status.Code.PERMISSION_DENIED,
          () ->
              leases(node, "alice")
                  .update(
                      UpdateRequest.newBuilder()
                          .setName("lock/bobs")
                          .setToken(token)
                          .setAttributes(
                              io.leasehold.proto.v1.Attributes.newBuilder().setStatus("MINE"))
                          .build()));
    }
    assertEquals(
        0,
        leases("n1", "bob").get(Requests.get("lock/bobs")).getLease().getRenewCount(),
        "alice changed nothing");
    assertEquals(
        Outcome.RELEASED,
        leases("n2", "bob").release(Requests.release("lock/bobs", token)).getOutcome());
  }

  @Test
  void aReaderReadsAndWatchesButCannotAcquire() {
    refused(
        Status.Code.PERMISSION_DENIED,
        () -> leases("n1", "carol").acquire(Requests.acquire("lock/carol", "carol", 30)));
    leases("n2", "carol").list(Requests.list("lock/"));
    Iterator<WatchResponse> watch =
        LeasesGrpc.newBlockingStub(channel("n3", "carol"))
            .withDeadlineAfter(5, TimeUnit.SECONDS)
            .watch(WatchRequest.newBuilder().setPrefix("lock/").build());
    assertTrue(watch.hasNext(), "the watch is served (its first progress message)");
  }

  @Test
  void anIdentityWithoutARoleIsRefusedEverything() {
    refused(Status.Code.PERMISSION_DENIED, () -> leases("n1", "eve").get(Requests.get("lock/x")));
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            ClusterGrpc.newBlockingStub(channel("n1", "eve"))
                .status(io.leasehold.proto.v1.StatusRequest.getDefaultInstance()));
    assertEquals(
        "eve",
        AuthGrpc.newBlockingStub(channel("n1", "eve"))
            .whoAmI(WhoAmIRequest.getDefaultInstance())
            .getIdentity());
  }

  /**
   * Found by the API fuzz test: the refusal quoted the 70,000-character name whole, the trailer
   * outgrew the client's 8 KiB header limit, and the call failed INTERNAL (RST_STREAM).
   */
  @Test
  void aRefusalQuotingAHugeNameStillReachesTheCaller() {
    String huge = "lock/" + "x".repeat(70_000);
    StatusRuntimeException e =
        refused(Status.Code.PERMISSION_DENIED, () -> leases("n1", "eve").get(Requests.get(huge)));
    assertTrue(
        e.getStatus().getDescription().startsWith("eve has no reader role over lock/xxx"),
        e::toString);
    refused(
        Status.Code.PERMISSION_DENIED,
        () -> admin("n2", "alice").revoke(RevokeRequest.newBuilder().setName(huge).build()));
  }

  @Test
  void aClientCannotAdminister() {
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            admin("n1", "alice")
                .setPolicy(SetPolicyRequest.newBuilder().setNamespace("lock").build()));
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            admin("n1", "alice")
                .ban(BanRequest.newBuilder().setHolder("bob").setReason("x").build()));
    refused(
        Status.Code.PERMISSION_DENIED,
        () -> admin("n2", "alice").revoke(RevokeRequest.newBuilder().setName("lock/x").build()));
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            ClusterGrpc.newBlockingStub(channel("n3", "alice"))
                .removeMember(RemoveMemberRequest.newBuilder().setId("n3").build()));
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            auth("n1", "alice")
                .grantRole(
                    GrantRoleRequest.newBuilder().setIdentity("alice").setRole("admin").build()));
    assertEquals(3, cluster.running().size());
  }

  @Test
  void aClientLimitedToMailboxCannotTouchOrWatchOtherNames() {
    refused(
        Status.Code.PERMISSION_DENIED,
        () -> leases("n1", "dave").acquire(Requests.acquire("lock/x", "dave", 30)));
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            LeasesGrpc.newBlockingStub(channel("n2", "dave"))
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .watch(WatchRequest.newBuilder().setPrefix("lock/").build())
                .hasNext());
    StatusRuntimeException everything =
        refused(
            Status.Code.PERMISSION_DENIED,
            () ->
                LeasesGrpc.newBlockingStub(channel("n2", "dave"))
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .watch(WatchRequest.getDefaultInstance())
                    .hasNext());
    assertTrue(
        everything.getStatus().getDescription().contains("whole prefix"),
        "refused, not narrowed: " + everything);
    refused(Status.Code.PERMISSION_DENIED, () -> leases("n3", "dave").list(Requests.list("")));
    assertEquals(
        Outcome.GRANTED,
        leases("n3", "dave").acquire(Requests.acquire("mailbox/7", "dave", 30)).getOutcome());
    assertTrue(
        LeasesGrpc.newBlockingStub(channel("n1", "dave"))
            .withDeadlineAfter(5, TimeUnit.SECONDS)
            .watch(WatchRequest.newBuilder().setPrefix("mailbox/").build())
            .hasNext());
  }

  @Test
  void theLastAdminCannotBeRevokedAndTheAuditHistoryRecordsWhoDidWhat() {
    StatusRuntimeException last =
        refused(
            Status.Code.FAILED_PRECONDITION,
            () ->
                auth("n2", "root")
                    .revokeRole(
                        RevokeRoleRequest.newBuilder()
                            .setIdentity("root")
                            .setRole("admin")
                            .build()));
    assertTrue(last.getStatus().getDescription().contains("last identity"), last::toString);
    assertEquals(
        List.of("admin"),
        auth("n1", "root")
            .listGrants(ListGrantsRequest.newBuilder().setIdentity("root").build())
            .getGrants(0)
            .getRolesList(),
        "the initial admin was granted the role in the log");
    refused(
        Status.Code.PERMISSION_DENIED,
        () ->
            admin("n3", "bob")
                .ban(BanRequest.newBuilder().setHolder("alice").setReason("x").build()));

    TestCluster.await(
        "the refused ban is in the audit history",
        Duration.ofSeconds(20),
        () ->
            auth("n1", "root")
                .audit(AuditRequest.newBuilder().setIdentity("bob").build())
                .getEntriesList()
                .stream()
                .anyMatch(
                    e ->
                        e.getAction().equals("ban")
                            && e.getOutcome().startsWith("denied: ")
                            && e.getDetail().equals("method=leasehold.v1.Admin/Ban")));
    List<AuditEntry> audit =
        auth("n1", "root").audit(AuditRequest.getDefaultInstance()).getEntriesList();
    assertTrue(
        audit.stream()
            .anyMatch(
                e ->
                    e.getAction().equals("grant_role")
                        && e.getTarget().equals("dave")
                        && e.getIdentity().equals("root")
                        && e.getOutcome().equals("ok")),
        audit::toString);
    assertTrue(
        audit.stream()
            .anyMatch(
                e -> e.getAction().equals("revoke_role") && e.getOutcome().startsWith("refused: ")),
        audit::toString);
    assertTrue(
        audit.stream()
            .anyMatch(e -> e.getAction().equals("bootstrap_admin") && e.getTarget().equals("root")),
        audit::toString);
    refused(
        Status.Code.PERMISSION_DENIED,
        () -> auth("n1", "alice").audit(AuditRequest.getDefaultInstance()));
  }

  /**
   * The follower is held back from the grant (its appends wait in its traffic hook), so its own
   * roles still refuse erin when her acquire arrives: the request must wait for the follower to
   * catch up, not be refused on what the follower happens to have applied.
   */
  @Test
  void aGrantTheLeaderAnsweredIsInForceOnAFollowerThatHasNotAppliedIt() throws Exception {
    LeaseholdNode leader = cluster.awaitLeader();
    LeaseholdNode follower = cluster.followers().get(0);
    PeerTraffic traffic = follower.diagnostics().peerTraffic();
    traffic.rule(a -> a.heartbeat() ? PeerTraffic.Verdict.DELIVER : PeerTraffic.Verdict.HOLD);
    try {
      auth(leader.id(), "root")
          .grantRole(GrantRoleRequest.newBuilder().setIdentity("erin").setRole("client").build());
      long granted = leader.consensus().commitIndex();
      assertFalse(
          follower.auth().access().access("erin", "root").onName(Permission.CLIENT, "lock/erin"),
          "the follower has not applied the grant");

      ListenableFuture<AcquireResponse> acquire =
          LeasesGrpc.newFutureStub(channel(follower.id(), "erin"))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .acquire(Requests.acquire("lock/erin", "erin", 30));
      // The follower's barrier, proposed once its own roles refused the request, commits on the
      // leader and the other follower while this one still cannot apply it.
      TestCluster.await(
          "the follower's barrier committed",
          Duration.ofSeconds(20),
          () -> leader.consensus().commitIndex() > granted || acquire.isDone());
      assertFalse(
          acquire.isDone(),
          () -> "the request waits for the follower to catch up: " + outcome(acquire));
      traffic.rule(null);
      traffic.takeHeld().forEach(PeerTraffic.Held::deliver);

      AcquireResponse granted2 = acquire.get(30, TimeUnit.SECONDS);
      assertEquals(Outcome.GRANTED, granted2.getOutcome(), granted2::toString);
    } finally {
      traffic.rule(null);
      traffic.takeHeld().forEach(PeerTraffic.Held::deliver);
    }
  }

  private static String outcome(ListenableFuture<?> done) {
    try {
      return String.valueOf(done.get());
    } catch (Exception e) {
      return e.toString();
    }
  }
}
