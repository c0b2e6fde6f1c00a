package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.FreezeNamespace;
import io.leasehold.proto.v1.FreezeNamespaceResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.TestCluster;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import io.leasehold.statemachine.store.InMemoryStore;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A watch across groups keeps a moved namespace's events in order (docs/design/multi-raft.md,
 * "Watches, lists and revisions"): this node's replicas of the two groups apply independently, and
 * here the test holds back the old group's replica, as a lagging one would, while the new group's
 * replica applies the adoption and a release of the moved lease.
 */
class MergedWatchMoveTest {
  private static final long NOW = 1_000_000_000L;

  /** This node's replica of the old group, which the test holds back. */
  private final LeaseCore source = new LeaseCore(new InMemoryStore(), 1);

  /** Another replica of the old group (its leader's), which applies each entry at once. */
  private final LeaseCore sourceLeader = new LeaseCore(new InMemoryStore(), 1);

  private final LeaseCore destination = new LeaseCore(new InMemoryStore(), 2);
  private final WatchHub sourceHub =
      new WatchHub(() -> source, 100_000, java.time.Duration.ofMillis(50), 1_000_000, 1);
  private final WatchHub destinationHub =
      new WatchHub(() -> destination, 100_000, java.time.Duration.ofMillis(50), 1_000_000, 1);
  private long sourceIndex;
  private long destinationIndex;

  @AfterEach
  void close() {
    sourceHub.close();
    destinationHub.close();
  }

  /** Applies an entry of the old group on its leader's replica; this node's applies it later. */
  private LogCommand toSourceLeader(LogCommand.Builder c) throws IOException {
    LogCommand entry = c.setLeaderTimeMicros(NOW).build();
    sourceLeader.apply(1, sourceIndex + 1, entry);
    return entry;
  }

  /** This node's replica of the old group applies its next entry, and its hub hears of it. */
  private ApplyResult toSource(LogCommand entry) throws IOException {
    ApplyResult r = source.apply(1, ++sourceIndex, entry);
    sourceHub.onApplied(r);
    return r;
  }

  private ApplyResult toSource(LogCommand.Builder c) throws IOException {
    return toSource(toSourceLeader(c));
  }

  private ApplyResult toDestination(LogCommand.Builder c) throws IOException {
    return destination.apply(1, ++destinationIndex, c.setLeaderTimeMicros(NOW).build());
  }

