package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.Events;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.store.InMemoryStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How watchers of one group share messages, step by step: the watchers here read a log the test
 * appends to, and run only when the test drains their sender queue, so every interleaving below is
 * the one written down. (WatchTest covers the same through real streams, with timing left to the
 * hub.)
 */
class WatchGroupTest {
  private final LeaseCore core = new LeaseCore(new InMemoryStore());

  /**
   * Only for what watchers ask of it (the store, counters); its own log and ticker are not used.
   */
  private final WatchHub hub = new WatchHub(() -> core, 100_000, Duration.ofHours(1), 1_000_000, 1);

  private final EventLog log = new EventLog();
  private final WatchGroup.Key key =
      new WatchGroup.Key(WatchFilter.of(WatchRequest.newBuilder().setPrefix("x/").build()), false);
  private final WatchGroup group = new WatchGroup(key);
  private long index;

  private final List<Recorded> streams = new ArrayList<>();

  @AfterEach
  void close() {
    try {
      for (Recorded w : streams) {
        assertEquals(
            0,
            w.afterTheirClaim,
            "an event came after a message had claimed its revision complete");
        assertNull(w.error);
      }
    } finally {
      hub.close();
    }
  }

  /**
   * A watcher of the test's group, registered at the log's current end and started (it has said
   * where it starts).
   */
  private Recorded started() {
    Recorded w = watcher(0);
    run(w);
    return w;
  }

  /** A watcher of the test's group, registered at the log's current end. */
  private Recorded watcher(long startRevision) {
    Recorded out = new Recorded();
    out.watcher = new Watcher(hub, log, group, startRevision, out, out.tasks::add, 100_000);
    streams.add(out);
    return out;
  }

  /**
   * Lets the watcher send one message of events (a coalescing interval would keep it to one; the
   * test's stream stops being ready after each).
   */
  private void run(Recorded w) {
    w.ready = true;
    w.watcher.onReady(); // as gRPC reports a stream that became ready
    runQueued(w);
  }

  /**
   * Runs the watcher's queued sender runs. One that keeps rescheduling itself spins, and fails
   * here.
   */
  private static void runQueued(Recorded w) {
    for (int runs = 0; !w.tasks.isEmpty(); runs++) {
      assertTrue(runs < 1_000, "the watcher's runner keeps rescheduling itself");
      w.tasks.poll().run();
    }
  }

  /** One entry of {@code n} events in the log (not in the store). */
  private void append(long revision, int n) {
    List<WireEvent> events =
        IntStream.range(0, n)
            .mapToObj(
                i ->
                    WireEvent.of(
                        Event.newBuilder()
                            .setType(Event.Type.ACQUIRED)
                            .setRevision(revision)
                            .setName("x/" + revision + "-" + i)
                            .setLease(
                                Lease.newBuilder()
                                    .setName("x/" + revision + "-" + i)
                                    .setHolder("h")
                                    .setToken(revision * 10_000 + i))
                            .build()))
            .toList();
    log.append(events, revision);
  }

  /**
   * Applies an acquisition to the store, as the apply thread does before the hub sees its events;
   * returns them.
   */
  private List<WireEvent> applyToStore(String name) throws Exception {
    index++;
    ApplyResult result = core.apply(1, index, TestCommands.acquire(name, index));
    return result.events().stream().map(e -> WireEvent.of(Events.toApi(e))).toList();
  }

  /**
   * A watcher is registered, and can be woken (by an applied entry, the ticker, a close), while
   * gRPC's thread is still in the service method: it must not use the stream before gRPC first
   * reports it ready, which gRPC does only once that method has returned.
   */
  @Test
  void aWatcherSendsNothingBeforeGrpcFirstReportsItsStreamReady() {
    Recorded w = new Recorded(); // not in streams: it ends with an error on purpose
    w.watcher = new Watcher(hub, log, group, 0, w, w.tasks::add, 100_000);
    w.ready = true; // isReady() may already say yes while the service method runs
    append(1, 2);
    w.watcher.schedule();
    w.watcher.close(Status.UNAVAILABLE);
    runQueued(w);
    assertEquals(List.of(), w.all, "nothing sent before gRPC's first onReady");
    assertNull(w.error);
    w.watcher.onReady();
    runQueued(w);
    assertEquals(List.of(), w.all, "closed before it started, it sends no start");
    assertEquals(
        Status.Code.UNAVAILABLE,
        Status.fromThrowable(w.error).getCode(),
        "only the status it was closed with");
  }

  @Test
  void watchersAtTheSamePlaceSendTheSameFrameBuiltOnce() {
    Recorded a = started();
    Recorded b = started();
    append(1, 3);
    run(a);
    append(2, 2);
    run(b);
    // b stood where a read from: it sends a's message, the same object, and stops where a stopped.
    assertSame(a.frames.get(0), b.frames.get(0));
    assertEquals(1, hub.sharedMessages());
    run(b);
    run(a);
    assertSame(b.frames.get(1), a.frames.get(1), "now a shares what b built");
    for (Recorded w : List.of(a, b)) {
      assertEquals(List.of(1L, 1L, 1L, 2L, 2L), w.revisions());
      assertEquals(List.of(1L, 2L), w.claims());
    }
    assertEquals(4, hub.eventMessages());
    assertEquals(2, hub.sharedMessages());
  }

