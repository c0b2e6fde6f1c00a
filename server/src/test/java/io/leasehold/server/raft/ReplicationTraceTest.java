package io.leasehold.server.raft;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trace reports each step of a write on each follower, on real Ratis and gRPC, in the order
 * they happen.
 */
class ReplicationTraceTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** One report: which node's trace, what, the index and when. */
  record Report(String node, String what, String follower, long index, long nanos) {}

  private static ReplicationTrace.Listener recorder(String node, List<Report> into) {
    return new ReplicationTrace.Listener() {
      @Override
      public void appendReceived(long lastIndex, long leaderCommit, long nanos) {
        into.add(new Report(node, "received", null, lastIndex, nanos));
      }

      @Override
      public void replySent(long matchIndex, long nanos) {
        into.add(new Report(node, "answered", null, matchIndex, nanos));
      }

      @Override
      public void applied(long index, long nanos) {
        into.add(new Report(node, "applied", null, index, nanos));
      }
    };
  }

  /**
   * The first report of {@code what} on {@code node} (about {@code follower}, if given) whose index
   * is at least {@code index}.
   */
  private static Optional<Report> first(
      List<Report> reports, String node, String what, String follower, long index) {
    return reports.stream()
        .filter(
            r ->
                r.node().equals(node)
                    && r.what().equals(what)
                    && r.index() >= index
                    && (follower == null || follower.equals(r.follower())))
        .findFirst();
  }

  @Test
  void everyStepOfAWriteToEachFollowerIsReportedInOrderAndNothingOnceTheListenerIsCleared()
      throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    List<Report> reports = new CopyOnWriteArrayList<>();
    for (LeaseholdNode node : cluster.running()) {
      node.diagnostics().replicationTrace().listen(recorder(node.id(), reports));
    }
    long revision = 0;
    for (int i = 0; i < 5; i++) {
      AcquireResponse r =
          cluster.leases(leader.id()).acquire(acquire("trace/" + i, "runner-1", 30));
      assertEquals(Outcome.GRANTED, r.getOutcome());
      revision = r.getRevision();
    }
    final long written = revision;
    List<LeaseholdNode> followers = cluster.followers();
    await(
        "every follower to apply revision " + written,
        Duration.ofSeconds(10),
        () ->
            followers.stream()
                .allMatch(f -> first(reports, f.id(), "applied", null, written).isPresent()));

    assertTrue(
        first(reports, leader.id(), "applied", null, written).isPresent(),
        "the leader reports its own apply");
    for (LeaseholdNode f : followers) {
      Report received =
          first(reports, f.id(), "received", null, written)
              .orElseThrow(
                  () ->
                      new AssertionError(
                          f.id() + " reports receiving an append carrying " + written));
      Report answered =
          first(reports, f.id(), "answered", null, written)
              .orElseThrow(() -> new AssertionError(f.id() + " reports answering for " + written));
      Report applied = first(reports, f.id(), "applied", null, written).orElseThrow();
      assertTrue(
          received.nanos() <= answered.nanos(),
          "received before answered: " + received + ", " + answered);
      assertTrue(
          received.nanos() <= applied.nanos(),
          "received before applied: " + received + ", " + applied);
    }
    assertEquals(
        Optional.empty(),
        reports.stream()
            .filter(r -> r.node().equals(leader.id()) && r.what().equals("received"))
            .findAny(),
        "the leader receives no appends");

    for (LeaseholdNode node : cluster.running()) {
      node.diagnostics().replicationTrace().listen(null);
    }
    AcquireResponse later =
        cluster.leases(leader.id()).acquire(acquire("trace/after", "runner-1", 30));
    assertEquals(Outcome.GRANTED, later.getOutcome());
    await(
        "every node to apply revision " + later.getRevision(),
        Duration.ofSeconds(10),
        () ->
            cluster.running().stream()
                .allMatch(
                    n ->
                        n.ratis().division().getInfo().getLastAppliedIndex()
                            >= later.getRevision()));
    // A report already under way when the listeners were cleared can only name an earlier entry.
    assertEquals(
        List.of(),
        reports.stream().filter(r -> r.index() >= later.getRevision()).toList(),
        "no reports of a write made after the listeners were cleared");
  }
}
