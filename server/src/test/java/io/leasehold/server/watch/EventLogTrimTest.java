package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.Status;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.TestCluster;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.store.InMemoryStore;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hub's ticker unlinks the log's nodes that every watcher has read past, so that a node the
 * collector promoted (dead or alive, a root of every young collection) does not keep the rest of
 * the log alive behind it; and it never unlinks a node a watcher has still to read past.
 */
class EventLogTrimTest {
  private final LeaseCore core = new LeaseCore(new InMemoryStore());

  /** A ticker every 10 ms (a quarter of the progress interval): it trims on every tick. */
  private final WatchHub hub =
      new WatchHub(() -> core, 100_000, Duration.ofMillis(40), 1_000_000, 1);

  private long index;

  @AfterEach
  void close() {
    hub.close();
  }

  @Test
  void aNodeEveryWatcherHasReadPastNoLongerHoldsTheNodesAfterIt() throws Exception {
    Stream watcher = started();
    acquire("x/0");
    // Held here as a promoted node is held by a young collection: dead to every reader, and a root.
    EventLog.Node first = hub.log().tail();
    acquire("x/1");
    WeakReference<EventLog.Node> second = new WeakReference<>(first.next);
    assertNotNull(second.get());
    for (int i = 2; i < 50; i++) {
      acquire("x/" + i);
    }
    await(() -> watcher.revisions().size() == 50, "the watcher got the 50 events");
    await(() -> first.next == null, "the ticker unlinked the first node from the second");
    await(
        () -> {
          System.gc();
          return second.get() == null;
        },
        "the second node was collected once nothing but the first node had linked to it");
    assertEquals(LongStream.rangeClosed(1, 50).boxed().toList(), watcher.revisions());
  }

  @Test
  void aWatcherThatHasNotReadKeepsTheLogAheadOfItsCursorWhileAnotherReadsOnAndTheLogIsTrimmed()
      throws Exception {
    Stream stalled = started();
    Stream reading = started();
    stalled.stall();
    for (int i = 0; i < 50; i++) {
      acquire("x/" + i);
    }
    await(() -> reading.revisions().size() == 50, "the reading watcher got the 50 events");
    int progress = reading.progressMessages();
    await(
        () -> reading.progressMessages() >= progress + 3,
        "the ticker ran (and trimmed) three times more");
    assertEquals(List.of(), stalled.revisions());
    stalled.ready();
    await(
        () -> stalled.revisions().size() == 50,
        "the stalled watcher got the 50 events once it read");
    assertEquals(reading.revisions(), stalled.revisions());
    assertNull(stalled.error);
  }

  /**
   * The metrics' watch lag: what the furthest-behind watcher has yet to read, 0 once it has read it
   * all.
   */
  @Test
  void theLagIsWhatTheFurthestBehindWatcherHasYetToRead() throws Exception {
    assertEquals(0, hub.maxLagEvents(), "no watcher, no lag");
    Stream stalled = started();
    Stream reading = started();
    stalled.stall();
    for (int i = 0; i < 30; i++) {
      acquire("x/" + i);
    }
    await(() -> reading.revisions().size() == 30, "the reading watcher got the 30 events");
    assertEquals(30, hub.maxLagEvents(), "the stalled watcher has read none of them");
    stalled.ready();
    await(() -> stalled.revisions().size() == 30, "the stalled watcher read them once ready");
    assertEquals(0, hub.maxLagEvents());
  }

  /**
   * A watcher whose stream never became ready has sent nothing (see Watcher), but its cursor still
   * holds the log: once too far behind it is dropped from the hub like any other, and told why if
   * its stream ever becomes ready.
   */
  @Test
  void aWatcherWhoseStreamNeverBecameReadyIsCutOffOnceTooFarBehind() throws Exception {
    try (WatchHub small = new WatchHub(() -> core, 10, Duration.ofMillis(40), 1_000_000, 1)) {
      Stream never = new Stream();
      small.watch(WatchRequest.newBuilder().setPrefix("x/").build(), never);
      for (int i = 0; i < 20; i++) {
        acquire(small, "x/" + i);
      }
      await(
          () -> small.watchers() == 0,
          "the ticker dropped the watcher 20 events behind (limit 10)");
      assertEquals(0, never.progressMessages());
      assertNull(never.error, "nothing sent before the stream was first ready");
      never.ready();
      await(() -> never.error != null, "the watcher was told why once its stream was ready");
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, Status.fromThrowable(never.error).getCode());
      assertEquals(
          0, never.progressMessages(), "and only that: no start claiming events it never sent");
    }
  }

  private void acquire(String name) throws Exception {
    acquire(hub, name);
  }

  private void acquire(WatchHub to, String name) throws Exception {
    index++;
    to.onApplied(core.apply(1, index, TestCommands.acquire(name, index)));
  }

  /**
   * A watcher of "x/" from now on, ready, once it has said where it starts (its cursor is then at
   * the log's end).
   */
  private Stream started() {
    Stream out = new Stream();
    hub.watch(WatchRequest.newBuilder().setPrefix("x/").build(), out);
    out.ready();
    await(() -> out.progressMessages() > 0, "the watcher started");
    return out;
  }

  private static void await(BooleanSupplier condition, String what) {
    TestCluster.await(what, Duration.ofSeconds(10), condition);
  }

  /** A stream that is ready only once the test says so; records what the hub's sender sends. */
  private static final class Stream extends TestStream {
    private final List<Long> revisions = new ArrayList<>();
    private int progressMessages;
    private volatile Runnable onReady;

    void ready() {
      ready = true;
      onReady.run();
    }

    void stall() {
      ready = false;
    }

    synchronized List<Long> revisions() {
      return List.copyOf(revisions);
    }

    synchronized int progressMessages() {
      return progressMessages;
    }

    @Override
    public synchronized void onNext(WatchFrame frame) {
      frame.events().forEach(e -> revisions.add(e.revision()));
      if (frame.events().isEmpty()) {
        progressMessages++;
      }
    }

    @Override
    public void setOnReadyHandler(Runnable onReadyHandler) {
      onReady = onReadyHandler;
    }
  }
}