  /**
   * A watcher behind the group's last read (here it joined between two entries) reads only to where
   * that read ended, even inside an entry, and claims only the revision before that entry: the rest
   * of the entry follows. From there on it shares.
   */
  @Test
  void aWatcherBehindItsGroupReadsToTheGroupsPlaceThenShares() {
    Recorded a = started();
    append(5, 600);
    Recorded late = started();
    append(6, 600);
    run(a);
    // a's first message is full: 600 of revision 5 and 400 of revision 6, so it claims only 5.
    assertEquals(1000, a.frames.get(0).events().size());
    assertEquals(5, a.frames.get(0).revision());
    run(late);
    run(late);
    List<WatchFrame> frames = late.frames;
    assertEquals(
        List.of(400, 200),
        frames.stream().map(f -> f.events().size()).toList(),
        "up to where a stopped, inside revision 6, then the rest (which late read and left for a)");
    assertEquals(List.of(5L, 6L), late.claims());
    run(a);
    assertSame(frames.get(1), a.frames.get(1));
    assertEquals(List.of(5L, 6L), a.claims());
    assertEquals(1200, a.revisions().size());
    assertEquals(a.revisions().subList(600, 1200), late.revisions());
  }

  /**
   * A read in which nothing matched is shared too: the others skip it, then read on to the end of
   * the log in the same turn. A progress message due in that turn claims everything the hub had
   * applied when the turn began, so it must come after those events, never before them.
   */
  @Test
  void aReadWhereNothingMatchedIsSkippedAndTheRestSentBeforeAnyProgressClaim() {
    Recorded a = started();
    Recorded b = started();
    b.watcher.tick(System.nanoTime(), 0); // idle: a progress message is now due (b runs later)
    log.append(
        List.of(
            WireEvent.of(
                Event.newBuilder()
                    .setType(Event.Type.ACQUIRED)
                    .setRevision(1)
                    .setName("y/other")
                    .build())),
        1);
    run(a);
    assertEquals(List.of(), a.revisions());
    append(2, 1);
    hub.onApplied(
        new ApplyResult(2, io.leasehold.proto.v1.LogReply.getDefaultInstance(), List.of()));
    run(b);
    run(b);
    assertEquals(
        List.of(2L),
        b.revisions(),
        "b skipped revision 1 with a's read and read revision 2 itself");
    assertEquals(0, b.afterTheirClaim, "revision 2 came after a message had claimed it complete");
    assertEquals(0, hub.sharedMessages(), "no message was sent for revision 1");
    run(a);
    assertSame(b.frames.get(0), a.frames.get(0));
  }

  /**
   * An entry can be in the store, and so in a new watcher's start, before its events reach the log
   * behind the watcher's cursor. A group read that starts there carries that entry again: the
   * watcher must not send it, whether it started from now or from history.
   */
  @Test
  void aWatcherThatStartedPastAnEntryNeverTakesAGroupReadThatCarriesIt() throws Exception {
    Recorded a = started();
    List<WireEvent> first = applyToStore("x/one");
    Recorded now = watcher(0);
    Recorded history = watcher(1);
    log.append(first, 1);
    run(a);
    assertEquals(List.of(1L), a.revisions());
    run(now);
    run(history);
    assertEquals(List.of(), now.revisions(), "it started at revision 1, which it was told first");
    assertEquals(1L, now.all.get(0).revision());
    assertEquals(List.of(1L), history.revisions(), "from history, once");
    assertEquals(0, hub.sharedMessages());
    assertNull(now.error);
    assertNull(history.error);
    // From the next entry on, now shares. history has not read the log yet: it reads up to the
    // group's place (skipping revision 1, which it sent from the store), then shares too.
    log.append(applyToStore("x/two"), 2);
    run(a);
    run(now);
    run(history);
    assertEquals(List.of(2L), now.revisions());
    assertEquals(List.of(1L, 2L), history.revisions());
    assertEquals(1, hub.sharedMessages());
    log.append(applyToStore("x/three"), 3);
    run(a);
    run(now);
    run(history);
    for (Recorded w : List.of(a, now)) {
      assertEquals(List.of(1L, 2L, 3L).subList(w == a ? 0 : 1, 3), w.revisions());
    }
    assertEquals(List.of(1L, 2L, 3L), history.revisions());
    assertEquals(3, hub.sharedMessages());
    assertSame(a.frames.get(2), history.frames.get(2));
  }

  /**
   * A watch stream that records what it was sent, and takes one message of events per {@link #run}.
   */
  private static final class Recorded extends TestStream {
    Watcher watcher;

    /** Its sender runs, queued until the test runs them. */
    final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    /** Events at or below a revision an earlier message claimed complete. */
    int afterTheirClaim;

    long claimed = -1;
    final List<WatchFrame> frames = new ArrayList<>();
    final List<WatchFrame> all = new ArrayList<>();

    List<Long> revisions() {
      return frames.stream().flatMap(f -> f.events().stream()).map(WireEvent::revision).toList();
    }

    /** What each message with events claimed complete. */
    List<Long> claims() {
      return frames.stream().map(WatchFrame::revision).toList();
    }

    @Override
    public void onNext(WatchFrame frame) {
      all.add(frame);
      afterTheirClaim += (int) frame.events().stream().filter(e -> e.revision() <= claimed).count();
      claimed = Math.max(claimed, frame.revision());
      if (!frame.events().isEmpty()) {
        frames.add(frame);
        ready = false;
      } else {
        assertTrue(
            frames.isEmpty() || frame.revision() >= frames.get(frames.size() - 1).revision(),
            "claims never go back");
      }
    }
  }
}