  private static LogCommand.Builder format() {
    return LogCommand.newBuilder()
        .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.GROUPS));
  }

  /** What the stream sent: each event as "group TYPE name", in order. */
  private static final class Sent extends TestStream {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<WatchResponse> responses = new CopyOnWriteArrayList<>();
    volatile Runnable onReady = () -> {};

    @Override
    public void setOnReadyHandler(Runnable handler) {
      onReady = handler;
    }

    @Override
    public void onNext(WatchFrame frame) {
      WatchResponse r = frame.toResponse();
      responses.add(r);
      for (Event e : r.getEventsList()) {
        events.add(r.getGroup() + " " + e.getType() + " " + e.getName());
      }
    }
  }

  private Sent out;
  private MergedWatch merged;
  private LogCommand grant;
  private LogCommand freeze;
  private long token;
  private FreezeNamespaceResponse f;

  /**
   * Both groups at format 6, the old one owning ns; a watch of every name started; then, on the old
   * group's leader only, a grant of ns/a and the Freeze of ns for move 7: this node's replica of
   * the old group lags and has applied neither yet.
   */
  private void watchThenGrantAndFreezeOnTheOldGroupsLeader() throws IOException {
    toSource(format());
    toSource(
        LogCommand.newBuilder()
            .setAdoptNamespace(
                AdoptNamespace.newBuilder().setNamespace("ns").setEpoch(1).setGroup(1)));
    destinationHub.onApplied(toDestination(format()));
    out = new Sent();
    out.ready = true;
    merged =
        MergedWatch.start(
            WatchRequest.newBuilder().setPrefix("").build(),
            Map.of(1, sourceHub, 2, destinationHub),
            Map.of(1, sourceIndex + 1, 2, destinationIndex + 1),
            out);
    out.onReady.run(); // as gRPC does once the call is set up
    grant =
        LogCommand.newBuilder()
            .setAcquire(
                AcquireRequest.newBuilder()
                    .setName("ns/a")
                    .setHolder("alice")
                    .setTtl(Duration.newBuilder().setSeconds(30)))
            .setLeaderTimeMicros(NOW)
            .build();
    token =
        sourceLeader.apply(1, sourceIndex + 1, grant).reply().getAcquire().getLease().getToken();
    freeze =
        LogCommand.newBuilder()
            .setFreezeNamespace(FreezeNamespace.newBuilder().setNamespace("ns").setMove(7))
            .setLeaderTimeMicros(NOW)
            .build();
    f = sourceLeader.apply(1, sourceIndex + 2, freeze).reply().getFreezeNamespace();
  }

  /** The new group's adoption of ns in move 7, with the state and floor the Freeze answered. */
  private LogCommand.Builder adoption() {
    return LogCommand.newBuilder()
        .setAdoptNamespace(
            AdoptNamespace.newBuilder()
                .setNamespace("ns")
                .setEpoch(2)
                .setGroup(2)
                .setFloor(f.getFloor())
                .setMove(7)
                .setState(f.getState())
                .setFromGroup(1)
                .setFrozenAt(f.getRevision()));
  }

  // The first message held is one with an event of ns; every later one of its group waits behind
  // it. A watcher that reads the new group's history only after the new group applied the entries
  // (a busy machine) sends that history and its progress in one go, so more than one may wait.

  /** The new group's release of ns/a is held back, and nothing of ns has been sent. */
  private void assertTheReleaseWaits() {
    TestCluster.await(
        "the new group's release waits for the old group's stream",
        java.time.Duration.ofSeconds(10),
        () -> merged.held() >= 1);
    assertEquals(List.of(), out.events, "nothing of ns is sent out of order");
  }

  /** This node's replica of the old group applies the grant and the Freeze: both events go out. */
  private void catchUpAndSeeTheGrantBeforeTheRelease() throws IOException {
    toSource(grant);
    toSource(freeze);
    TestCluster.await(
        "both events sent", java.time.Duration.ofSeconds(10), () -> out.events.size() == 2);
    assertEquals(List.of("1 ACQUIRED ns/a", "2 RELEASED ns/a"), out.events);
  }

  @Test
  void aMovedNamespacesEventsInItsNewGroupWaitForItsLastOnesInTheOld() throws Exception {
    watchThenGrantAndFreezeOnTheOldGroupsLeader();

    // The new group adopts it and the lease is released there; its replica here is quick.
    destinationHub.onApplied(toDestination(adoption()));
    destinationHub.onApplied(
        toDestination(
            LogCommand.newBuilder()
                .setRelease(ReleaseRequest.newBuilder().setName("ns/a").setToken(token))));
    assertTheReleaseWaits();

    // The lagging replica catches up: the grant goes first, then the release.
    catchUpAndSeeTheGrantBeforeTheRelease();
    assertEquals(0, merged.held());
  }

  @Test
  void aWatchOfTheNewGroupAloneNamesTheFreezeItsClientWaitsFor() throws Exception {
    watchThenGrantAndFreezeOnTheOldGroupsLeader();
    // A client merging one stream per group follows the new group here and the old one elsewhere.
    Sent alone = new Sent();
    List<WatchResponse> sent = alone.responses;
    alone.ready = true;
    MergedWatch.start(
        WatchRequest.newBuilder().setPrefix("").addGroups(2).build(),
        Map.of(2, destinationHub),
        Map.of(2, destinationIndex + 1),
        alone);
    alone.onReady.run();
    destinationHub.onApplied(toDestination(adoption()));
    destinationHub.onApplied(
        toDestination(
            LogCommand.newBuilder()
                .setRelease(ReleaseRequest.newBuilder().setName("ns/a").setToken(token))));
    TestCluster.await(
        "the new group's release is sent",
        java.time.Duration.ofSeconds(10),
        () -> sent.stream().anyMatch(r -> r.getEventsCount() > 0));
    WatchResponse release = sent.stream().filter(r -> r.getEventsCount() > 0).findFirst().get();
    assertEquals("ns/a", release.getEvents(0).getName());
    assertEquals(2, release.getGroup());
    assertEquals(
        Map.of(1, f.getRevision()),
        release.getAfterMap(),
        "the release names the old group's freeze, which its client's stream of that group must"
            + " pass first");
    assertEquals(
        Map.of(2, release.getRevision()),
        MergedWatch.parse(release.getResumeToken()),
        "the token holds the new group alone");
    assertEquals(
        List.of(),
        sent.stream().filter(r -> r.getEventsCount() == 0 && r.getAfterCount() > 0).toList(),
        "a message without events waits for nothing");
  }

  @Test
  void theOrderHoldsWhenTheNamespaceMovesOnBeforeTheOldGroupsStreamCaughtUp() throws Exception {
    watchThenGrantAndFreezeOnTheOldGroupsLeader();

    // The new group adopts ns, releases the lease, and hands ns on to a third group, dropping it,
    // all before its hub here hears of any of it: it no longer records where ns came from.
    List<ApplyResult> destination =
        List.of(
            toDestination(adoption()),
            toDestination(
                LogCommand.newBuilder()
                    .setRelease(ReleaseRequest.newBuilder().setName("ns/a").setToken(token))),
            toDestination(
                LogCommand.newBuilder()
                    .setFreezeNamespace(
                        FreezeNamespace.newBuilder().setNamespace("ns").setMove(9))),
            toDestination(
                LogCommand.newBuilder()
                    .setDropNamespace(
                        io.leasehold.proto.v1.DropNamespace.newBuilder()
                            .setNamespace("ns")
                            .setMove(9))));
    assertEquals(
        java.util.Optional.empty(), this.destination.placement("ns"), "the new group let ns go");
    destination.forEach(destinationHub::onApplied);
    assertTheReleaseWaits();

    catchUpAndSeeTheGrantBeforeTheRelease();
  }
}
