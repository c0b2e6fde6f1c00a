package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.policy;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static io.leasehold.statemachine.core.Cmds.update;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.store.AppliedPosition;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Log format 2 ({@link LogFormat}): entries carrying a batch of client commands, and tokens {@code
 * index * 256 + position}. Run on every store.
 */
public abstract class BatchContract extends CoreFixture {

  private static LogCommand.Builder formatTwo() {
    return LogCommand.newBuilder()
        .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.BATCHES));
  }

  private static LogCommand.Builder batch(LogCommand.Builder... commands) {
    CommandBatch.Builder b = CommandBatch.newBuilder();
    for (LogCommand.Builder c : commands) {
      b.addCommands(c);
    }
    return LogCommand.newBuilder().setBatch(b);
  }

  private static long token(long index, int position) {
    return index * 256 + position;
  }

  @Test
  void aStoreWithoutARecordedFormatAppliesFormatOne() throws IOException {
    assertEquals(LogFormat.FIRST, core.logFormat());
    assertEquals(3, granted(apply(3, T0, acquire("lock/a", "alice"))).getLease().getToken());
  }

  @Test
  void raisingTheFormatMakesTokensTheIndexTimes256() throws IOException {
    LogReply raised = apply(1, T0, formatTwo()).reply();
    assertEquals(LogFormat.BATCHES, raised.getSetLogFormat().getFormat());
    assertEquals(LogFormat.BATCHES, core.logFormat());

    ApplyResult r = apply(2, T0, acquire("lock/a", "alice"));
    assertEquals(token(2, 0), granted(r).getLease().getToken());
    assertEquals(2, r.revision(), "the revision stays the entry's index");
    assertEquals(2, granted(r).getRevision());
  }

  @Test
  void theFormatSurvivesAReloadAndNeverGoesDown() throws IOException {
    apply(1, T0, formatTwo());
    apply(2, T0, LogCommand.newBuilder().setSetLogFormat(SetLogFormat.newBuilder().setFormat(1)));
    apply(
        3,
        T0,
        LogCommand.newBuilder()
            .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.NEWEST + 1)));
    assertEquals(LogFormat.BATCHES, core.logFormat(), "a lower or unknown format changes nothing");

    LeaseCore reloaded = new LeaseCore(store);
    assertEquals(LogFormat.BATCHES, reloaded.logFormat());
  }

  @Test
  void tokensKeepIncreasingAcrossTheSwitch() throws IOException {
    long before = granted(apply(5, T0, acquire("lock/a", "alice"))).getLease().getToken();
    apply(6, T0, formatTwo());
    long after = granted(apply(7, T0, acquire("lock/b", "bob"))).getLease().getToken();
    assertEquals(5, before);
    assertTrue(
        after > before,
        "format 2 tokens are above every format 1 token: " + after + " vs " + before);
  }

  @Test
  void aBatchAppliesEachCommandInOrderWithItsOwnTokenAndReply() throws IOException {
    apply(1, T0, formatTwo());
    ApplyResult r =
        apply(
            2,
            T0 + SECOND,
            batch(
                acquire("lock/a", "alice", secs(10)),
                acquire("lock/b", "bob", secs(10)),
                release("lock/a", token(2, 0)),
                acquire("lock/a", "carol", secs(10))));

    List<LogReply> replies = r.reply().getBatch().getRepliesList();
    assertEquals(4, replies.size());
    assertEquals(token(2, 0), replies.get(0).getAcquire().getLease().getToken());
    assertEquals(token(2, 1), replies.get(1).getAcquire().getLease().getToken());
    assertEquals(
        Outcome.RELEASED,
        replies.get(2).getRelease().getOutcome(),
        "a later command sees an earlier one's grant");
    assertEquals(Outcome.GRANTED, replies.get(3).getAcquire().getOutcome());
    assertEquals(token(2, 3), replies.get(3).getAcquire().getLease().getToken());
    assertEquals("carol", held("lock/a").getHolder());
    assertEquals(token(2, 3), held("lock/a").getToken());
    assertEquals(new AppliedPosition(TERM, 2), core.applied());

    // Every event carries the entry's index as its revision, and the history keeps them in order.
    assertTrue(r.events().stream().allMatch(e -> e.revision() == 2));
    List<Event> kept = history(2);
    assertEquals(
        List.of(Event.Type.ACQUIRED, Event.Type.ACQUIRED, Event.Type.RELEASED, Event.Type.ACQUIRED),
        kept.stream().map(Event::getType).toList());
    assertEquals(
        List.of("lock/a", "lock/b", "lock/a", "lock/a"),
        kept.stream().map(Event::getName).toList());
  }

  @Test
  void anInvalidCommandInABatchChangesNothingAndTheOthersStillApply() throws IOException {
    apply(1, T0, formatTwo());
    ApplyResult r =
        apply(
            2,
            T0,
            batch(
                acquire("lock/a", "alice"),
                release("lock/b", token(2, 5)), // a token not issued yet: bad input
                acquire("", "bob"), // no name
                setPolicy("lock", policy()), // not a client lease command
                acquire("lock/c", "carol")));

    List<LogReply> replies = r.reply().getBatch().getRepliesList();
    assertEquals(Outcome.GRANTED, replies.get(0).getAcquire().getOutcome());
    assertEquals("token", replies.get(1).getInvalid().getField());
    assertEquals("name", replies.get(2).getInvalid().getField());
    assertEquals("batch.commands[3]", replies.get(3).getInvalid().getField());
    assertEquals(Outcome.GRANTED, replies.get(4).getAcquire().getOutcome());
    assertEquals(token(2, 4), replies.get(4).getAcquire().getLease().getToken());
    assertEquals(
        List.of("lock/a", "lock/c"),
        core.store()
            .read(
                v -> {
                  java.util.List<String> names = new java.util.ArrayList<>();
                  v.scan(
                      io.leasehold.statemachine.store.Space.LEASES,
                      new byte[0],
                      new byte[0],
                      (k, val) -> names.add(new String(k)) || true);
                  return names;
                }));
  }

  @Test
  void aBatchUnderFormatOneIsANoOpAsANodeThatPredatesBatchesAppliesIt() throws IOException {
    ApplyResult r = apply(2, T0, batch(acquire("lock/a", "alice"), acquire("lock/b", "bob")));
    assertEquals("batch", r.reply().getInvalid().getField());
    assertTrue(r.events().isEmpty());
    assertFalse(record("lock/a").isPresent());
    assertEquals(new AppliedPosition(TERM, 2), core.applied());
  }

  @Test
  void aRequestIdAppliedEarlierInTheSameBatchIsAnsweredAsThen() throws IOException {
    apply(1, T0, formatTwo());
    LogCommand.Builder first = acquire("lock/a", "alice");
    first.getAcquireBuilder().setRequestId("req-1");
    LogCommand.Builder retry = acquire("lock/a", "alice");
    retry.getAcquireBuilder().setRequestId("req-1");
    ApplyResult r = apply(2, T0, batch(first, retry));
    List<LogReply> replies = r.reply().getBatch().getRepliesList();
    assertEquals(
        replies.get(0).getAcquire(),
        replies.get(1).getAcquire(),
        "the retry gets the first one's reply");
    assertEquals(0, held("lock/a").getRenewCount(), "and changes nothing");

    ApplyResult later = apply(3, T0, retry);
    assertEquals(
        replies.get(0).getAcquire(), later.reply().getAcquire(), "as it does in a later entry");
  }

  @Test
  void renewalsAndUpdatesInABatchSeeTheGrantBeforeThem() throws IOException {
    apply(1, T0, formatTwo());
    ApplyResult r =
        apply(
            2,
            T0,
            batch(
                acquire("lock/a", "alice", secs(10)),
                renew("lock/a", token(2, 0)),
                update("lock/a", token(2, 0), A1)));
    List<LogReply> replies = r.reply().getBatch().getRepliesList();
    assertEquals(Outcome.RENEWED, replies.get(1).getRenew().getResults(0).getOutcome());
    assertEquals(Outcome.UPDATED, replies.get(2).getUpdate().getOutcome());
    assertEquals(A1, held("lock/a").getAttributes());
    assertEquals(1, held("lock/a").getRenewCount());
  }

  @Test
  void aReplayedBatchIsSkippedWhole() throws IOException {
    apply(1, T0, formatTwo());
    LogCommand.Builder entry = batch(acquire("lock/a", "alice"), acquire("lock/b", "bob"));
    apply(2, T0, entry);
    ApplyResult again = new LeaseCore(store).apply(TERM, 2, entry.setLeaderTimeMicros(T0).build());
    assertTrue(again.events().isEmpty(), "an entry at or below the applied index changes nothing");
    assertEquals(token(2, 1), held("lock/b").getToken());
  }
}
