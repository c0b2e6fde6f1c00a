package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.GroupMember;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lease groups hosted beside the meta group on the same Ratis server (docs/design/multi-raft.md):
 * each elects on its own, its leader is the member its priority names, and a restarted member takes
 * its groups back.
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
    await(
        () -> "lease group k led by n<k> on every member: " + views(),
        WAIT,
        () ->
            cluster.ids().stream()
                .allMatch(id -> leaders(id).equals(Map.of(1, "n1", 2, "n2", 3, "n3"))));
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
      if (g.getNumber() > 0) {
        assertEquals(
            "n" + g.getNumber(),
            g.getMembersList().stream()
                .filter(m -> m.getPriority() == 1)
                .map(GroupMember::getId)
                .collect(Collectors.joining(",")),
            "one member has the higher priority");
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
    groups.set(1);
    cluster.stopNode("n3");
    cluster.startNode("n3");
    await(
        () -> "n3 still hosts and leads lease group 3: " + views(),
        WAIT,
        () -> status("n3").getGroupsCount() == 4 && "n3".equals(leaders("n1").get(3)));
  }

  @Test
  void aStandaloneNodeLeadsEveryGroupAndRecoversThemOnRestart() throws Exception {
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

  private String views() {
    StringBuilder b = new StringBuilder();
    for (String id : cluster.ids()) {
      Optional<Map<Integer, String>> view;
      try {
        view = Optional.of(leaders(id));
      } catch (RuntimeException e) {
        view = Optional.empty();
      }
      b.append(id).append('=').append(view.map(Object::toString).orElse("down")).append(' ');
    }
    return b.toString().trim();
  }
}
