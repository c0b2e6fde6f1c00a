package io.leasehold.server.watch;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.list;
import static io.leasehold.server.Requests.release;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegisterResponse;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WatchTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static WatchRequest from(long revision) {
    return WatchRequest.newBuilder().setStartRevision(revision).build();
  }

  /**
   * Acquires, updates and releases over a few names through random nodes; returns the last
   * revision.
   */
  long randomWorkload(Random random, int operations, String prefix) {
    Map<String, Long> held = new HashMap<>();
    long last = 0;
    List<String> ids = cluster.running().stream().map(LeaseholdNode::id).toList();
    for (int i = 0; i < operations; i++) {
      LeasesGrpc.LeasesBlockingStub leases = cluster.leases(ids.get(random.nextInt(ids.size())));
      String name = prefix + (random.nextInt(12));
      Long token = held.get(name);
      if (token == null) {
        AcquireResponse r = leases.acquire(acquire(name, "holder-" + random.nextInt(3), 60));
        last = Math.max(last, r.getRevision());
        if (r.getOutcome() == Outcome.GRANTED) {
          held.put(name, r.getLease().getToken());
        }
      } else if (random.nextBoolean()) {
        last = Math.max(last, leases.release(release(name, token)).getRevision());
        held.remove(name);
      } else {
        last =
            Math.max(
                last,
                leases
                    .update(
                        UpdateRequest.newBuilder()
                            .setName(name)
                            .setToken(token)
                            .setAttributes(
                                Attributes.newBuilder()
                                    .setAddress("10.0.0." + random.nextInt(255) + ":80"))
                            .build())
                    .getRevision());
      }
    }
    return last;
  }

  @Test
  void watcherOnEachNodeSeesTheSameEventsInTheSameOrder() throws Exception {
    cluster = TestCluster.start(3, dir);
    List<WatchRecorder> watchers = new ArrayList<>();
    for (String id : cluster.ids()) {
      watchers.add(WatchRecorder.watch(cluster, id, from(0)));
    }
    for (WatchRecorder w : watchers) {
      w.awaitRevision(0);
    }
    long last = randomWorkload(new Random(42), 150, "lock/w-");
    for (WatchRecorder w : watchers) {
      w.awaitRevision(last);
    }
    List<Event> reference = watchers.get(0).events();
    assertTrue(reference.size() >= 100, "the workload made events: " + reference.size());
    for (WatchRecorder w : watchers) {
      assertEquals(reference, w.events(), "every node streams the same events in the same order");
    }
    for (int i = 1; i < reference.size(); i++) {
      assertTrue(
          reference.get(i).getRevision() >= reference.get(i - 1).getRevision(), "revision order");
    }
  }

  /**
   * The basic view: the same events, live and from history, carrying only what a routing cache
   * needs. Checked field by field against a full watcher of the same node.
   */
  @Test
  void basicViewWatcherSeesTheSameEventsWithOnlyTheirRoutingFields() throws Exception {
    cluster = TestCluster.start(1, dir);
    WatchRequest basicLive =
        WatchRequest.newBuilder().setView(io.leasehold.proto.v1.EventView.EVENT_VIEW_BASIC).build();
    WatchRecorder full = WatchRecorder.watch(cluster, "n1", from(0));
    WatchRecorder basic = WatchRecorder.watch(cluster, "n1", basicLive);
    full.awaitRevision(0);
    basic.awaitRevision(0);
    long first = cluster.leases("n1").acquire(acquire("lock/b-first", "h", 60)).getRevision();
    long last = randomWorkload(new Random(5), 80, "lock/b-");
    WatchRecorder basicHistory =
        WatchRecorder.watch(cluster, "n1", basicLive.toBuilder().setStartRevision(first).build());
    for (WatchRecorder w : List.of(full, basic, basicHistory)) {
      w.awaitRevision(last);
    }
    List<Event> expected = full.events();
    assertTrue(expected.size() >= 50, "the workload made events: " + expected.size());
    assertTrue(
        expected.stream().anyMatch(e -> e.getReason() == Event.Reason.REASON_RELEASED),
        "some endings");
    assertTrue(
        expected.stream()
            .anyMatch(e -> e.getLease().getAttributes().getAddress().startsWith("10.0.0.")),
        "some addresses");
    for (WatchRecorder w : List.of(basic, basicHistory)) {
      List<Event> got = w.events();
      assertEquals(expected.size(), got.size(), "a basic watcher gets every event");
      for (int i = 0; i < got.size(); i++) {
        Event f = expected.get(i);
        Event b = got.get(i);
        String what = "event " + i + ": " + b;
        assertEquals(
            List.of(f.getType(), f.getRevision(), f.getName(), f.getReason(), f.getMessage()),
            List.of(b.getType(), b.getRevision(), b.getName(), b.getReason(), b.getMessage()),
            what);
        assertEquals(
            List.of(
                f.getLease().getHolder(), f.getLease().getToken(), f.getLease().getAttributes()),
            List.of(
                b.getLease().getHolder(), b.getLease().getToken(), b.getLease().getAttributes()),
            what);
        assertTrue(
            f.hasTime() && f.getLease().hasTtl() && f.getLease().hasAcquiredAt(),
            "the full view has the times: " + f);
        assertFalse(
            b.hasTime()
                || b.getLease().hasTtl()
                || b.getLease().hasAcquiredAt()
                || b.getLease().hasRenewedAt()
                || b.getLease().hasExpiresAt()
                || b.getLease().hasHeartbeatInterval(),
            "the basic view leaves the times out: " + what);
        assertEquals(
            List.of("", 0L, 0L, 0L),
            List.of(
                b.getLease().getName(),
                b.getLease().getLastRenewRevision(),
                b.getLease().getRenewCount(),
                b.getLease().getModRevision()),
            what);
        assertTrue(
            b.getSerializedSize() * 2 < f.getSerializedSize(),
            "basic is less than half the bytes: "
                + b.getSerializedSize()
                + " of "
                + f.getSerializedSize());
      }
    }
  }

  @Test
  void watcherResumingOnAnotherNodeAfterItsNodeIsKilledSeesExactlyTheEventsAfterR()
      throws Exception {
    cluster = TestCluster.start(3, dir);
    String doomed = cluster.followers().get(0).id();
    String other =
        cluster.ids().stream().filter(id -> !id.equals(doomed)).findFirst().orElseThrow();
    WatchRecorder reference = WatchRecorder.watch(cluster, other, from(1));
    WatchRecorder first = WatchRecorder.watch(cluster, doomed, from(1));
    long middle = randomWorkload(new Random(7), 60, "lock/r-");
    first.awaitRevision(middle);
    long r = first.revision();
    cluster.stopNode(doomed);

    long end = randomWorkload(new Random(8), 60, "lock/r-");
    WatchRecorder resumed = WatchRecorder.watch(cluster, other, from(r + 1));
    resumed.awaitRevision(end);
    reference.awaitRevision(end);

    List<Event> expected = reference.events().stream().filter(e -> e.getRevision() > r).toList();
    assertFalse(expected.isEmpty());
    assertEquals(
        expected,
        resumed.events(),
        "no gap and no duplicate after resuming at R + 1 on another node");
    List<Event> joined = new ArrayList<>(first.events());
    joined.addAll(resumed.events());
    assertEquals(
        reference.events().stream().filter(e -> e.getRevision() <= end).toList(),
        joined.stream().filter(e -> e.getRevision() <= end).toList());
  }

  @Test
  void listThenWatchFromTheListRevisionGivesAGapFreeCache() throws Exception {
    cluster = TestCluster.start(3, dir);
    String node = cluster.followers().get(0).id();
    randomWorkload(new Random(1), 40, "svc/c-");
    ListResponse listed = cluster.leases(node).list(list("svc/"));
    Map<String, Lease> cache = new HashMap<>();
    listed
        .getLeasesList()
        .forEach(l -> cache.put(l.getName(), l.toBuilder().clearRemaining().build()));
    WatchRecorder w =
        WatchRecorder.watch(
            cluster,
            node,
            WatchRequest.newBuilder()
                .setPrefix("svc/")
                .setStartRevision(listed.getRevision() + 1)
                .build());
    long end = randomWorkload(new Random(2), 60, "svc/c-");
    w.awaitRevision(end);
    for (Event e : w.events()) {
      switch (e.getType()) {
        case ACQUIRED, UPDATED -> cache.put(e.getName(), e.getLease());
        case RELEASED, EXPIRED, REVOKED -> cache.remove(e.getName());
        default -> {}
      }
    }
    Map<String, Lease> truth = new HashMap<>();
    ListResponse now = cluster.leases(node).list(list("svc/"));
    assertTrue(now.getRevision() >= end);
    now.getLeasesList()
        .forEach(l -> truth.put(l.getName(), l.toBuilder().clearRemaining().build()));
    // Events carry the lease as of the change; renewals (not in the stream) move only renewal
    // fields.
    assertEquals(strip(truth), strip(cache));
  }

  private static Map<String, Lease> strip(Map<String, Lease> leases) {
    Map<String, Lease> out = new HashMap<>();
    leases.forEach(
        (k, v) ->
            out.put(
                k,
                v.toBuilder()
                    .clearState()
                    .clearRenewedAt()
                    .clearExpiresAt()
                    .clearLastRenewRevision()
                    .clearRenewCount()
                    .clearModRevision()
                    .clearDeadline()
                    .clearDeadlineRemaining()
                    .clearDeadlineSource()
                    .clearExtensions()
                    .build())); // read-time, as state is
    return out;
  }

  /**
   * One entry with more events than fit in one message (here 1,500 renewals in one Renew): every
   * event arrives, and no message claims the revision complete while more of its events follow, so
   * a client resuming from a claimed revision + 1 would miss nothing.
   */
  @Test
  void anEntryWithMoreEventsThanOneMessageHoldsIsNeverClaimedCompleteEarly() throws Exception {
    cluster = TestCluster.start(1, dir);
    String node = cluster.ids().get(0);
    io.leasehold.proto.v1.RenewRequest.Builder renew =
        io.leasehold.proto.v1.RenewRequest.newBuilder();
    for (int i = 0; i < 1500; i++) {
      long token =
          cluster.leases(node).acquire(acquire("lock/many-" + i, "h", 60)).getLease().getToken();
      renew.addItems(
          io.leasehold.proto.v1.RenewItem.newBuilder().setName("lock/many-" + i).setToken(token));
    }
    WatchRecorder live =
        WatchRecorder.watch(
            cluster,
            node,
            WatchRequest.newBuilder().setPrefix("lock/").setIncludeRenewals(true).build());
    TestCluster.await("the live watch started", Duration.ofSeconds(20), () -> live.responses() > 0);
    long revision = cluster.leases(node).renew(renew.build()).getRevision();
    live.awaitRevision(revision);
    assertEquals(1500, live.events().stream().filter(e -> e.getRevision() == revision).count());
    assertEquals(
        0,
        live.afterTheirClaim(),
        "a live message claimed the revision before all its events were sent");

    // The same from the history (renewals are not kept there; the 1,500 grants are, one per entry,
    // so this checks the chunking across many revisions).
    WatchRecorder history =
        WatchRecorder.watch(
            cluster,
            node,
            WatchRequest.newBuilder().setPrefix("lock/").setStartRevision(1).build());
    history.awaitRevision(revision);
    assertEquals(1500, history.events().size());
    assertEquals(0, history.afterTheirClaim());
  }

  /**
   * With many watchers the hub batches: one event message per watcher per coalescing interval (here
   * 20 watchers at 100 messages/s: the default 100 ms cap), still every event, in order, once.
   */
  @Test
  void manyWatchersGetEveryEventInOrderAtMostOneMessagePerCoalescingInterval() throws Exception {
    cluster = TestCluster.start(1, dir, b -> b.watchMessageRate(100));
    assertEveryEventInOrderAtMostOneMessagePer(Duration.ofMillis(100));
  }

  /**
   * A max delay above the default lets the budget decide: 20 watchers at 100 messages/s get one
   * message per 200 ms each. With the default cap they would get one per 100 ms, twice as many.
   */
  @Test
  void aLongerMaxDelayLetsManyWatchersWaitTheirShareOfTheBudget() throws Exception {
    cluster =
        TestCluster.start(
            1, dir, b -> b.watchMessageRate(100).watchMaxDelay(Duration.ofMillis(250)));
    assertEveryEventInOrderAtMostOneMessagePer(Duration.ofMillis(200));
  }

  private void assertEveryEventInOrderAtMostOneMessagePer(Duration interval) throws Exception {
    String id = cluster.ids().get(0);
    List<WatchRecorder> watchers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      watchers.add(
          WatchRecorder.watch(cluster, id, WatchRequest.newBuilder().setPrefix("fan/").build()));
    }
    for (WatchRecorder w : watchers) {
      w.awaitRevision(0);
    }
    List<Integer> responsesBefore = watchers.stream().map(WatchRecorder::responses).toList();
    long start = System.nanoTime();
    LeasesGrpc.LeasesBlockingStub leases = cluster.leases(id);
    long last = 0;
    List<Long> revisions = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      AcquireResponse r = leases.acquire(acquire("fan/" + i, "h", 60));
      assertEquals(Outcome.GRANTED, r.getOutcome());
      revisions.add(r.getRevision());
      last = r.getRevision();
    }
    for (WatchRecorder w : watchers) {
      w.awaitRevision(last);
    }
    double elapsedIntervals = (System.nanoTime() - start) / (double) interval.toNanos();
    for (int i = 0; i < watchers.size(); i++) {
      WatchRecorder w = watchers.get(i);
      assertEquals(
          revisions,
          w.events().stream().map(Event::getRevision).toList(),
          "every event, in order, once");
      assertEquals(0, w.afterTheirClaim());
      int messages = w.responses() - responsesBefore.get(i);
      // Progress messages are not sent while events are pending, so every message here carried
      // events; they are at least one interval apart.
      assertTrue(
          messages <= elapsedIntervals + 2,
          "at most one message per "
              + interval.toMillis()
              + " ms: "
              + messages
              + " messages in "
              + String.format("%.1f", elapsedIntervals)
              + " intervals");
    }
  }

  /**
   * Watchers with the same filter and view share their messages (see {@code WatchGroup}): one
   * builds a message, the others at the same place send it as it is. Four groups (a prefix in the
   * full view, the same prefix in the basic view, a longer prefix, routes only) and watchers that
   * join from history while the writes go on: each still gets exactly its own events, in order,
   * once, and no message claims a revision before all its events were sent.
   */
  @Test
  void watchersOfOneFilterAndViewShareTheirMessagesAndEachStillGetsExactlyItsEvents()
      throws Exception {
    cluster = TestCluster.start(1, dir, b -> b.watchMessageRate(200));
    WatchRequest all = WatchRequest.newBuilder().setPrefix("lock/s-").build();
    WatchRequest basic =
        all.toBuilder().setView(io.leasehold.proto.v1.EventView.EVENT_VIEW_BASIC).build();
    WatchRequest narrow = all.toBuilder().setPrefix("lock/s-1").build();
    WatchRequest routes = all.toBuilder().setRoutesOnly(true).build();
    WatchRecorder reference = WatchRecorder.watch(cluster, "n1", from(0));
    Map<WatchRecorder, WatchRequest> watchers = new java.util.LinkedHashMap<>();
    for (int i = 0; i < 10; i++) {
      for (WatchRequest r : List.of(all, basic, narrow, routes)) {
        watchers.put(WatchRecorder.watch(cluster, "n1", r), r);
      }
    }
    reference.awaitRevision(0);
    watchers.keySet().forEach(w -> w.awaitRevision(0));
    Random random = new Random(11);
    long middle = randomWorkload(random, 150, "lock/s-");
    for (int i = 0; i < 5; i++) {
      WatchRequest r =
          (i % 2 == 0 ? all : basic).toBuilder().setStartRevision(middle - 20 * i).build();
      watchers.put(WatchRecorder.watch(cluster, "n1", r), r);
    }
    long last = randomWorkload(random, 150, "lock/s-");
    reference.awaitRevision(last);
    watchers.keySet().forEach(w -> w.awaitRevision(last));

    List<Event> events = reference.events();
    assertTrue(
        events.stream()
            .anyMatch(
                e ->
                    e.getName().startsWith("lock/s-1")
                        && !e.getLease().getAttributes().getAddress().isEmpty()),
        "the workload reaches every group");
    for (Map.Entry<WatchRecorder, WatchRequest> w : watchers.entrySet()) {
      WatchRequest r = w.getValue();
      List<String> expected =
          events.stream()
              .filter(
                  e ->
                      e.getRevision() >= r.getStartRevision()
                          && e.getName().startsWith(r.getPrefix())
                          && (!r.getRoutesOnly()
                              || !e.getLease().getAttributes().getAddress().isEmpty()))
              .map(
                  e ->
                      e.getRevision()
                          + " "
                          + e.getType()
                          + " "
                          + e.getName()
                          + " "
                          + e.getLease().getToken())
              .toList();
      List<String> got =
          w.getKey().events().stream()
              .map(
                  e ->
                      e.getRevision()
                          + " "
                          + e.getType()
                          + " "
                          + e.getName()
                          + " "
                          + e.getLease().getToken())
              .toList();
      assertEquals(expected, got, "every event of its filter, in order, once: " + r);
      assertEquals(
          0,
          w.getKey().afterTheirClaim(),
          "an event came after its revision was claimed complete: " + r);
      if (r.getView() == io.leasehold.proto.v1.EventView.EVENT_VIEW_BASIC) {
        assertTrue(
            w.getKey().events().stream().noneMatch(e -> e.getLease().hasAcquiredAt()),
            "the basic view stays basic: " + r);
      } else {
        assertTrue(
            w.getKey().events().stream().allMatch(e -> e.getLease().hasAcquiredAt()),
            "the full view stays full: " + r);
      }
    }
    WatchHub hub = cluster.node("n1").watchHub();
    assertEquals(5, hub.watchGroups(), "four groups, and the reference watcher's");
    // Ten watchers a group: once their reads line up, nine of ten messages are shared.
    assertTrue(
        hub.sharedMessages() * 2 > hub.eventMessages(),
        "most messages are shared: " + hub.sharedMessages() + " of " + hub.eventMessages());
  }

  @Test
  void compactedStartRevisionFailsWithTheCompactionRevision() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.history(50, Duration.ofHours(1)));
    String node = cluster.ids().get(0);
    for (int i = 0; i < 120; i++) {
      cluster.leases(node).acquire(acquire("lock/c-" + i, "h", 60));
    }
    // The leader checks once a second; once writes stop, every replica is down to the bound.
    TestCluster.await(
        "every replica's history compacted to at most 50 events",
        Duration.ofSeconds(20),
        () -> {
          cluster.awaitConverged();
          return cluster.running().stream()
              .allMatch(
                  n ->
                      n.stateMachine().core().history().getCount() <= 50
                          && n.stateMachine().core().history().getCompactRevision() > 1);
        });
    long compact = cluster.node(node).stateMachine().core().history().getCompactRevision();

    WatchRecorder tooOld = WatchRecorder.watch(cluster, node, from(1));
    tooOld.awaitError();
    assertEquals(Status.Code.OUT_OF_RANGE, tooOld.status().getCode());
    assertTrue(
        tooOld.status().getDescription().contains("history starts at revision"),
        tooOld.status().getDescription());
    long reported =
        Long.parseLong(
            tooOld
                .trailers()
                .get(
                    Metadata.Key.of(
                        "leasehold-compact-revision", Metadata.ASCII_STRING_MARSHALLER)));
    assertTrue(reported >= compact, "the trailer carries the compaction revision");

    WatchRecorder fromCompact = WatchRecorder.watch(cluster, node, from(reported));
    // The store's revision: Ratis's own applied index also counts its configuration entries.
    long end = cluster.node(node).stateMachine().core().applied().index();
    fromCompact.awaitRevision(end);
    assertTrue(
        fromCompact.events().size() >= 40 && fromCompact.events().size() <= 50,
        "the retained history: " + fromCompact.events().size());
    assertEquals(
        reported,
        fromCompact.events().get(0).getRevision(),
        "the history starts at the compaction revision");
  }

  @Test
  void idleWatcherGetsProgressNotificationsWithTheAppliedRevision() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.watchProgressInterval(Duration.ofMillis(300)));
    String node = cluster.followers().get(0).id();
    WatchRecorder w =
        WatchRecorder.watch(cluster, node, WatchRequest.newBuilder().setPrefix("quiet/").build());
    AcquireResponse r = cluster.leases(node).acquire(acquire("lock/elsewhere", "h", 60));
    w.awaitRevision(r.getRevision());
    assertTrue(w.events().isEmpty(), "no event matches the prefix, but progress still moves");
    int before = w.responses();
    TestCluster.await(
        "more progress notifications", Duration.ofSeconds(5), () -> w.responses() >= before + 2);
  }

  @Test
  void watcherThatStopsReadingIsCutOffWithoutStallingWrites() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.watchQueueLimit(200));
    LeaseholdNode leader = cluster.awaitLeader();
    LeasesGrpc.LeasesStub async = LeasesGrpc.newStub(cluster.channel(leader.id()));
    int writes = 1500;

    // A client that asks for the stream and never reads it: after the HTTP/2 window fills, the
    // server can no longer send, the watcher's queue grows, and it is cut off.
    ClientCall<WatchRequest, WatchResponse> stuck =
        cluster.channel(leader.id()).newCall(LeasesGrpc.getWatchMethod(), CallOptions.DEFAULT);
    Status[] closed = new Status[1];
    stuck.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            closed[0] = status;
          }
        },
        new Metadata());
    stuck.sendMessage(WatchRequest.newBuilder().setStartRevision(0).build());
    stuck.halfClose();
    TestCluster.await(
        "the stuck watcher is registered",
        Duration.ofSeconds(10),
        () -> leader.watchHub().watchers() == 1);

    // Every write answered, each within its own deadline: a write path that waited on the stuck
    // watcher would stall them all. (How much a stuck watcher costs writes is a benchmark's
    // question, not this test's.)
    writeAll(async, "lock/stuck-", writes);
    TestCluster.await(
        "the stuck watcher is cut off",
        Duration.ofSeconds(20),
        () -> leader.watchHub().watchers() == 0);
    stuck.cancel("done", null);
  }

  /** Applies {@code count} acquires of ~1 KB leases, 32 in flight, and checks each is granted. */
  private static void writeAll(LeasesGrpc.LeasesStub async, String prefix, int count)
      throws Exception {
    Semaphore inFlight = new Semaphore(32);
    List<CompletableFuture<AcquireResponse>> all = new ArrayList<>();
    String padding = "x".repeat(1000);
    for (int i = 0; i < count; i++) {
      inFlight.acquire();
      CompletableFuture<AcquireResponse> f = new CompletableFuture<>();
      all.add(f);
      // Each write has a deadline, so a cluster that stops answering fails the test instead of
      // hanging it.
      async
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .acquire(
              acquire(prefix + i, "h", 60).toBuilder()
                  .setAttributes(Attributes.newBuilder().putMetadata("pad", padding))
                  .build(),
              new io.grpc.stub.StreamObserver<>() {
                @Override
                public void onNext(AcquireResponse value) {
                  f.complete(value);
                }

                @Override
                public void onError(Throwable t) {
                  f.completeExceptionally(t);
                  inFlight.release();
                }

                @Override
                public void onCompleted() {
                  inFlight.release();
                }
              });
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
    for (CompletableFuture<AcquireResponse> f : all) {
      assertEquals(Outcome.GRANTED, f.get().getOutcome());
    }
  }

  @Test
  void resolveNeverReturnsAnInstanceOnceItsEndingEventIsObserved() throws Exception {
    cluster = TestCluster.start(3, dir);
    String follower = cluster.followers().get(0).id();
    RegistryGrpc.RegistryBlockingStub registry =
        RegistryGrpc.newBlockingStub(cluster.channel(follower));
    WatchRecorder endings =
        WatchRecorder.watch(
            cluster,
            follower,
            WatchRequest.newBuilder()
                .setPrefix("service/pay/")
                .addTypes(Event.Type.RELEASED)
                .addTypes(Event.Type.EXPIRED)
                .build());
    endings.awaitRevision(0);
    RegisterResponse expiring =
        registry.register(
            RegisterRequest.newBuilder()
                .setService("pay")
                .setInstance("i-expiring")
                .setAddress("10.0.0.1:80")
                .setTtl(io.leasehold.server.Requests.seconds(2))
                .build());
    RegisterResponse leaving =
        registry.register(
            RegisterRequest.newBuilder()
                .setService("pay")
                .setInstance("i-leaving")
                .setAddress("10.0.0.2:80")
                .setTtl(io.leasehold.server.Requests.seconds(60))
                .build());
    assertEquals(Outcome.GRANTED, expiring.getOutcome());
    assertEquals(
        2,
        registry
            .resolve(ResolveRequest.newBuilder().setService("pay").build())
            .getInstancesCount());

    registry.deregister(
        DeregisterRequest.newBuilder()
            .setService("pay")
            .setInstance("i-leaving")
            .setToken(leaving.getInstance().getToken())
            .build());
    for (String ended : List.of("service/pay/i-leaving", "service/pay/i-expiring")) {
      TestCluster.await(
          "the ending of " + ended + " is observed",
          Duration.ofSeconds(10),
          () -> endings.events().stream().anyMatch(e -> e.getName().equals(ended)));
      // Right after the event, on every node: a linearizable Resolve reflects it.
      for (String id : cluster.ids()) {
        List<String> live =
            RegistryGrpc.newBlockingStub(cluster.channel(id))
                .resolve(ResolveRequest.newBuilder().setService("pay").build())
                .getInstancesList()
                .stream()
                .map(i -> "service/pay/" + i.getInstance())
                .toList();
        assertFalse(
            live.contains(ended),
            ended + " resolved on " + id + " after its ending event: " + live);
      }
    }
    assertEquals(
        List.of(Event.Reason.REASON_RELEASED, Event.Reason.REASON_EXPIRED),
        endings.events().stream().map(Event::getReason).toList());
  }

  private static Attributes instance(String address, String zone, String status) {
    return Attributes.newBuilder()
        .setAddress(address)
        .putMetadata("zone", zone)
        .setStatus(status)
        .build();
  }

  private long update(String name, long token, Attributes attributes) {
    return cluster
        .leases("n1")
        .update(
            UpdateRequest.newBuilder()
                .setName(name)
                .setToken(token)
                .setAttributes(attributes)
                .build())
        .getRevision();
  }

  /**
   * A watcher with an attribute filter hears a lease enter the filter (a grant, an update into it)
   * and leave it (an update out of it, an ending), and nothing of leases outside it, live and from
   * history alike; an update carries the attributes before it.
   */
  @Test
  void filteredWatcherHearsLeasesEnterAndLeaveItsFilter() throws Exception {
    cluster = TestCluster.start(1, dir);
    WatchRequest filtered =
        WatchRequest.newBuilder()
            .setPrefix("service/pay/")
            .addZones("eu-1a")
            .addStatuses("SERVING")
            .build();
    WatchRecorder live = WatchRecorder.watch(cluster, "n1", filtered);
    WatchRecorder routes =
        WatchRecorder.watch(
            cluster,
            "n1",
            WatchRequest.newBuilder().setPrefix("service/pay/").setRoutesOnly(true).build());
    live.awaitRevision(0);
    routes.awaitRevision(0);
    LeasesGrpc.LeasesBlockingStub leases = cluster.leases("n1");
    AcquireResponse x =
        leases.acquire(
            acquire("service/pay/x", "x", 60).toBuilder()
                .setAttributes(instance("10.0.0.1:80", "eu-1a", "SERVING"))
                .build());
    long first = x.getRevision();
    long tx = x.getLease().getToken();
    long ty =
        leases
            .acquire(
                acquire("service/pay/y", "y", 60).toBuilder()
                    .setAttributes(instance("10.0.0.2:80", "eu-1b", "SERVING"))
                    .build())
            .getLease()
            .getToken();
    update("service/pay/x", tx, instance("10.0.0.1:80", "eu-1a", "DRAINING")); // leaves
    update(
        "service/pay/x",
        tx,
        instance("10.0.0.1:80", "eu-1a", "DRAINING").toBuilder().putMetadata("v", "2").build());
    update("service/pay/y", ty, instance("10.0.0.2:80", "eu-1a", "SERVING")); // enters
    update("service/pay/x", tx, instance("10.0.0.1:80", "eu-1a", "SERVING")); // enters again
    update("service/pay/y", ty, instance("", "eu-1a", "SERVING")); // no address any more
    leases.release(release("service/pay/y", ty)); // ends in the filter
    long z =
        leases
            .acquire(
                acquire("service/pay/z", "z", 60).toBuilder()
                    .setAttributes(instance("10.0.0.3:80", "eu-1b", "SERVING"))
                    .build())
            .getLease()
            .getToken();
    long last = leases.release(release("service/pay/z", z)).getRevision();
    WatchRecorder history =
        WatchRecorder.watch(cluster, "n1", filtered.toBuilder().setStartRevision(first).build());
    List<String> expected =
        List.of(
            "ACQUIRED service/pay/x SERVING",
            "UPDATED service/pay/x DRAINING was SERVING",
            "UPDATED service/pay/y SERVING was SERVING",
            "UPDATED service/pay/x SERVING was DRAINING",
            "UPDATED service/pay/y SERVING was SERVING",
            "RELEASED service/pay/y SERVING");
    for (WatchRecorder w : List.of(live, history)) {
      w.awaitRevision(last);
      assertEquals(expected, w.events().stream().map(WatchTest::describe).toList());
    }
    assertEquals(
        "eu-1b",
        live.events().get(2).getPreviousAttributes().getMetadataOrThrow("zone"),
        "y's update carries the zone it came from");
    // A route filter hears the update that removed y's address, and nothing after it of y.
    routes.awaitRevision(last);
    List<String> ofY =
        routes.events().stream()
            .filter(e -> e.getName().equals("service/pay/y"))
            .map(e -> e.getType() + " " + e.getLease().getAttributes().getAddress())
            .toList();
    assertEquals(
        List.of("ACQUIRED 10.0.0.2:80", "UPDATED 10.0.0.2:80", "UPDATED "), ofY, "y's route");
  }

  private static String describe(Event e) {
    return e.getType()
        + " "
        + e.getName()
        + " "
        + e.getLease().getAttributes().getStatus()
        + (e.hasPreviousAttributes() ? " was " + e.getPreviousAttributes().getStatus() : "");
  }

  @Test
  void badWatchRequestsAreInvalidArguments() throws Exception {
    cluster = TestCluster.start(1, dir);
    for (var c :
        List.of(
            new Object[] {WatchRequest.newBuilder().setStartRevision(-1).build(), "start_revision"},
            new Object[] {WatchRequest.newBuilder().addTypesValue(42).build(), "types[0]"},
            new Object[] {
              WatchRequest.newBuilder().addTypes(Event.Type.TYPE_UNSPECIFIED).build(), "types[0]"
            },
            new Object[] {WatchRequest.newBuilder().setPrefix("a\u0001").build(), "prefix"},
            new Object[] {WatchRequest.newBuilder().setViewValue(7).build(), "view"},
            new Object[] {
              WatchRequest.newBuilder().addZones("a").addZones("a").build(), "zones[1]"
            },
            new Object[] {WatchRequest.newBuilder().addStatuses("").build(), "statuses[0]"},
            new Object[] {WatchRequest.newBuilder().putMetadata("", "x").build(), "metadata"})) {
      WatchRecorder w = WatchRecorder.watch(cluster, "n1", (WatchRequest) c[0]);
      w.awaitError();
      assertEquals(Status.Code.INVALID_ARGUMENT, w.status().getCode());
      assertNotNull(w.status().getDescription());
      assertTrue(w.status().getDescription().startsWith(c[1] + ":"), w.status().getDescription());
    }
  }
}
