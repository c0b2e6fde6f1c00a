package io.leasehold.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Conflict;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseEvent;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The queue of waiting Acquires with every delivery under the test's control: each proposal's
 * reply, each applied entry, and the order of the two. The queue's thread is drained after each
 * step, so what it did is known, not waited for.
 */
class AcquireWaitsQueueTest {
  private static final String NAME = "lock/q";

  private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor();
  private final ArrayDeque<Proposal> proposed = new ArrayDeque<>();
  private final AcquireWaits waits =
      new AcquireWaits(this::propose, thread, TimeUnit.SECONDS.toNanos(60));

  private record Proposal(LogCommand command, CompletableFuture<LogReply> reply) {}

  private synchronized CompletableFuture<LogReply> propose(LogCommand command) {
    CompletableFuture<LogReply> f = new CompletableFuture<>();
    proposed.add(new Proposal(command, f));
    return f;
  }

  private synchronized Proposal nextProposal() {
    return proposed.poll();
  }

  @AfterEach
  void stop() {
    waits.close();
    thread.shutdownNow();
  }

  /** Runs everything the queue's thread has been given so far. */
  private void drain() throws Exception {
    for (int i = 0; i < 3; i++) {
      thread.submit(() -> {}).get(10, TimeUnit.SECONDS);
    }
  }

  private Caller submit(String holder) throws Exception {
    Caller c = new Caller();
    LogCommand command =
        LogCommand.newBuilder()
            .setAcquire(
                AcquireRequest.newBuilder()
                    .setName(NAME)
                    .setHolder(holder)
                    .setRequestId("id-" + holder))
            .build();
    assertTrue(waits.submit(command, TimeUnit.SECONDS.toNanos(60), c, c));
    drain();
    return c;
  }

  private static LogReply conflict(long revision, long token) {
    return LogReply.newBuilder()
        .setAcquire(
            AcquireResponse.newBuilder()
                .setOutcome(Outcome.CONFLICT)
                .setRevision(revision)
                .setConflict(Conflict.newBuilder().setHolder("someone").setToken(token)))
        .build();
  }

  private static LogReply granted(long revision, long token, String holder) {
    return LogReply.newBuilder()
        .setAcquire(
            AcquireResponse.newBuilder()
                .setOutcome(Outcome.GRANTED)
                .setRevision(revision)
                .setLease(Lease.newBuilder().setName(NAME).setHolder(holder).setToken(token)))
        .build();
  }

  private void applied(long revision, long endedToken) throws Exception {
    waits.onApplied(
        new ApplyResult(
            revision,
            LogReply.getDefaultInstance(),
            List.of(
                new LeaseEvent(
                    LeaseEvent.Type.RELEASED,
                    revision,
                    NAME,
                    LeaseRecord.newBuilder().setToken(endedToken).build(),
                    0)),
            List.of()));
    drain();
  }

  private void reply(Proposal p, LogReply reply) throws Exception {
    p.reply().complete(reply);
    drain();
  }

  @Test
  void aConflictAndTheEndOfThatLeaseInOneEntryWakeTheHeadWhicheverArrivesFirst() throws Exception {
    applied(9, 1);
    // One entry (revision 10) decides A's conflict with token 2560 and then releases that lease.
    Caller a = submit("a");
    Proposal first = nextProposal();
    assertNotNull(first);
    reply(first, conflict(10, 2560));
    applied(10, 2560);
    Proposal again = nextProposal();
    assertNotNull(again, "the head asks again: the lease it conflicted with has ended");
    assertEquals("a", again.command().getAcquire().getHolder());
    reply(again, granted(11, 2816, "a"));
    assertEquals(Outcome.GRANTED, a.outcome());

    // The same with the applied entry seen before the reply.
    Caller b = submit("b");
    Proposal third = nextProposal();
    applied(12, 2816); // a's release, in the entry that also decided b's conflict with a
    reply(third, conflict(12, 2816));
    Proposal fourth = nextProposal();
    assertNotNull(fourth, "the head asks again when the end came first");
    reply(fourth, granted(13, 3328, "b"));
    assertEquals(Outcome.GRANTED, b.outcome());
    assertEquals(0, waits.waiting());
  }

