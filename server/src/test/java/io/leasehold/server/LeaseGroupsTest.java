package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.Requests.list;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireManyResult;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CloseSessionResponse;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.CreateSessionResponse;
import io.leasehold.proto.v1.DeadlineSource;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetPolicyResponse;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.GetSessionResponse;
import io.leasehold.proto.v1.GroupCopy;
import io.leasehold.proto.v1.GroupMember;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.HistoryResponse;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegisterResponse;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.ResolveResponse;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RevokeResponse;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.backup.NodeBackup;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.raft.PeerTraffic;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lease groups hosted beside the meta group on the same Ratis server (docs/design/multi-raft.md):
 * each elects on its own, its leader is the member its priority names, and a restarted member takes
 * its groups back; namespaces are placed on them by their first write, and every node routes a
 * namespace's commands and reads to its group.
 */
class LeaseGroupsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void eachMemberLeadsTheLeaseGroupItsPriorityNamesAndTakesItBackAfterARestart() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3).metricsPort(0));
    // The meta group's priority names the member after the last lease group's: 3 mod 3, n1.
    await(
        () -> "lease group k led by n<k>, the meta group by n1, on every member: " + views(),
        WAIT,
        () ->
            cluster.ids().stream()
                .allMatch(
                    id ->
                        leaders(id).equals(Map.of(1, "n1", 2, "n2", 3, "n3"))
                            && metaLeader(id).equals("n1")));
    StatusResponse n1 = status("n1");
    assertEquals(
        List.of(0, 1, 2, 3),
        n1.getGroupsList().stream().map(GroupStatus::getNumber).toList(),
        "the meta group first, then the lease groups by number");
    assertEquals(n1.getGroupId(), n1.getGroups(0).getGroupId(), "group 0 is the meta group");
    Set<String> ids = new HashSet<>();
    for (GroupStatus g : n1.getGroupsList()) {
      assertTrue(ids.add(g.getGroupId()), "group ids are distinct: " + n1);
      assertEquals(
          List.of("n1", "n2", "n3"),
          g.getMembersList().stream().map(GroupMember::getId).toList(),
          "every group sits on the three members");
      assertEquals(
          g.getNumber() == 0 ? "n1" : "n" + g.getNumber(),
          g.getMembersList().stream()
              .filter(m -> m.getPriority() == 1)
              .map(GroupMember::getId)
              .collect(Collectors.joining(",")),
          "one member of group " + g.getNumber() + " has the higher priority");
      if (g.getNumber() > 0) {
        assertTrue(
            Files.isDirectory(
                dir.resolve("n1").resolve("groups").resolve(g.getGroupId()).resolve("state")),
            "its RocksDB is its own");
      }
    }
    // The metrics carry a group label: n1 leads lease group 1 and follows 2 and 3.
    String metrics = TestCluster.httpGet(cluster.node("n1"), "/metrics").body();
    assertTrue(metrics.contains("leasehold_raft_group_leader{group=\"1\"} 1.0"), metrics);
    assertTrue(metrics.contains("leasehold_raft_group_leader{group=\"2\"} 0.0"), metrics);
    assertTrue(metrics.contains("leasehold_raft_group_leader{group=\"3\"} 0.0"), metrics);
    assertTrue(metrics.contains("leasehold_raft_group_commit_index{group=\"0\"}"), metrics);
    // The fault hook tells the groups' AppendEntries apart: n2 hears each group it follows.
    Set<String> followed =
        status("n2").getGroupsList().stream()
            .filter(g -> g.getRole() == Role.FOLLOWER)
            .map(GroupStatus::getGroupId)
            .collect(Collectors.toSet());
    assertTrue(followed.size() >= 2, followed::toString);
    Set<String> heard = java.util.concurrent.ConcurrentHashMap.newKeySet();
    PeerTraffic traffic = cluster.node("n2").diagnostics().peerTraffic();
    traffic.rule(
        a -> {
          heard.add(a.group());
          return PeerTraffic.Verdict.DELIVER;
        });
    try {
      await(
          () -> "n2 hears AppendEntries of every group it follows " + followed + ": " + heard,
          WAIT,
          () -> heard.containsAll(followed));
    } finally {
      traffic.rule(null);
    }
    // The meta group goes on serving writes beside them.
    assertEquals(
        Outcome.GRANTED,
        cluster.leases("n3").acquire(acquire("lock/beside-groups", "runner-1", 30)).getOutcome());

    cluster.stopNode("n2");
    await(
        () -> "lease group 2 led by n1 or n3 while n2 is down: " + views(),
        WAIT,
        () -> {
          String leader = leaders("n1").get(2);
          return leader != null && !leader.equals("n2") && leader.equals(leaders("n3").get(2));
        });
    cluster.startNode("n2");
    await(
        () -> "n2 leads lease group 2 again: " + views(),
        WAIT,
        () ->
            cluster.ids().stream()
                .allMatch(id -> leaders(id).equals(Map.of(1, "n1", 2, "n2", 3, "n3"))));
    assertEquals(4, status("n2").getGroupsCount(), "the restart recovered every group from disk");
  }

  @Test
  void namespacesArePlacedOnLeaseGroupsAndEveryNodeRoutesTheirCommands() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3).metricsPort(0));
    awaitGroupsPlaceable();

    // First writes place each namespace on the lease group with the fewest, from any node.
    AcquireResponse alpha = cluster.leases("n1").acquire(acquire("alpha/a", "runner-1", 30));
    AcquireResponse beta = cluster.leases("n2").acquire(acquire("beta/b", "runner-2", 30));
    AcquireResponse gamma = cluster.leases("n3").acquire(acquire("gamma/c", "runner-3", 30));
    for (AcquireResponse r : List.of(alpha, beta, gamma)) {
      assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
    }
    awaitPlaced(cluster.running(), "alpha", "beta", "gamma");
    LeaseCore meta = cluster.node("n2").stateMachine().core();
    Map<String, Integer> placed = new java.util.TreeMap<>();
    for (String ns : List.of("alpha", "beta", "gamma")) {
      PlacementResponse p = meta.placement(ns).orElseThrow();
      placed.put(ns, p.getGroup());
      assertEquals(1, p.getEpoch(), p::toString);
      assertTrue(p.getFloor() > 0, () -> "a floor above the meta group's tokens: " + p);
    }
    assertEquals(
        Set.of(1, 2, 3), new HashSet<>(placed.values()), "one namespace a group: " + placed);
    long floor = meta.placement("alpha").orElseThrow().getFloor();
    assertTrue(
        alpha.getLease().getToken() >= floor,
        "the lease group's token "
            + alpha.getLease().getToken()
            + " is at or above the floor "
            + floor);

    // The meta group applies no command for a namespace placed elsewhere.
    LogReply direct =
        cluster
            .node("n1")
            .replicator()
            .propose(LogCommand.newBuilder().setAcquire(acquire("alpha/z", "runner-9", 30)).build())
            .get(30, TimeUnit.SECONDS);
    assertEquals("alpha", direct.getWrongGroup().getNamespace(), direct::toString);

    // Reads from any node find the lease in its group, with its token.
    for (String id : cluster.ids()) {
      GetResponse got = cluster.leases(id).get(get("beta/b"));
      assertTrue(got.getFound(), got::toString);
      assertEquals(beta.getLease().getToken(), got.getLease().getToken());
      // The deadline is the one the lease group's leader keeps, asked of that leader.
      assertEquals(DeadlineSource.DEADLINE_SOURCE_LEADER, got.getLease().getDeadlineSource(), id);
    }
    List<String> listed =
        cluster.leases("n1").list(list("")).getLeasesList().stream()
            .map(io.leasehold.proto.v1.Lease::getName)
            .toList();
    assertEquals(List.of("alpha/a", "beta/b", "gamma/c"), listed, "a list spans every group");

    // One Renew across three groups: split, sent to each, joined in the caller's order.
    RenewResponse renewed =
        cluster
            .leases("n3")
            .renew(
                RenewRequest.newBuilder()
                    .addItems(
                        RenewItem.newBuilder()
                            .setName("gamma/c")
                            .setToken(gamma.getLease().getToken()))
                    .addItems(
                        RenewItem.newBuilder()
                            .setName("alpha/a")
                            .setToken(alpha.getLease().getToken()))
                    .addItems(
                        RenewItem.newBuilder()
                            .setName("beta/b")
                            .setToken(beta.getLease().getToken()))
                    .build());
    assertEquals(
        List.of("gamma/c", "alpha/a", "beta/b"),
        renewed.getResultsList().stream().map(RenewResult::getName).toList());
    assertTrue(
        renewed.getResultsList().stream().allMatch(r -> r.getOutcome() == Outcome.RENEWED),
        renewed::toString);

    // An AcquireMany across groups: each name decided in its group; all or nothing refused.
    AcquireManyResponse many =
        cluster
            .leases("n2")
            .acquireMany(
                AcquireManyRequest.newBuilder()
                    .setHolder("runner-4")
                    .setTtl(Requests.seconds(30))
                    .addItems(AcquireManyItem.newBuilder().setName("beta/m1"))
                    .addItems(AcquireManyItem.newBuilder().setName("alpha/m2"))
                    .addItems(AcquireManyItem.newBuilder().setName("alpha/a"))
                    .build());
    assertEquals(
        List.of(Outcome.GRANTED, Outcome.GRANTED, Outcome.CONFLICT),
        many.getResultsList().stream().map(AcquireManyResult::getOutcome).toList(),
        many::toString);
    assertEquals(2, many.getGranted());
    StatusRuntimeException refused =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .leases("n2")
                    .acquireMany(
                        AcquireManyRequest.newBuilder()
                            .setHolder("runner-4")
                            .setTtl(Requests.seconds(30))
                            .setAllOrNothing(true)
                            .addItems(AcquireManyItem.newBuilder().setName("beta/m3"))
                            .addItems(AcquireManyItem.newBuilder().setName("gamma/m4"))
                            .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
    assertTrue(refused.getStatus().getDescription().contains("all_or_nothing"), refused::toString);

    // The lease group's own ticker, on its leader, expires its leases.
    AcquireResponse brief = cluster.leases("n1").acquire(acquire("delta/brief", "runner-5", 2));
    assertEquals(Outcome.GRANTED, brief.getOutcome(), brief::toString);
    // Answered once the meta group's leader applied the placement; n1 applies it in its turn.
    await(
        "n1 applies delta's placement on a lease group",
        WAIT,
        () ->
            cluster
                .node("n1")
                .stateMachine()
                .core()
                .placement("delta")
                .map(p -> p.getGroup() > 0)
                .orElse(false));
    await(
        "delta/brief expires in its lease group",
        WAIT,
        () -> !cluster.leases("n3").get(get("delta/brief")).getFound());

    // Released through a node that does not lead the group.
    assertEquals(
        Outcome.RELEASED,
        cluster.leases("n3").release(release("alpha/a", alpha.getLease().getToken())).getOutcome());
    assertFalse(cluster.leases("n2").get(get("alpha/a")).getFound());

    // A node's lease metrics count every group it hosts: beta/b, beta/m1, gamma/c, alpha/m2.
    for (LeaseholdNode n : cluster.running()) {
      await(
          () -> n.config().id() + " counts the leases of every group: " + leaseMetrics(n),
          WAIT,
          () -> {
            String m = leaseMetrics(n);
            return m.contains("leasehold_leases_live 4.0")
                && m.contains("leasehold_leases_live_by_namespace{namespace=\"beta\"} 2.0")
                && m.contains("leasehold_leases_expired_total 1.0");
          });
    }
  }

  private static String leaseMetrics(LeaseholdNode n) {
    return TestCluster.httpGet(n, "/metrics")
        .body()
        .lines()
        .filter(l -> l.startsWith("leasehold_leases_"))
        .collect(Collectors.joining("\n"));
  }

  @Test
  void policiesBansAndRevocationsReachTheLeaseGroups() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3));
    awaitGroupsPlaceable();
    AcquireResponse first = cluster.leases("n1").acquire(acquire("alpha/a", "runner-1", 30));
    assertEquals(Outcome.GRANTED, first.getOutcome(), first::toString);
    awaitPlaced(cluster.running(), "alpha");
    int group =
        cluster.node("n1").stateMachine().core().placement("alpha").orElseThrow().getGroup();
    assertTrue(group > 0, "alpha lives in a lease group");

    // A policy is in force in the lease group once the call is answered, through any node.
    cluster
        .admin("n3")
        .setPolicy(
            SetPolicyRequest.newBuilder()
                .setNamespace("alpha")
                .setPolicy(Policy.newBuilder().setMaxTtl(Requests.seconds(60)))
                .build());
    AcquireResponse tooLong = cluster.leases("n2").acquire(acquire("alpha/b", "runner-1", 600));
    assertEquals(Outcome.REJECTED, tooLong.getOutcome(), tooLong::toString);
    assertEquals(RejectReason.TTL_OUT_OF_RANGE, tooLong.getRejection().getReason());

    // A ban ends the holder's leases in the lease group before it is answered.
    AcquireResponse held = cluster.leases("n2").acquire(acquire("alpha/c", "mallory", 30));
    assertEquals(Outcome.GRANTED, held.getOutcome(), held::toString);
    cluster
        .admin("n2")
        .ban(
            BanRequest.newBuilder()
                .setHolder("mallory")
                .setReason("abuse")
                .setDuration(Requests.seconds(3))
                .build());
    for (String id : cluster.ids()) {
      assertFalse(cluster.leases(id).get(get("alpha/c")).getFound(), id);
    }
    AcquireResponse banned = cluster.leases("n1").acquire(acquire("alpha/d", "mallory", 30));
    assertEquals(RejectReason.BANNED, banned.getRejection().getReason(), banned::toString);
    // The meta group's leader lifts the timed ban; the lift is copied to the lease group.
    await(
        "the lift of mallory's ban reaches the lease group",
        WAIT,
        () ->
            cluster.leases("n3").acquire(acquire("alpha/d", "mallory", 30)).getOutcome()
                == Outcome.GRANTED);
    for (LeaseholdNode n : cluster.running()) {
      await(
          n.config().id() + " applies the newest copy in lease group " + group,
          WAIT,
          () -> copiedVersion(n, group) == n.stateMachine().core().globalVersion());
    }

    // Every node reports each group's copy of the global state: all at the meta group's version.
    for (String id : cluster.ids()) {
      await(
          () -> id + " reports every group at the meta group's version: " + status(id),
          WAIT,
          () -> {
            List<GroupStatus> groups = status(id).getGroupsList();
            return groups.size() == 4
                && groups.get(0).getGlobalVersion() > 0
                && groups.stream()
                    .allMatch(g -> g.getGlobalVersion() == groups.get(0).getGlobalVersion());
          });
      // A policy's answer says which copy the groups it governs hold there: alpha's group for
      // alpha, every lease group for the default policy, none for a namespace the meta group holds.
      long metaVersion = status(id).getGroups(0).getGlobalVersion();
      GetPolicyResponse alpha =
          cluster.admin(id).getPolicy(GetPolicyRequest.newBuilder().setNamespace("alpha").build());
      assertEquals(metaVersion, alpha.getGlobalVersion(), alpha::toString);
      assertEquals(
          List.of(GroupCopy.newBuilder().setGroup(group).setGlobalVersion(metaVersion).build()),
          alpha.getCopiesList());
      GetPolicyResponse defaults =
          cluster.admin(id).getPolicy(GetPolicyRequest.newBuilder().setNamespace("").build());
      assertEquals(
          List.of(1, 2, 3),
          defaults.getCopiesList().stream().map(GroupCopy::getGroup).toList(),
          defaults::toString);
      assertTrue(
          defaults.getCopiesList().stream().allMatch(c -> c.getGlobalVersion() == metaVersion),
          defaults::toString);
      GetPolicyResponse unplaced =
          cluster
              .admin(id)
              .getPolicy(GetPolicyRequest.newBuilder().setNamespace("nowhere").build());
      assertEquals(metaVersion, unplaced.getGlobalVersion());
      assertEquals(0, unplaced.getCopiesCount(), unplaced::toString);
    }

    // Revoke by name ends the lease in its group, through a node that does not lead it.
    RevokeResponse revoked =
        cluster
            .admin("n3")
            .revoke(RevokeRequest.newBuilder().setName("alpha/a").setReason("ops").build());
    assertEquals(Outcome.REVOKED, revoked.getOutcome(), revoked::toString);
    assertEquals(first.getLease().getToken(), revoked.getLease().getToken());
    assertFalse(cluster.leases("n1").get(get("alpha/a")).getFound());
    assertEquals(
        Outcome.NOT_HELD,
        cluster
            .admin("n1")
            .revoke(RevokeRequest.newBuilder().setName("unplaced/x").setReason("ops").build())
            .getOutcome(),
        "a revocation places nothing");
    assertTrue(
        cluster.node("n1").stateMachine().core().placement("unplaced").isEmpty(),
        "a revocation places nothing");
  }

  /**
   * A lease group serves its namespaces as the meta group serves its own. A session lives in the
   * meta group and has a part in each lease group a lease of it lives in
   * (docs/design/multi-raft.md, "Sessions"): one keep-alive keeps leases in several groups, a close
   * ends them all before it is answered, and a session that expires ends its leases in every group.
   * Histories are read from the names' groups, a blocking Resolve of a service in a lease group
   * answers on the next change there, and each group's event history is compacted within the node's
   * bounds.
   */
  @Test
  void sessionsRegistryHistoriesAndWatchesFollowTheirNamespacesIntoLeaseGroups() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3).history(20, Duration.ofHours(1)));
    awaitGroupsPlaceable();
    long session = createSession("n3", "proxy-1", 3);

    // First attachments place alpha and beta on lease groups, through nodes that lead neither.
    for (String name : List.of("alpha/a", "beta/b")) {
      AcquireResponse r = cluster.leases("n3").acquire(attached(name, "proxy-1", session));
      assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
      assertEquals(session, r.getLease().getSession());
    }
    LeaseCore meta = cluster.node("n3").stateMachine().core();
    awaitPlaced(List.of(cluster.node("n3")), "alpha", "beta");
    int alphaGroup = meta.placement("alpha").orElseThrow().getGroup();
    int betaGroup = meta.placement("beta").orElseThrow().getGroup();
    assertTrue(alphaGroup > 0 && betaGroup > 0 && alphaGroup != betaGroup, "two lease groups");

    // One keep-alive a second, through every node in turn, keeps both for three TTLs.
    long start = System.nanoTime();
    for (int k = 0; k < 9; k++) {
      long due = start + TimeUnit.SECONDS.toNanos(k);
      await("keep-alive " + k + " is due", WAIT, () -> System.nanoTime() - due >= 0);
      KeepAliveResult kept =
          cluster
              .leases(cluster.ids().get(k % 3))
              .keepAlive(KeepAliveRequest.newBuilder().addSessions(session).build())
              .getResults(0);
      assertEquals(Outcome.RENEWED, kept.getOutcome(), kept::toString);
      assertEquals(2, kept.getLeases(), () -> "the leases of every group: " + kept);
    }
    for (String name : List.of("alpha/a", "beta/b")) {
      assertTrue(cluster.leases("n1").get(get(name)).getFound(), name + " outlived its TTL");
    }
    GetSessionResponse got =
        cluster.leases("n2").getSession(GetSessionRequest.newBuilder().setSession(session).build());
    assertEquals(List.of("alpha/a", "beta/b"), got.getLeasesList(), got::toString);
    assertEquals(2, got.getSession().getLeases());

    // A close ends both before it is answered.
    CloseSessionResponse closed =
        cluster
            .leases("n2")
            .closeSession(CloseSessionRequest.newBuilder().setSession(session).build());
    assertEquals(Outcome.CLOSED, closed.getOutcome());
    assertEquals(2, closed.getLeasesEnded(), closed::toString);
    for (String name : List.of("alpha/a", "beta/b")) {
      assertFalse(cluster.leases("n1").get(get(name)).getFound(), name + " ended with its session");
    }
    // Their history is kept in their groups; a read by name goes there, one by holder to all.
    for (String name : List.of("alpha/a", "beta/b")) {
      HistoryResponse byName =
          cluster.admin("n1").history(HistoryRequest.newBuilder().setName(name).build());
      assertEquals(
          List.of(Event.Reason.REASON_SESSION_CLOSED),
          byName.getLeasesList().stream().map(EndedLease::getReason).toList(),
          byName::toString);
    }
    HistoryResponse byHolder =
        cluster.admin("n2").history(HistoryRequest.newBuilder().setHolder("proxy-1").build());
    assertEquals(
        Set.of("alpha/a", "beta/b"),
        byHolder.getLeasesList().stream().map(EndedLease::getName).collect(Collectors.toSet()),
        byHolder::toString);
    AcquireResponse late = cluster.leases("n1").acquire(attached("alpha/z", "proxy-1", session));
    assertEquals(RejectReason.NO_SESSION, late.getRejection().getReason(), late::toString);

    // A session nobody keeps alive expires in the meta group, and its leases in the lease group.
    long lapsed = createSession("n1", "proxy-2", 2);
    AcquireResponse held = cluster.leases("n2").acquire(attached("alpha/b", "proxy-2", lapsed));
    assertEquals(Outcome.GRANTED, held.getOutcome(), held::toString);
    await(
        "alpha/b ends with its session, and no node holds the session or a part of it",
        WAIT,
        () ->
            !cluster.leases("n3").get(get("alpha/b")).getFound()
                && cluster.running().stream()
                    .allMatch(
                        n ->
                            n.stateMachine().core().sessionEnded(lapsed)
                                && n.consensus()
                                    .leaseGroupCores()
                                    .get(alphaGroup)
                                    .storedSession(lapsed)
                                    .isEmpty()));

    // The registry's namespace, in a lease group of its own: a blocking Resolve answers on the
    // next change there, and the group's event history is kept within the node's bounds.
    RegisterResponse first =
        cluster
            .registry("n1")
            .register(
                RegisterRequest.newBuilder()
                    .setService("orders")
                    .setInstance("i-1")
                    .setAddress("10.0.0.1:80")
                    .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                    .build());
    awaitPlaced(cluster.running(), "service");
    int group =
        cluster.node("n1").stateMachine().core().placement("service").orElseThrow().getGroup();
    assertTrue(group > 0, "the registry's namespace lives in a lease group");
    ResolveResponse read =
        cluster.registry("n2").resolve(ResolveRequest.newBuilder().setService("orders").build());
    assertEquals(first.getRevision(), read.getVersion(), "the version is the group's revision");

    var waiting =
        RegistryGrpc.newFutureStub(cluster.channel("n2"))
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .resolve(
                ResolveRequest.newBuilder()
                    .setService("orders")
                    .setWaitForVersion(read.getVersion())
                    .setWait(com.google.protobuf.Duration.newBuilder().setSeconds(50))
                    .build());
    await(
        "the blocking Resolve is held on n2",
        WAIT,
        () -> cluster.node("n2").waitingResolves() == 1);
    RegisterResponse second =
        cluster
            .registry("n3")
            .register(
                RegisterRequest.newBuilder()
                    .setService("orders")
                    .setInstance("i-2")
                    .setAddress("10.0.0.2:80")
                    .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                    .build());
    ResolveResponse changed = waiting.get(10, TimeUnit.SECONDS);
    assertEquals(second.getRevision(), changed.getVersion(), "woken by the change, not the wait");

    // A watch of a namespace no write has placed places it, and follows its lease group. A list
    // of the namespace returns that group's revision: a watch from the next one, on another node,
    // misses nothing and repeats nothing. A watch across namespaces is refused.
    try (Watching gamma = new Watching(cluster.channel("n2"), "gamma/", 0)) {
      awaitPlaced(cluster.running(), "gamma");
      int gammaGroup = meta.placement("gamma").orElseThrow().getGroup();
      assertTrue(gammaGroup > 0, "the watched namespace lives in a lease group");
      gamma.awaitStarted();
      AcquireResponse x = cluster.leases("n3").acquire(acquire("gamma/x", "runner", 30));
      Event seen = gamma.nextEvent();
      assertEquals(
          List.of(Event.Type.ACQUIRED, "gamma/x"), List.of(seen.getType(), seen.getName()));
      assertEquals(x.getRevision(), seen.getRevision(), "the group's revision");

      long listed = cluster.leases("n1").list(list("gamma/")).getRevision();
      assertTrue(listed >= x.getRevision(), "the list's revision is the group's");
      AcquireResponse y = cluster.leases("n1").acquire(acquire("gamma/y", "runner", 30));
      try (Watching resumed = new Watching(cluster.channel("n3"), "gamma/", listed + 1)) {
        Event next = resumed.nextEvent();
        assertEquals("gamma/y", next.getName(), "from the list's revision on, nothing repeated");
        assertEquals(y.getRevision(), next.getRevision());
      }
      assertEquals("gamma/y", gamma.nextEvent().getName());
      cluster.leases("n1").release(release("gamma/x", x.getLease().getToken()));
      cluster.leases("n1").release(release("gamma/y", y.getLease().getToken()));
      assertEquals("gamma/x", gamma.nextEvent().getName());
      assertEquals("gamma/y", gamma.nextEvent().getName());
    }

    // A watch of every name follows every group on one stream: each message names its group and
    // carries a resume token. Resumed from a token on another node, it misses nothing and
    // repeats nothing in any group; so does one from a list's token.
    ByteString token;
    try (Watching everything = new Watching(cluster.channel("n1"), "", 0)) {
      everything.awaitStarted();
      AcquireResponse a = cluster.leases("n2").acquire(acquire("alpha/w", "runner", 60));
      AcquireResponse g = cluster.leases("n3").acquire(acquire("gamma/z", "runner", 60));
      Map<String, WatchResponse> seen = everything.eventMessages(2);
      assertEquals(Set.of("alpha/w", "gamma/z"), seen.keySet());
      assertEquals(alphaGroup, seen.get("alpha/w").getGroup());
      assertEquals(a.getRevision(), seen.get("alpha/w").getEvents(0).getRevision());
      assertEquals(
          meta.placement("gamma").orElseThrow().getGroup(), seen.get("gamma/z").getGroup());
      assertEquals(g.getRevision(), seen.get("gamma/z").getEvents(0).getRevision());
      token = everything.lastToken();
      assertFalse(token.isEmpty(), "every message carries a resume token");
    }
    cluster.leases("n3").acquire(acquire("alpha/u", "runner", 60));
    cluster.leases("n1").acquire(acquire("gamma/v", "runner", 60));
    try (Watching resumed = new Watching(cluster.channel("n3"), "", token)) {
      assertEquals(Set.of("alpha/u", "gamma/v"), resumed.eventMessages(2).keySet());
    }
    ListResponse listedAll = cluster.leases("n2").list(list(""));
    assertFalse(listedAll.getResumeToken().isEmpty(), "a list across groups returns a token");
    cluster.leases("n2").acquire(acquire("beta/t", "runner", 60));
    try (Watching fromList = new Watching(cluster.channel("n1"), "", listedAll.getResumeToken())) {
      assertEquals(Set.of("beta/t"), fromList.eventMessages(1).keySet());
    }
    try (Watching byRevision = new Watching(cluster.channel("n1"), "", 5)) {
      StatusRuntimeException refused = byRevision.awaitError();
      assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode());
      assertTrue(refused.getStatus().getDescription().contains("resume_token"), refused::toString);
    }
    try (Watching both =
        new Watching(
            cluster.channel("n1"),
            WatchRequest.newBuilder().setStartRevision(5).setResumeToken(token))) {
      StatusRuntimeException refused = both.awaitError();
      assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
      assertTrue(refused.getStatus().getDescription().contains("resume_token"), refused::toString);
    }

    // Forty grants and releases in the group: its leader keeps its history to 20 events.
    for (int i = 0; i < 20; i++) {
      AcquireResponse a = cluster.leases("n1").acquire(acquire("service/churn-" + i, "runner", 30));
      assertEquals(Outcome.GRANTED, a.getOutcome(), a::toString);
      cluster.leases("n1").release(release("service/churn-" + i, a.getLease().getToken()));
    }
    await(
        () ->
            "lease group "
                + group
                + " compacted its history on every node: "
                + cluster.running().stream()
                    .map(n -> n.consensus().leaseGroupCores().get(group).history().toString())
                    .toList(),
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(
                    n -> {
                      var h = n.consensus().leaseGroupCores().get(group).history();
                      return h.getCompactRevision() > 0 && h.getCount() <= 20;
                    }));
  }

  /** A Watch stream whose messages and end are queued for the test to take. */
  private static final class Watching implements AutoCloseable {
    private final BlockingQueue<Object> received = new LinkedBlockingQueue<>();
    private final ClientCall<WatchRequest, WatchResponse> call;
    private ByteString lastToken = ByteString.EMPTY;

    Watching(io.grpc.Channel channel, String prefix, long startRevision) {
      this(channel, WatchRequest.newBuilder().setPrefix(prefix).setStartRevision(startRevision));
    }

    Watching(io.grpc.Channel channel, String prefix, ByteString resumeToken) {
      this(channel, WatchRequest.newBuilder().setPrefix(prefix).setResumeToken(resumeToken));
    }

    Watching(io.grpc.Channel channel, WatchRequest.Builder request) {
      call = channel.newCall(LeasesGrpc.getWatchMethod(), io.grpc.CallOptions.DEFAULT);
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(WatchResponse message) {
              received.add(message);
              call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              received.add(status.asRuntimeException(trailers));
            }
          },
          new Metadata());
      call.sendMessage(request.build());
      call.halfClose();
      call.request(1);
    }

    private Object take() throws InterruptedException {
      Object o = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertTrue(o != null, "a watch message or its end within " + WAIT);
      if (o instanceof WatchResponse r) {
        lastToken = r.getResumeToken();
      }
      return o;
    }

    /** The resume token of the last message taken. */
    ByteString lastToken() {
      return lastToken;
    }

    /**
     * The next {@code count} messages with events, by their event's name; fails on a name seen
     * twice.
     */
    Map<String, WatchResponse> eventMessages(int count) throws InterruptedException {
      Map<String, WatchResponse> byName = new java.util.HashMap<>();
      while (byName.size() < count) {
        Object o = take();
        assertTrue(o instanceof WatchResponse, () -> "an event, not the stream's end: " + o);
        WatchResponse r = (WatchResponse) o;
        for (Event e : r.getEventsList()) {
          assertEquals(1, r.getEventsCount(), r::toString);
          assertTrue(byName.put(e.getName(), r) == null, () -> "seen twice: " + e);
        }
      }
      return byName;
    }

    /** Waits for the first message, which says where a watch from now starts. */
    WatchResponse awaitStarted() throws InterruptedException {
      Object o = take();
      assertTrue(o instanceof WatchResponse, () -> "the watch started: " + o);
      return (WatchResponse) o;
    }

    /** The next event, skipping progress messages. */
    Event nextEvent() throws InterruptedException {
      while (true) {
        Object o = take();
        assertTrue(o instanceof WatchResponse, () -> "an event, not the stream's end: " + o);
        WatchResponse r = (WatchResponse) o;
        if (r.getEventsCount() > 0) {
          assertEquals(1, r.getEventsCount(), r::toString);
          return r.getEvents(0);
        }
      }
    }

    StatusRuntimeException awaitError() throws InterruptedException {
      while (true) {
        Object o = take();
        if (o instanceof StatusRuntimeException e) {
          return e;
        }
      }
    }

    @Override
    public void close() {
      call.cancel("test done", null);
    }
  }

  private long createSession(String node, String holder, long ttlSeconds) {
    CreateSessionResponse r =
        cluster
            .leases(node)
            .createSession(
                CreateSessionRequest.newBuilder()
                    .setHolder(holder)
                    .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(ttlSeconds))
                    .build());
    assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
    return r.getSession().getId();
  }

  private static AcquireRequest attached(String name, String holder, long session) {
    return AcquireRequest.newBuilder().setName(name).setHolder(holder).setSession(session).build();
  }

  /**
   * Waits until each lease group is led by the member its priority names and every member applies
   * log format 6, so that first writes place their namespaces on lease groups.
   */
  private void awaitGroupsPlaceable() {
    await(
        () -> "every lease group led by the member its priority names: " + views(),
        WAIT,
        () ->
            cluster.ids().stream()
                .allMatch(id -> leaders(id).equals(Map.of(1, "n1", 2, "n2", 3, "n3"))));
    await(
        "the meta group applies log format 6 on every member",
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(n -> n.consensus().logFormat() >= LogFormat.GROUPS));
  }

  /**
   * Waits until each of {@code nodes} has applied the placement of every one of {@code namespaces}:
   * a write is answered once the meta group's leader applied the placement it made, and the other
   * nodes apply it in their turn.
   */
  private static void awaitPlaced(List<LeaseholdNode> nodes, String... namespaces) {
    await(
        () ->
            "placements of "
                + List.of(namespaces)
                + " applied on "
                + nodes.stream().map(LeaseholdNode::id).toList(),
        WAIT,
        () ->
            nodes.stream()
                .allMatch(
                    n ->
                        Stream.of(namespaces)
                            .allMatch(ns -> n.stateMachine().core().placement(ns).isPresent())));
  }

  /** The version of the global state lease group {@code group} holds on node {@code n}. */
  private static long copiedVersion(LeaseholdNode n, int group) {
    LeaseCore core = n.consensus().leaseGroupCores().get(group);
    return core == null ? -1 : core.globalVersion();
  }

  @Test
  void membersJoinAndLeaveEveryLeaseGroupAndTheLeadershipsSpreadOverThem() throws Exception {
    // n4 joins with the cluster's lease groups; n5 without them.
    cluster = TestCluster.start(3, dir, (id, b) -> id.equals("n5") ? b : b.leaseGroups(3));
    awaitGroupsPlaceable();
    List<String> namespaces = List.of("alpha", "beta", "gamma");
    for (String ns : namespaces) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases("n1").acquire(acquire(ns + "/before", "h", 60)).getOutcome(),
          ns);
    }
    awaitPlaced(List.of(cluster.node("n1")), namespaces.toArray(String[]::new));
    assertEquals(
        Set.of(1, 2, 3),
        cluster.node("n1").consensus().groups().stream()
            .filter(g -> !g.namespaces().isEmpty())
            .map(Consensus.GroupStatus::number)
            .collect(Collectors.toSet()),
        "one namespace on each lease group");

    cluster.startJoiningNode("n4");
    repeatedUntilDone(
        "adding n4",
        () ->
            cluster
                .cluster("n1")
                .withDeadlineAfter(120, TimeUnit.SECONDS)
                .addMember(AddMemberRequest.newBuilder().setMember(cluster.member("n4")).build()));
    // Answered once every group's configuration has n4, as the serving node sees it.
    assertMembers("n1", Set.of("n1", "n2", "n3", "n4"));
    // n4 leads no lease group (slots 0..2 of four members), so the meta group's slot, 3, is its.
    await(
        () -> "the meta group led by n4, the lease groups as before: " + views(),
        WAIT,
        () ->
            metaLeader("n1").equals("n4")
                && leaders("n1").equals(Map.of(1, "n1", 2, "n2", 3, "n3")));
    Map<Integer, Long> committed = new java.util.HashMap<>();
    cluster
        .node("n1")
        .consensus()
        .groups()
        .forEach(g -> committed.put(g.number(), g.commitIndex()));
    await(
        () ->
            "n4 follows every lease group, leads the meta group and applied what each had"
                + " committed: "
                + views(),
        WAIT,
        () ->
            cluster.node("n4").consensus().groups().stream()
                    .filter(
                        g ->
                            g.role()
                                    == (g.number() == 0
                                        ? Consensus.Role.LEADER
                                        : Consensus.Role.FOLLOWER)
                                && g.appliedIndex() >= committed.get(g.number()))
                    .count()
                == 4);

    cluster.startJoiningNode("n5");
    StatusRuntimeException refused =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster("n1")
                    .withDeadlineAfter(60, TimeUnit.SECONDS)
                    .addMember(
                        AddMemberRequest.newBuilder().setMember(cluster.member("n5")).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
    assertTrue(
        refused.getStatus().getDescription().contains("member.id")
            && refused
                .getStatus()
                .getDescription()
                .contains("does not host lease groups [1, 2, 3]"),
        refused.getStatus().getDescription());
    assertMembers("n1", Set.of("n1", "n2", "n3", "n4")); // n5 was refused before any change

    cluster.stopNode("n3");
    repeatedUntilDone(
        "removing n3",
        () ->
            cluster
                .cluster("n1")
                .withDeadlineAfter(120, TimeUnit.SECONDS)
                .removeMember(RemoveMemberRequest.newBuilder().setId("n3").build()));
    assertMembers("n1", Set.of("n1", "n2", "n4"));
    await(
        () -> "n2 applies every group's new configuration: " + views(),
        WAIT,
        () ->
            cluster.node("n2").consensus().groups().stream()
                .allMatch(g -> g.priorities().keySet().equals(Set.of("n1", "n2", "n4"))));
    // The leaderships spread over the members sorted by id: group 3, n3's, goes to n4, and the
    // meta group's slot, 3 mod 3, names n1.
    await(
        () -> "every group led by the member its new priority names: " + views(),
        WAIT,
        () ->
            leaders("n1").equals(Map.of(1, "n1", 2, "n2", 3, "n4"))
                && metaLeader("n1").equals("n1"));
    // Every lease group, the one n3 led included, still takes writes.
    for (String ns : namespaces) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases("n2").acquire(acquire(ns + "/after", "h", 60)).getOutcome(),
          ns);
    }
  }

  /**
   * A membership change, repeated while it answers UNAVAILABLE: a group that had no leader for a
   * moment (a busy machine) fails the call naming it, and repeating it finishes the change, each
   * step being idempotent (docs/operations.md, "Membership").
   */
  private void repeatedUntilDone(String what, Supplier<?> call) {
    TestCluster.eventually(
        what,
        WAIT,
        () -> {
          try {
            return Optional.of(call.get());
          } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.UNAVAILABLE) {
              return Optional.empty();
            }
            throw e;
          }
        });
  }

  /** Every group's members as node {@code id} sees them. */
  private void assertMembers(String id, Set<String> members) {
    for (Consensus.GroupStatus g : cluster.node(id).consensus().groups()) {
      assertEquals(members, g.priorities().keySet(), "group " + g.number() + "'s members");
    }
  }

  @Test
  void aRollingRestartWithMoreLeaseGroupsAddsThemAndFewerRemovesNone() throws Exception {
    AtomicInteger groups = new AtomicInteger(1);
    cluster = TestCluster.start(3, dir, (id, b) -> b.leaseGroups(groups.get()));
    assertEquals(1, status("n1").getGroupsCount());
    groups.set(3);
    for (String id : List.of("n1", "n2", "n3")) {
      cluster.stopNode(id);
      cluster.startNode(id);
      cluster.awaitLeader();
    }
    await(
        () -> "the added lease groups elect, each led by the member its priority names: " + views(),
        WAIT,
        () ->
            cluster.ids().stream()
                .allMatch(id -> leaders(id).equals(Map.of(1, "n1", 2, "n2", 3, "n3"))));
    // The meta group kept its configuration from before, without priorities: its leader gives it
    // the ones that spread the leaderships (3 mod 3 names n1).
    await(
        () -> "the meta group led by the member its new priority names: " + status("n2"),
        WAIT,
        () ->
            status("n2").getGroups(0).getMembersList().stream()
                    .filter(m -> m.getPriority() == 1)
                    .map(GroupMember::getId)
                    .toList()
                    .equals(List.of("n1"))
                && metaLeader("n2").equals("n1"));
    groups.set(1);
    cluster.stopNode("n3");
    cluster.startNode("n3");
    await(
        () -> "n3 still hosts and leads lease group 3: " + views(),
        WAIT,
        () -> status("n3").getGroupsCount() == 4 && "n3".equals(leaders("n1").get(3)));
  }

  @Test
  void aNamespaceMovesToAnotherLeaseGroupWhileItsLeasesAreHeldAndWritten() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3));
    awaitGroupsPlaceable();
    AcquireResponse held = acquireRetrying("n1", acquire("alpha/held", "runner-1", 600));
    AcquireResponse brief = acquireRetrying("n2", acquire("alpha/brief", "runner-2", 2));
    assertEquals(Outcome.GRANTED, held.getOutcome(), held::toString);
    assertEquals(Outcome.GRANTED, brief.getOutcome(), brief::toString);
    awaitPlaced(cluster.running(), "alpha");
    int from = cluster.node("n1").stateMachine().core().placement("alpha").orElseThrow().getGroup();
    int to = from % 3 + 1;
    // Revisions come with their group: a list's, an acquisition's, a watch message's.
    assertEquals(from, held.getGroup(), held::toString);
    ListResponse listedBefore = cluster.leases("n2").list(list("alpha/"));
    assertEquals(from, listedBefore.getGroup(), listedBefore::toString);

    // A writer keeps taking and giving back names of the namespace through every node while it
    // moves: each call waits out the move, and tokens keep increasing across it.
    java.util.concurrent.atomic.AtomicBoolean writing =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    List<Long> tokens = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    List<Throwable> failures = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    Thread writer =
        new Thread(
            () -> {
              for (int i = 0; writing.get() && failures.isEmpty(); i++) {
                String via = "n" + (1 + i % 3);
                try {
                  // A busy machine may elect a lease group's leader meanwhile: that answer is
                  // retried, as a client does; a move alone never needs it.
                  AcquireResponse r = acquireRetrying(via, acquire("alpha/w-" + i, "writer", 30));
                  assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
                  tokens.add(r.getLease().getToken());
                  cluster.leases(via).release(release("alpha/w-" + i, r.getLease().getToken()));
                } catch (Throwable e) {
                  failures.add(e);
                }
              }
            },
            "alpha-writer");
    Watching watchAlpha = new Watching(cluster.channel("n2"), "alpha/", 0);
    assertEquals(from, watchAlpha.awaitStarted().getGroup());
    writer.start();
    await("the writer is writing", WAIT, () -> tokens.size() >= 3 || !failures.isEmpty());

    io.leasehold.proto.v1.MoveNamespaceResponse moved = moveNamespace("n3", "alpha", to);
    assertEquals(to, moved.getGroup(), moved::toString);
    assertEquals(2, moved.getEpoch(), moved::toString);
    int before = tokens.size();
    await(
        "the writer goes on after the move",
        WAIT,
        () -> tokens.size() >= before + 3 || !failures.isEmpty());
    writing.set(false);
    writer.join(30_000);
    assertEquals(List.of(), failures, "every write waited out the move");
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens increase across the move: " + tokens);
    }

    awaitPlaced(cluster.running(), "alpha");
    awaitMoved("alpha", from, to);
    for (String id : cluster.ids()) {
      GetResponse got = cluster.leases(id).get(get("alpha/held"));
      assertTrue(got.getFound(), () -> "alpha/held after the move, through " + id);
      assertEquals(held.getLease().getToken(), got.getLease().getToken(), "it keeps its token");
      assertEquals("runner-1", got.getLease().getHolder());
    }
    assertEquals(
        1,
        cluster.leases("n1").list(list("")).getLeasesList().stream()
            .filter(l -> l.getName().equals("alpha/held"))
            .count(),
        "a list across every group has it once");
    // Names released in the old group before the move keep their history in the new one.
    HistoryResponse released =
        cluster.admin("n2").history(HistoryRequest.newBuilder().setName("alpha/w-0").build());
    assertEquals(1, released.getLeasesCount(), released::toString);
    assertEquals(tokens.get(0), released.getLeases(0).getToken());
    RenewResponse renewed =
        cluster
            .leases("n2")
            .renew(
                RenewRequest.newBuilder()
                    .addItems(
                        RenewItem.newBuilder()
                            .setName("alpha/held")
                            .setToken(held.getLease().getToken()))
                    .build());
    assertEquals(Outcome.RENEWED, renewed.getResults(0).getOutcome(), renewed::toString);
    // A lease nobody renews ends in its new group, on that group's leader's clock.
    await(
        "alpha/brief expires in group " + to,
        WAIT,
        () -> !cluster.leases("n1").get(get("alpha/brief")).getFound());
    // A watch of the namespace in its old group ends once that group dropped it; its client lists
    // again, from the new group, and watches from there.
    try (watchAlpha) {
      StatusRuntimeException ended = watchAlpha.awaitError();
      assertEquals(Status.Code.OUT_OF_RANGE, ended.getStatus().getCode(), ended::toString);
      assertTrue(ended.getStatus().getDescription().contains("moved"), ended::toString);
    }
    ListResponse listed = cluster.leases("n3").list(list("alpha/"));
    assertEquals(to, listed.getGroup(), listed::toString);
    try (Watching again =
        new Watching(
            cluster.channel("n1"),
            WatchRequest.newBuilder()
                .setPrefix("alpha/")
                .setStartRevision(listed.getRevision() + 1)
                .setStartGroup(listed.getGroup()))) {
      AcquireResponse after = acquireRetrying("n1", acquire("alpha/after", "runner-3", 30));
      assertEquals(to, after.getGroup(), after::toString);
      assertTrue(
          after.getLease().getToken() > tokens.get(tokens.size() - 1),
          "a grant after the move is above every token before it");
      assertEquals("alpha/after", again.nextEvent().getName());
    }
    // A watch resumed from a revision of the old group is refused, since the new group's revisions
    // are not the same: with the old group said, or with a bare revision from before the
    // namespace came (no other group could have given it); a bare revision past that could be of
    // either group, so it is refused as ambiguous.
    long adopted =
        cluster
            .node("n1")
            .consensus()
            .leaseGroupCores()
            .get(to)
            .placement("alpha")
            .orElseThrow()
            .getRevision();
    for (String id : cluster.ids()) {
      StatusRuntimeException oldGroup =
          watchEnd(
              id,
              WatchRequest.newBuilder()
                  .setPrefix("alpha/")
                  .setStartRevision(listedBefore.getRevision() + 1)
                  .setStartGroup(from));
      assertEquals(Status.Code.OUT_OF_RANGE, oldGroup.getStatus().getCode(), oldGroup::toString);
      assertTrue(
          oldGroup.getStatus().getDescription().contains("of group " + from), oldGroup::toString);
      StatusRuntimeException beforeIt =
          watchEnd(id, WatchRequest.newBuilder().setPrefix("alpha/").setStartRevision(adopted));
      assertEquals(Status.Code.OUT_OF_RANGE, beforeIt.getStatus().getCode(), beforeIt::toString);
      StatusRuntimeException sameGroupBeforeIt =
          watchEnd(
              id,
              WatchRequest.newBuilder()
                  .setPrefix("alpha/")
                  .setStartRevision(adopted)
                  .setStartGroup(to));
      assertEquals(
          Status.Code.OUT_OF_RANGE,
          sameGroupBeforeIt.getStatus().getCode(),
          sameGroupBeforeIt::toString);
      StatusRuntimeException ambiguous =
          watchEnd(id, WatchRequest.newBuilder().setPrefix("alpha/").setStartRevision(adopted + 1));
      assertEquals(
          Status.Code.FAILED_PRECONDITION, ambiguous.getStatus().getCode(), ambiguous::toString);
      assertTrue(
          ambiguous.getStatus().getDescription().contains("start_group"), ambiguous::toString);
    }

    StatusRuntimeException toNowhere =
        assertThrows(StatusRuntimeException.class, () -> moveNamespace("n1", "alpha", 9));
    assertEquals(Status.Code.INVALID_ARGUMENT, toNowhere.getStatus().getCode());
    assertTrue(toNowhere.getStatus().getDescription().contains("to_group"), toNowhere::toString);
    StatusRuntimeException registry =
        assertThrows(StatusRuntimeException.class, () -> moveNamespace("n1", "service", 1));
    assertEquals(Status.Code.INVALID_ARGUMENT, registry.getStatus().getCode());
  }

  /**
   * A cluster that turned lease groups on keeps the namespaces it had in the meta group, which hold
   * their leases there; a move takes one to a lease group, leases, sessions and history along.
   */
  @Test
  void aNamespaceTheMetaGroupHeldBeforeLeaseGroupsMovesToOne() throws Exception {
    AtomicInteger groups = new AtomicInteger(1);
    cluster = TestCluster.start(3, dir, (id, b) -> b.leaseGroups(groups.get()));
    AcquireResponse gone = acquireRetrying("n1", acquire("legacy/gone", "zoe", 30));
    cluster.leases("n1").release(release("legacy/gone", gone.getLease().getToken()));
    AcquireResponse held = acquireRetrying("n1", acquire("legacy/held", "runner-1", 600));
    long session = createSession("n2", "runner-2", 30);
    AcquireResponse attached =
        acquireRetrying(
            "n2",
            acquire("legacy/attached", "runner-2", 0).toBuilder()
                .clearTtl()
                .setSession(session)
                .build());
    assertEquals(Outcome.GRANTED, attached.getOutcome(), attached::toString);
    groups.set(3);
    for (String id : List.of("n1", "n2", "n3")) {
      cluster.stopNode(id);
      cluster.startNode(id);
      cluster.awaitLeader();
    }
    awaitGroupsPlaceable();
    // A grant places the namespace where its state is: on the meta group itself.
    AcquireResponse more = acquireRetrying("n3", acquire("legacy/more", "runner-3", 600));
    assertEquals(0, more.getGroup(), more::toString);
    awaitPlaced(cluster.running(), "legacy");
    assertEquals(
        0, cluster.node("n1").stateMachine().core().placement("legacy").orElseThrow().getGroup());
    Watching watchLegacy = new Watching(cluster.channel("n3"), "legacy/", 0);
    assertEquals(0, watchLegacy.awaitStarted().getGroup());

    io.leasehold.proto.v1.MoveNamespaceResponse moved = moveNamespace("n2", "legacy", 2);
    assertEquals(List.of(2, 2L), List.of(moved.getGroup(), moved.getEpoch()), moved::toString);
    awaitMoved("legacy", 0, 2);
    for (String id : cluster.ids()) {
      GetResponse got = cluster.leases(id).get(get("legacy/held"));
      assertEquals(held.getLease().getToken(), got.getLease().getToken(), () -> "through " + id);
      assertEquals(
          session,
          cluster.leases(id).get(get("legacy/attached")).getLease().getSession(),
          "the attached lease keeps its session");
    }
    HistoryResponse history =
        cluster.admin("n1").history(HistoryRequest.newBuilder().setName("legacy/gone").build());
    assertEquals(1, history.getLeasesCount(), history::toString);
    AcquireResponse after = acquireRetrying("n1", acquire("legacy/after", "runner-3", 30));
    assertEquals(2, after.getGroup(), after::toString);
    assertTrue(
        after.getLease().getToken() > more.getLease().getToken(),
        "a grant in the new group is above every token the meta group granted in it");
    try (watchLegacy) {
      StatusRuntimeException ended = watchLegacy.awaitError();
      assertEquals(Status.Code.OUT_OF_RANGE, ended.getStatus().getCode(), ended::toString);
    }
    // The session still holds its lease, now a part of it in group 2: a close ends it there.
    cluster.leases("n3").closeSession(CloseSessionRequest.newBuilder().setSession(session).build());
    await(
        "the session's lease ends with it, in its new group",
        WAIT,
        () -> !cluster.leases("n1").get(get("legacy/attached")).getFound());
    assertTrue(cluster.leases("n2").get(get("legacy/held")).getFound());
  }

  @Test
  void aBackupIsNotTakenWhileANamespaceMoves() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3));
    awaitGroupsPlaceable();
    assertEquals(
        Outcome.GRANTED, acquireRetrying("n1", acquire("alpha/a", "runner", 60)).getOutcome());
    awaitPlaced(cluster.running(), "alpha");
    // A move that cannot go on (no lease group 9): the namespace stays moving until aborted.
    LeaseholdNode leader = cluster.awaitLeader();
    LogReply recorded =
        leader
            .replicator()
            .propose(
                LogCommand.newBuilder()
                    .setRecordMove(
                        io.leasehold.proto.v1.RecordMove.newBuilder()
                            .setNamespace("alpha")
                            .setToGroup(9))
                    .build())
            .get(30, TimeUnit.SECONDS);
    long move = recorded.getRecordMove().getMove();
    assertTrue(move > 0, recorded::toString);
    StatusRuntimeException refused =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                NodeBackup.receive(
                    cluster
                        .cluster("n2")
                        .backup(BackupRequest.newBuilder().setEveryGroup(true).build()),
                    dir.resolve("refused")));
    assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode());
    assertTrue(refused.getStatus().getDescription().contains("alpha"), refused::toString);

    leader
        .replicator()
        .propose(
            LogCommand.newBuilder()
                .setFinishMove(
                    io.leasehold.proto.v1.FinishMove.newBuilder()
                        .setNamespace("alpha")
                        .setMove(move)
                        .setOutcome(io.leasehold.proto.v1.MoveOutcome.MOVE_ABORTED))
                .build())
        .get(30, TimeUnit.SECONDS);
    NodeBackup.Manifest m =
        NodeBackup.receive(
            cluster.cluster("n2").backup(BackupRequest.newBuilder().setEveryGroup(true).build()),
            dir.resolve("taken"));
    assertEquals(3, m.leaseGroups().size(), m::toString);
  }

  /**
   * A node whose meta replica has not applied a move yet routes a read of the namespace to its old
   * group, which has dropped it (or holds the copy it froze). The read must not be answered from
   * there: the node catches up with the meta group and reads the new group. Found by the fault
   * schedule with moves (a read found no lease 441 ms after its renewal was acknowledged, and one
   * found a lease that had been released); reproduced here by dropping the meta group's entries to
   * n3 while the move and a write after it happen.
   */
  @Test
  void aReadThroughANodeWhoseMetaReplicaLagsAMoveWaitsForItAndReadsTheNewGroup() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3));
    awaitGroupsPlaceable();
    assertEquals(
        Outcome.GRANTED, cluster.leases("n1").acquire(acquire("alpha/a", "h", 60)).getOutcome());
    awaitPlaced(cluster.running(), "alpha");
    int from = cluster.node("n1").stateMachine().core().placement("alpha").orElseThrow().getGroup();
    int to = from % 3 + 1;
    String meta = status("n1").getGroupId();
    PeerTraffic traffic = cluster.node("n3").diagnostics().peerTraffic();
    // n3 keeps hearing the meta leader's heartbeats (no election) but gets none of its entries.
    traffic.rule(
        a ->
            a.group().equals(meta) && !a.heartbeat()
                ? PeerTraffic.Verdict.DROP
                : PeerTraffic.Verdict.DELIVER);
    try {
      moveNamespace("n1", "alpha", to);
      AcquireResponse after = cluster.leases("n1").acquire(acquire("alpha/b", "h", 60));
      assertEquals(Outcome.GRANTED, after.getOutcome(), after::toString);
      await(
          "n3's group " + from + " dropped alpha while its meta replica still places it there",
          WAIT,
          () ->
              cluster
                      .node("n3")
                      .consensus()
                      .leaseGroupCores()
                      .get(from)
                      .placement("alpha")
                      .isEmpty()
                  && cluster
                          .node("n3")
                          .stateMachine()
                          .core()
                          .placement("alpha")
                          .orElseThrow()
                          .getGroup()
                      == from);
      // Not answered from group `from` (it would say alpha/b does not exist): n3 waits to catch
      // up with the meta group, which it cannot yet.
      StatusRuntimeException waited =
          assertThrows(
              StatusRuntimeException.class,
              () -> cluster.leases("n3").withDeadlineAfter(3, TimeUnit.SECONDS).get(get("alpha/b")),
              "a read through n3 answered from the group alpha left");
      assertTrue(
          waited.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED
              || waited.getStatus().getCode() == Status.Code.UNAVAILABLE,
          waited::toString);
      StatusRuntimeException listed =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  cluster.leases("n3").withDeadlineAfter(3, TimeUnit.SECONDS).list(list("alpha/")),
              "a list through n3 answered from the group alpha left");
      assertTrue(
          listed.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED
              || listed.getStatus().getCode() == Status.Code.UNAVAILABLE,
          listed::toString);
    } finally {
      traffic.rule(null);
    }
    GetResponse found = cluster.leases("n3").get(get("alpha/b"));
    assertTrue(found.getFound(), "once n3 caught up, it reads alpha's new group: " + found);
    assertEquals(
        cluster.leases("n1").get(get("alpha/b")).getLease().getToken(),
        found.getLease().getToken());
    ListResponse alpha = cluster.leases("n3").list(list("alpha/"));
    assertEquals(to, alpha.getGroup(), alpha::toString);
    assertEquals(
        List.of("alpha/a", "alpha/b"),
        alpha.getLeasesList().stream().map(io.leasehold.proto.v1.Lease::getName).toList());
  }

  /**
   * A namespace whose state is larger than one Raft entry takes moves in parts (log format 7): the
   * destination stages each part in an entry of its own, and the adoption makes them live at once.
   */
  @Test
  void aNamespaceTooLargeForOneEntryMovesInStagedParts() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3));
    awaitGroupsPlaceable();
    // Each lease carries about 240 KB of metadata: eighteen are more than one Raft entry takes
    // (4 MiB), and five parts of at most 1 MiB carry them.
    io.leasehold.proto.v1.Attributes.Builder big = io.leasehold.proto.v1.Attributes.newBuilder();
    for (int k = 0; k < 60; k++) {
      big.putMetadata("k" + k, "x".repeat(4000));
    }
    Map<String, Long> tokens = new java.util.TreeMap<>();
    for (int i = 0; i < 18; i++) {
      AcquireResponse r =
          acquireRetrying(
              "n" + (1 + i % 3),
              acquire("bulky/" + i, "runner", 600).toBuilder().setAttributes(big).build());
      assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
      tokens.put("bulky/" + i, r.getLease().getToken());
    }
    awaitPlaced(cluster.running(), "bulky");
    int from = cluster.node("n1").stateMachine().core().placement("bulky").orElseThrow().getGroup();
    int to = from % 3 + 1;
    io.leasehold.proto.v1.MoveNamespaceResponse moved = moveNamespace("n2", "bulky", to);
    assertEquals(to, moved.getGroup(), moved::toString);
    awaitMoved("bulky", from, to);
    for (String id : cluster.ids()) {
      for (Map.Entry<String, Long> e : tokens.entrySet()) {
        GetResponse got = cluster.leases(id).get(get(e.getKey()));
        assertTrue(got.getFound(), id + " finds " + e.getKey());
        assertEquals(e.getValue(), got.getLease().getToken(), e.getKey() + " keeps its token");
        assertEquals(
            big.getMetadataMap(),
            got.getLease().getAttributes().getMetadataMap(),
            "with its metadata");
      }
    }
    AcquireResponse after = cluster.leases("n3").acquire(acquire("bulky/after", "runner", 60));
    assertEquals(Outcome.GRANTED, after.getOutcome(), "writes go on in its new group: " + after);
    assertTrue(
        after.getLease().getToken() > java.util.Collections.max(tokens.values()),
        "tokens keep increasing across the move");
    for (LeaseholdNode n : cluster.running()) {
      LeaseCore d = n.consensus().leaseGroupCores().get(to);
      assertTrue(d.logFormat() >= LogFormat.STAGED_MOVES, "the destination staged under format 7");
    }
  }

  /**
   * An Acquire through {@code node}, sent again while the cluster answers UNAVAILABLE (a lease
   * group electing a leader on a busy machine), within {@link #WAIT}.
   */
  private AcquireResponse acquireRetrying(String node, AcquireRequest request) {
    return cluster.acquireRetrying(node, request, WAIT);
  }

  private io.leasehold.proto.v1.MoveNamespaceResponse moveNamespace(
      String via, String namespace, int to) {
    return cluster
        .cluster(via)
        .moveNamespace(
            io.leasehold.proto.v1.MoveNamespaceRequest.newBuilder()
                .setNamespace(namespace)
                .setToGroup(to)
                .build());
  }

  @Test
  void aStandaloneNodeLeadsEveryGroupRecoversThemOnRestartAndRefusesABackupOfOneGroup()
      throws Exception {
    cluster = TestCluster.start(1, dir, b -> b.leaseGroups(2));
    await(
        () -> "n1 leads every group: " + views(),
        WAIT,
        () -> leaders("n1").equals(Map.of(1, "n1", 2, "n1")));
    List<String> before =
        status("n1").getGroupsList().stream().map(GroupStatus::getGroupId).toList();
    cluster.stopNode("n1");
    cluster.startNode("n1");
    await(
        () -> "n1 leads every group after its restart: " + views(),
        WAIT,
        () -> leaders("n1").equals(Map.of(1, "n1", 2, "n1")));
    assertEquals(
        before, status("n1").getGroupsList().stream().map(GroupStatus::getGroupId).toList());

    // A client that does not ask for every group would keep the meta group's snapshot alone: it
    // is refused, not given a backup that misses the lease groups.
    StatusRuntimeException refused =
        assertThrows(
            StatusRuntimeException.class,
            () -> cluster.cluster("n1").backup(BackupRequest.getDefaultInstance()).hasNext());
    assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode());
    assertTrue(refused.getStatus().getDescription().contains("every_group"), refused::toString);
  }

  @Test
  void aBackupOfEveryGroupRestoresTheClusterWithItsLeaseGroups() throws Exception {
    cluster = TestCluster.start(3, dir.resolve("original"), b -> b.leaseGroups(3));
    awaitGroupsPlaceable();
    Map<String, Long> tokens = new java.util.TreeMap<>();
    Map<String, Long> revisions = new java.util.TreeMap<>();
    for (String ns : List.of("alpha", "beta", "gamma")) {
      for (int i = 0; i < 4; i++) {
        String name = ns + "/job-" + i;
        AcquireResponse r =
            cluster.leases("n" + (1 + i % 3)).acquire(acquire(name, "runner-" + i, 600));
        assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
        tokens.put(name, r.getLease().getToken());
        revisions.merge(ns, r.getRevision(), Math::max);
      }
    }
    awaitPlaced(cluster.running(), "alpha", "beta", "gamma");
    Map<String, Integer> placed = new java.util.TreeMap<>();
    for (String ns : List.of("alpha", "beta", "gamma")) {
      placed.put(
          ns, cluster.node("n1").stateMachine().core().placement(ns).orElseThrow().getGroup());
    }

    Path backup = dir.resolve("backup");
    NodeBackup.Manifest m =
        NodeBackup.receive(
            cluster.cluster("n2").backup(BackupRequest.newBuilder().setEveryGroup(true).build()),
            backup);
    assertEquals(m, NodeBackup.verify(backup));
    assertEquals(
        List.of(1, 2, 3),
        m.leaseGroups().stream().map(NodeBackup.GroupFile::number).toList(),
        m::toString);
    placed.forEach(
        (ns, group) ->
            assertTrue(
                m.leaseGroups().get(group - 1).index() >= revisions.get(ns),
                () ->
                    "lease group " + group + "'s snapshot holds every grant in " + ns + ": " + m));
    List<io.leasehold.server.Peer> peers = cluster.ids().stream().map(cluster::peer).toList();
    cluster.close();
    cluster = null;

    Path restored = dir.resolve("restored");
    java.io.IOException noPeers =
        assertThrows(
            java.io.IOException.class,
            () ->
                NodeBackup.restore(
                    backup, restored.resolve("n1"), NodeConfig.DEFAULT_CLUSTER_NAME));
    assertTrue(noPeers.getMessage().startsWith("--peers:"), noPeers::getMessage);
    for (String id : List.of("n1", "n2", "n3")) {
      NodeBackup.restore(backup, restored.resolve(id), NodeConfig.DEFAULT_CLUSTER_NAME, peers);
    }
    // The restored nodes run on the addresses their lease groups were restored with.
    cluster = TestCluster.start(3, restored, b -> b.leaseGroups(3).peers(peers));
    await(
        () -> "each restored lease group led by the member its priority names: " + views(),
        WAIT,
        () ->
            cluster.ids().stream()
                .allMatch(id -> leaders(id).equals(Map.of(1, "n1", 2, "n2", 3, "n3"))));
    for (String id : cluster.ids()) {
      for (Map.Entry<String, Long> e : tokens.entrySet()) {
        GetResponse got = cluster.leases(id).get(get(e.getKey()));
        assertTrue(got.getFound(), () -> e.getKey() + " restored, read through " + id);
        assertEquals(e.getValue(), got.getLease().getToken(), e.getKey());
      }
    }
    for (String ns : List.of("alpha", "beta", "gamma")) {
      int group = placed.get(ns);
      assertEquals(
          group,
          cluster.node("n3").stateMachine().core().placement(ns).orElseThrow().getGroup(),
          ns + " stays in its group");
      AcquireResponse fresh = cluster.leases("n3").acquire(acquire(ns + "/after", "runner-x", 60));
      assertEquals(Outcome.GRANTED, fresh.getOutcome(), fresh::toString);
      long max =
          tokens.entrySet().stream()
              .filter(e -> e.getKey().startsWith(ns + "/"))
              .mapToLong(Map.Entry::getValue)
              .max()
              .orElseThrow();
      assertTrue(
          fresh.getLease().getToken() > max,
          () -> ns + ": tokens continue above every token the backup holds");
      assertTrue(
          fresh.getRevision() > m.leaseGroups().get(group - 1).index(),
          () -> ns + ": its group's log continues after the backup's position");
    }
  }

  @Test
  void aClusterWithoutLeaseGroupsListsTheMetaGroupAlone() throws Exception {
    cluster = TestCluster.start(1, dir);
    StatusResponse s = status("n1");
    assertEquals(1, s.getGroupsCount());
    GroupStatus meta = s.getGroups(0);
    assertEquals(0, meta.getNumber());
    assertEquals(s.getGroupId(), meta.getGroupId());
    assertEquals(Role.LEADER, meta.getRole());
    assertTrue(s.getCommitIndex() <= meta.getCommitIndex());
    assertTrue(Files.notExists(dir.resolve("n1").resolve("groups")));
    GetPolicyResponse policy =
        cluster.admin("n1").getPolicy(GetPolicyRequest.newBuilder().setNamespace("").build());
    assertEquals(0, policy.getGlobalVersion(), "no copies to compare with: " + policy);
    assertEquals(0, policy.getCopiesCount(), policy::toString);
    // Its one group's revisions are every namespace's: a revision of a lease group is not one.
    ListResponse listed = cluster.leases("n1").list(list("alpha/"));
    assertEquals(0, listed.getGroup());
    StatusRuntimeException noSuchGroup =
        watchEnd(
            "n1",
            WatchRequest.newBuilder()
                .setPrefix("alpha/")
                .setStartRevision(listed.getRevision() + 1)
                .setStartGroup(2));
    assertEquals(Status.Code.OUT_OF_RANGE, noSuchGroup.getStatus().getCode());
    assertTrue(noSuchGroup.getStatus().getDescription().contains("start_group"));
    try (Watching inMeta =
        new Watching(
            cluster.channel("n1"),
            WatchRequest.newBuilder()
                .setPrefix("alpha/")
                .setStartRevision(listed.getRevision() + 1)
                .setStartGroup(0))) {
      assertEquals(0, inMeta.awaitStarted().getGroup());
    }
  }

  /**
   * Every node places {@code ns} on group {@code to} with no move under way, its replica of {@code
   * to} holds it, and its replica of lease group {@code from} (0: the meta group) no longer does.
   */
  private void awaitMoved(String ns, int from, int to) {
    await(
        () ->
            "every node places " + ns + " on group " + to + ", moved from " + from + ": " + views(),
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(
                    n -> {
                      PlacementResponse p = n.stateMachine().core().placement(ns).orElseThrow();
                      Map<Integer, LeaseCore> cores = n.consensus().leaseGroupCores();
                      return p.getGroup() == to
                          && p.getMove() == 0
                          && cores.get(to).placement(ns).isPresent()
                          && (from == 0 || cores.get(from).placement(ns).isEmpty());
                    }));
  }

  /** How a watch through node {@code id} ends, which it must do before sending anything. */
  private StatusRuntimeException watchEnd(String id, WatchRequest.Builder request)
      throws InterruptedException {
    try (Watching w = new Watching(cluster.channel(id), request)) {
      Object o = w.take();
      assertTrue(o instanceof StatusRuntimeException, () -> "refused through " + id + ": " + o);
      return (StatusRuntimeException) o;
    }
  }

  private StatusResponse status(String id) {
    return cluster.cluster(id).status(StatusRequest.getDefaultInstance());
  }

  /** Lease group number to the leader member {@code id} reports it has (groups with one only). */
  private Map<Integer, String> leaders(String id) {
    return status(id).getGroupsList().stream()
        .filter(g -> g.getNumber() > 0 && !g.getLeaderId().isEmpty())
        .collect(Collectors.toMap(GroupStatus::getNumber, GroupStatus::getLeaderId));
  }

  /** The meta group's leader as node {@code id} sees it, empty when it knows none. */
  private String metaLeader(String id) {
    return status(id).getGroups(0).getLeaderId();
  }

  private String views() {
    StringBuilder b = new StringBuilder();
    for (String id : cluster.ids()) {
      Optional<Map<Integer, String>> view;
      try {
        view = Optional.of(leaders(id));
      } catch (RuntimeException e) {
        view = Optional.empty();
      }
      String meta;
      try {
        meta = metaLeader(id);
      } catch (RuntimeException e) {
        meta = "?";
      }
      b.append(id)
          .append('=')
          .append(view.map(Object::toString).orElse("down"))
          .append(" meta:")
          .append(meta)
          .append(' ');
    }
    return b.toString().trim();
  }
}
