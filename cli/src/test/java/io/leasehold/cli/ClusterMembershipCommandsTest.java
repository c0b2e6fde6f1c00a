package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Peer;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster add|remove|group-members|transfer-leader|snapshot} against a real three-node
 * cluster.
 */
class ClusterMembershipCommandsTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static List<String> ids(JsonArray members) {
    return StreamSupport.stream(members.spliterator(), false)
        .map(m -> str(m.getAsJsonObject(), "id"))
        .sorted()
        .toList();
  }

  @Test
  void addTransferLeadershipToRemoveAndSnapshot() throws Exception {
    cluster = TestCluster.start(3, dir);
    long granted =
        run(cluster, "lease", "acquire", "lock/members", "--ttl", "60s", "-o", "json")
            .ok()
            .object()
            .get("modRevision")
            .getAsLong();

    LeaseholdNode n4 = cluster.startJoiningNode("n4");
    Peer p4 = cluster.peer("n4");
    JsonArray afterAdd =
        run(
                cluster,
                "cluster",
                "add",
                "n4",
                "--peer-address",
                p4.peerAddress(),
                "--client-address",
                p4.clientAddress(),
                "-o",
                "json")
            .ok()
            .array();
    assertEquals(List.of("n1", "n2", "n3", "n4"), ids(afterAdd));
    JsonObject added =
        StreamSupport.stream(afterAdd.spliterator(), false)
            .map(JsonElement::getAsJsonObject)
            .filter(m -> "n4".equals(str(m, "id")))
            .findFirst()
            .orElseThrow();
    assertEquals(p4.clientAddress(), str(added, "clientAddress"));
    TestCluster.await(
        "n4 catches up and holds the lease",
        seconds(30),
        () -> n4.ratis().division().getInfo().getLastAppliedIndex() >= granted);

    String target =
        cluster.followers().stream()
            .map(LeaseholdNode::id)
            .filter(id -> !id.equals("n4"))
            .findFirst()
            .orElseThrow();
    assertEquals(
        target,
        str(
            run(cluster, "cluster", "transfer-leader", target, "-o", "json").ok().object(),
            "leader"));
    TestCluster.await(
        target + " leads",
        seconds(30),
        () -> cluster.leader().map(l -> l.id().equals(target)).orElse(false));

    JsonArray afterRemove = run(cluster, "cluster", "remove", "n4", "-o", "json").ok().array();
    assertEquals(List.of("n1", "n2", "n3"), ids(afterRemove));

    JsonObject snapshot = run(cluster, "cluster", "snapshot", "-o", "json").ok().object();
    assertEquals(List.of("node", "term", "index", "sizeBytes"), List.copyOf(snapshot.keySet()));
    assertTrue(snapshot.get("index").getAsLong() >= granted, snapshot.toString());
    assertTrue(snapshot.get("sizeBytes").getAsLong() > 0, snapshot.toString());

    String table = run(cluster, "cluster", "transfer-leader").ok().out();
    assertEquals("LEADER", Cli.cells(table).get(0).get(0), table);
  }

  @Test
  void badMembershipInputIsAUsageErrorAndRemovalIsIdempotent() throws Exception {
    cluster = TestCluster.start(1, dir);
    run(cluster, "cluster", "add", "n9", "--client-address", "127.0.0.1:1")
        .failed(2, "--peer-address");
    run(cluster, "cluster", "remove").failed(2, "ID");
    run(cluster, "cluster", "group-members").failed(2, "GROUP");
    // A lease group's members are changed where lease groups sit on subsets of the nodes only
    // (SubsetGroupMembersTest changes them).
    run(cluster, "cluster", "group-members", "1", "--add", "n1")
        .failed(LeaseholdCommand.EXIT_FAILED, "this cluster has no lease groups");
    // Removal is idempotent: removing a member that is not there changes nothing and says so by the
    // list.
    assertEquals(
        List.of("n1"), ids(run(cluster, "cluster", "remove", "n9", "-o", "json").ok().array()));
  }
}