  @Test
  void onlyTheHeadAsksAndTheQueueIsServedInOrder() throws Exception {
    Caller a = submit("a");
    Caller b = submit("b");
    Caller c = submit("c");
    Proposal p = nextProposal();
    assertEquals("a", p.command().getAcquire().getHolder());
    assertNull(nextProposal(), "only the head asks");
    reply(p, conflict(20, 100));
    assertNull(nextProposal(), "the head waits for the lease it conflicted with to end");
    applied(21, 99);
    assertNull(nextProposal(), "the end of an older lease of the name is not the one it waits for");

    applied(22, 100);
    p = nextProposal();
    assertEquals("a", p.command().getAcquire().getHolder());
    reply(p, granted(23, 200, "a"));
    assertEquals(Outcome.GRANTED, a.outcome());
    assertNull(nextProposal(), "b waits for a's lease to end");

    applied(24, 200);
    p = nextProposal();
    assertEquals("b", p.command().getAcquire().getHolder());
    reply(p, granted(25, 300, "b"));
    assertEquals(Outcome.GRANTED, b.outcome());
    assertFalse(c.answered());
    applied(26, 300);
    p = nextProposal();
    assertEquals("c", p.command().getAcquire().getHolder());
    reply(p, granted(27, 400, "c"));
    assertEquals(Outcome.GRANTED, c.outcome());
  }

  @Test
  void attemptsAfterTheFirstCarryIdsOfTheirOwn() throws Exception {
    submit("a");
    Proposal p = nextProposal();
    assertEquals("id-a", p.command().getAcquire().getRequestId());
    reply(p, conflict(30, 500));
    applied(31, 500);
    p = nextProposal();
    assertNotEquals(
        "id-a",
        p.command().getAcquire().getRequestId(),
        "the core would answer a known id with its first reply");
    assertFalse(p.command().getAcquire().getRequestId().isEmpty());
  }

  @Test
  void aConflictTheCoreRememberedFromBeforeTheCallIsAskedAgainAtOnce() throws Exception {
    applied(50, 1);
    submit("a");
    Proposal p = nextProposal();
    // A reply decided at revision 40, before this node had applied 50: a retried id's old answer.
    reply(p, conflict(40, 600));
    assertNotNull(
        nextProposal(), "asked again rather than waiting on a lease that may have ended long ago");
  }

  @Test
  void aParkedHeadAsksAgainAfterAWhileIfNoEndArrives() throws Exception {
    // A node that catches up by a snapshot applies no events for what the snapshot skipped.
    asksAgainWithoutAnEnd(
        new AcquireWaits(this::propose, thread, TimeUnit.MILLISECONDS.toNanos(100)));
  }

  @Test
  void aHeadOnANodeThatDoesNotApplyTheNamesEntriesAsksAgainSoon() throws Exception {
    // Lease groups on subsets of the nodes: no end of the lease reaches this node as an event, so
    // the head asks at its own pace, well before the hour-long recheck.
    asksAgainWithoutAnEnd(
        new AcquireWaits(this::propose, thread, TimeUnit.HOURS.toNanos(1), name -> false));
  }

  /** A head refused by a conflict asks again within 10 s though no end arrives, and is granted. */
  private void asksAgainWithoutAnEnd(AcquireWaits waits) throws Exception {
    Caller a = new Caller();
    waits.submit(
        LogCommand.newBuilder()
            .setAcquire(AcquireRequest.newBuilder().setName(NAME).setHolder("a"))
            .build(),
        TimeUnit.SECONDS.toNanos(60),
        a,
        a);
    drain();
    reply(nextProposal(), conflict(70, 800));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    Proposal again = null;
    while (again == null && System.nanoTime() < deadline) {
      thread.schedule(() -> {}, 20, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
      again = nextProposal();
    }
    assertNotNull(again, "the head asked again without an end");
    reply(again, granted(80, 900, "a"));
    assertEquals(Outcome.GRANTED, a.outcome());
    waits.close();
  }

  @Test
  void aGrantToACallThatWentAwayIsLeftToItsHolder() throws Exception {
    // The caller's attempt is out when its call goes away (a deadline, a dropped connection)...
    Caller a = submit("a");
    Proposal p = nextProposal();
    a.cancel();
    drain();
    // ...and the caller sends it again elsewhere with the same id, which the core answers with
    // this grant: releasing it here would leave that caller holding a lease the cluster gave on.
    reply(p, granted(60, 700, "a"));
    assertFalse(a.answered(), "nobody to answer");
    assertNull(nextProposal(), "no release, nor anything else, is proposed for it");
    assertEquals(0, waits.waiting());
  }

  /** A call as gRPC hands it to the service, and how the queue answered it. */
  private static final class Caller extends ServerCallStreamObserver<AcquireResponse>
      implements AcquireWaits.Answer {
    private Runnable onCancel;
    private volatile LogReply reply;
    private volatile Throwable error;

    void cancel() {
      onCancel.run();
    }

    boolean answered() {
      return reply != null || error != null;
    }

    Outcome outcome() {
      assertNull(error);
      assertNotNull(reply, "answered");
      return reply.getAcquire().getOutcome();
    }

    @Override
    public void accept(LogReply r, Throwable e) {
      reply = r;
      error = e;
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
      onCancel = handler;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setCompression(String compression) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void onNext(AcquireResponse value) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }
}
