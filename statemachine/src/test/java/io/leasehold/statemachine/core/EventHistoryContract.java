package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.at;
import static io.leasehold.statemachine.core.Cmds.attrs;
import static io.leasehold.statemachine.core.Cmds.expire;
import static io.leasehold.statemachine.core.Cmds.expiry;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.update;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.FieldMask;
import io.leasehold.proto.v1.CompactHistoryResponse;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.StoredEvent;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreKind;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The event history kept by {@link LeaseCore}, run against every {@link KvStore}: which applied
 * changes are persisted and how, what {@link LeaseCore#readHistory} returns, and replicated
 * compaction.
 */
public abstract class EventHistoryContract extends CoreFixture {

  // ---- what is persisted ----

  @Test
  void acquirePersistsOneAcquiredEventWithTheGrantedLeaseAndTheEntryTime() throws IOException {
    granted(apply(1, T0, acquire("lock/x", "zed")));
    ApplyResult r = apply(2, T0 + 5 * SECOND, acquire("svc/pay/1", "alice", secs(10), A1));
    Lease lease = granted(r).getLease();

    List<Stored> at2 = storedAt(2);
    assertEquals(
        List.of(
            new Stored(2, 0, event(Event.Type.ACQUIRED, 2, "svc/pay/1", lease, T0 + 5 * SECOND))),
        at2);
    Event e = at2.get(0).event();
    assertEquals(Event.Reason.REASON_UNSPECIFIED, e.getReason());
    assertEquals("alice", e.getLease().getHolder());
    assertEquals(2, e.getLease().getToken());
    assertEquals(A1, e.getLease().getAttributes());
    assertEquals(at(T0 + 5 * SECOND), e.getLease().getAcquiredAt());
    assertFalse(e.getLease().hasRemaining(), "a stored event must not depend on a local clock");
    assertEquals(view("svc/pay/1"), e.getLease());
    assertEquals(
        e, Events.toApi(r.events().get(0)), "history and live delivery give the same event");
    assertEquals(meta(0, 2), core.history());
    // The count is kept in memory (recounted on load): recording an event writes only the event.
    assertEquals(Optional.empty(), rawHistoryMeta());
  }

  @Test
  void aStoredEventCarriesTheLeaseRecordAsWrittenForTheLease() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1)));
    LeaseRecord written = held("svc/pay/1");
    apply(2, T0 + SECOND, release("svc/pay/1", 1));
    StoredEvent acquired =
        StoredEvent.parseFrom(store.get(Space.EVENTS, Events.key(1, 0)).orElseThrow());
    assertEquals(Event.Type.ACQUIRED, acquired.getType());
    assertEquals("svc/pay/1", acquired.getName());
    assertEquals(T0, acquired.getTimeMicros());
    assertEquals(written, acquired.getLease());
    StoredEvent released =
        StoredEvent.parseFrom(store.get(Space.EVENTS, Events.key(2, 0)).orElseThrow());
    assertEquals(Event.Type.RELEASED, released.getType());
    assertEquals(acquired.getLease(), released.getLease(), "the ended lease as it was");
    assertEquals("alice", released.getLease().getHolder());
    assertEquals(1, released.getLease().getToken());
    assertEquals(A1, released.getLease().getAttributes());
  }

  @Test
  void updatePersistsOneUpdatedEventWithTheNewAttributesAndThoseBefore() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1)));
    ApplyResult r = apply(2, T0 + 2 * SECOND, update("svc/pay/1", 1, A2));
    assertEquals(Outcome.UPDATED, r.reply().getUpdate().getOutcome());

    Lease lease = r.reply().getUpdate().getLease();
    assertEquals(
        List.of(
            new Stored(
                2,
                0,
                event(Event.Type.UPDATED, 2, "svc/pay/1", lease, T0 + 2 * SECOND).toBuilder()
                    .setPreviousAttributes(A1)
                    .build())),
        storedAt(2));
    assertEquals(A2, lease.getAttributes());
    assertEquals(2, lease.getModRevision());
    assertEquals(view("svc/pay/1"), lease);
    assertEquals(meta(0, 2), core.history());
  }

  @Test
  void releasePersistsReleasedWithItsReasonAndTheLeaseAsItWas() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(60), A1)));
    apply(2, T0 + SECOND, renew("lock/a", 1));
    Lease asItWas = view("lock/a");

    ApplyResult r = apply(3, T0 + 3 * SECOND, release("lock/a", 1));
    assertEquals(Outcome.RELEASED, r.reply().getRelease().getOutcome());

    List<Stored> at3 = storedAt(3);
    assertEquals(
        List.of(
            new Stored(3, 0, event(Event.Type.RELEASED, 3, "lock/a", asItWas, T0 + 3 * SECOND))),
        at3);
    assertEquals(Event.Reason.REASON_RELEASED, at3.get(0).event().getReason());
    assertEquals(
        2, at3.get(0).event().getLease().getModRevision(), "the lease as it was, not as deleted");
    assertEquals(meta(0, 2), core.history());
  }

  @Test
  void expirePersistsExpiredWithItsReasonAndTheLeaseAsItWas() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10), A2)));
    Lease asItWas = view("lock/a");

    ApplyResult r = apply(2, T0 + 11 * SECOND, expire("lock/a", 1, 1));
    assertEquals(1, r.reply().getExpire().getExpired());

    List<Stored> at2 = storedAt(2);
    assertEquals(
        List.of(
            new Stored(2, 0, event(Event.Type.EXPIRED, 2, "lock/a", asItWas, T0 + 11 * SECOND))),
        at2);
    assertEquals(Event.Reason.REASON_EXPIRED, at2.get(0).event().getReason());
    assertEquals(meta(0, 2), core.history());
  }

  @Test
  void eventTimeIsTheEntrysMonotoneLeaderTime() throws IOException {
    granted(apply(1, T0 + 10 * SECOND, acquire("lock/a", "alice", secs(10))));
    ApplyResult behind =
        apply(2, T0, update("lock/a", 1, A1)); // a new leader whose clock is behind
    ApplyResult unstamped = apply(3, 0, update("lock/a", 1, A2)); // an entry without a stamp
    granted(apply(4, T0 + 20 * SECOND, acquire("lock/b", "bob")));
    assertEquals(T0 + 10 * SECOND, behind.events().get(0).timeMicros());
    assertEquals(T0 + 10 * SECOND, unstamped.events().get(0).timeMicros());

    assertEquals(
        List.of(
            at(T0 + 10 * SECOND), at(T0 + 10 * SECOND), at(T0 + 10 * SECOND), at(T0 + 20 * SECOND)),
        stored().stream().map(s -> s.event().getTime()).collect(Collectors.toList()));
  }

  @Test
  void renewalsAreNotPersisted() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10), A1)));
    granted(apply(2, T0, acquire("lock/b", "bob", secs(10))));
    List<Stored> before = stored();
    Optional<String> metaBefore = rawHistoryMeta();

    ApplyResult batch = apply(3, T0 + SECOND, renew(item("lock/a", 1), item("lock/b", 2)));
    ApplyResult sameAttributes =
        apply(4, T0 + 2 * SECOND, acquire("lock/a", "alice", secs(10), A1));
    ApplyResult bare = apply(5, T0 + 3 * SECOND, acquire("lock/b", "bob"));
    ApplyResult newTtl = apply(6, T0 + 4 * SECOND, acquire("lock/b", "bob", secs(30)));
    // The renewals happened and were delivered live...
    assertEquals(List.of("RENEWED@3:lock/a", "RENEWED@3:lock/b"), describe(batch.events()));
    assertEquals(List.of("RENEWED@4:lock/a"), describe(sameAttributes.events()));
    assertEquals(List.of("RENEWED@5:lock/b"), describe(bare.events()));
    assertEquals(List.of("RENEWED@6:lock/b"), describe(newTtl.events()));
    assertEquals(3, held("lock/b").getRenewCount());

    // ...but none reached the history, and its bounds were not rewritten.
    assertEquals(before, stored());
    assertEquals(metaBefore, rawHistoryMeta());
    assertEquals(meta(0, 2), core.history());
    assertEquals(List.of(), history(3));
  }

  @Test
  void reacquireThatChangesAttributesPersistsOnlyItsUpdate() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1)));

    ApplyResult r = apply(2, T0 + SECOND, acquire("svc/pay/1", "alice", secs(30), A2));
    assertEquals(List.of("RENEWED@2:svc/pay/1", "UPDATED@2:svc/pay/1"), describe(r.events()));
    Lease lease = granted(r).getLease();

    assertEquals(
        List.of(
            new Stored(
                2,
                0,
                event(Event.Type.UPDATED, 2, "svc/pay/1", lease, T0 + SECOND).toBuilder()
                    .setPreviousAttributes(A1)
                    .build())),
        storedAt(2),
        "the renewal part is dropped and the update takes sequence 0");
    assertEquals(A2, lease.getAttributes());
    assertEquals(1, lease.getRenewCount(), "the update carries the renewed lease");
    assertEquals(secs(30), lease.getTtl());
    assertEquals(meta(0, 2), core.history());
  }

  @Test
  void batchExpirePersistsOneEventPerExpiredItemInItemOrder() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    granted(apply(2, T0, acquire("lock/b", "bob")));
    granted(apply(3, T0, acquire("lock/c", "carol")));
    granted(apply(4, T0, acquire("lock/d", "dave")));
    Lease a = view("lock/a");
    Lease b = view("lock/b");
    Lease c = view("lock/c");

    long t = T0 + 20 * SECOND;
    ApplyResult r =
        apply(
            5,
            t,
            expire(
                expiry("lock/c", 3, 3),
                expiry("lock/d", 4, 3),
                expiry("lock/a", 1, 1),
                expiry("lock/gone", 1, 1),
                expiry("lock/c", 3, 3),
                expiry("lock/b", 2, 2)));
    assertEquals(3, r.reply().getExpire().getExpired());
    assertEquals(3, r.reply().getExpire().getSkipped());

    assertEquals(
        List.of(
            new Stored(5, 0, event(Event.Type.EXPIRED, 5, "lock/c", c, t)),
            new Stored(5, 1, event(Event.Type.EXPIRED, 5, "lock/a", a, t)),
            new Stored(5, 2, event(Event.Type.EXPIRED, 5, "lock/b", b, t))),
        storedAt(5));
    assertEquals(meta(0, 7), core.history());
    assertEquals(
        List.of("lock/c", "lock/a", "lock/b"),
        history(5).stream().map(Event::getName).collect(Collectors.toList()));
  }

  @Test
  void entriesThatChangeNoLeasePersistNothing() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10), A1)));
    List<Stored> before = stored();
    Optional<String> metaBefore = rawHistoryMeta();

    LogCommand.Builder[] nothing = {
      acquire("lock/a", "bob"), // conflict
      acquire("lock/b", "bob", secs(1)), // TTL rejected
      renew("lock/b", 1), // not held
      release("lock/b", 1), // not held
      update("lock/b", 1, A2), // not held
      expire(expiry("lock/a", 1, 0), expiry("lock/b", 1, 1)), // all skipped
      acquire("nons", "bob"), // invalid name
      release("lock/a", 99), // invalid: never issued
      LogCommand.newBuilder()
          .setUpdate(
              UpdateRequest.newBuilder()
                  .setName("lock/a")
                  .setToken(1)
                  .setAttributes(A2)
                  .setUpdateMask(FieldMask.newBuilder().addPaths("zone"))), // invalid mask
      LogCommand.newBuilder(), // no command
      compact(0), // not above the compact revision
    };
    long index = 1;
    for (LogCommand.Builder c : nothing) {
      index++;
      ApplyResult r = apply(index, T0 + index * SECOND, c);
      assertTrue(r.events().isEmpty(), () -> "events for " + c);
      assertEquals(index, core.applied().index());
    }
    // A replayed entry that would otherwise grant.
    assertTrue(apply(index, T0, acquire("lock/z", "zed")).events().isEmpty());

    assertEquals(before, stored());
    assertEquals(metaBefore, rawHistoryMeta());
    assertEquals(meta(0, 1), core.history());
  }

  @Test
  void historyCountTracksTheKeptEventsThroughACommandMix() throws IOException {
    RandomWorkload w = new RandomWorkload(99);
    long kept = 0;
    int compactions = 0;
    for (int i = 0; i < 800; i++) {
      RandomWorkload.Step s = w.next();
      ApplyResult r = core.apply(s.term(), s.index(), s.command());
      w.observe(r);
      kept += r.events().stream().filter(e -> e.type() != LeaseEvent.Type.RENEWED).count();
      if (r.reply().hasCompactHistory()) {
        kept -= r.reply().getCompactHistory().getRemoved();
        compactions += r.reply().getCompactHistory().getRemoved() > 0 ? 1 : 0;
      }
      long count = kept;
      assertEquals(count, core.history().getCount(), () -> "count after " + s);
      assertEquals(count, stored().size(), () -> "stored events after " + s);
    }
    assertTrue(compactions >= 2, "the workload compacted only " + compactions + " times");
    assertTrue(kept >= 5, "history left with " + kept + " events");
  }

  // ---- reading ----

  /**
   * Entries 1-8 with events at 1, 2, 4, 5 (two), 7 and 8, and none at 3 and 6; returns the events.
   */
  private List<Event> mixedHistory() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10))));
    granted(apply(2, T0 + SECOND, acquire("lock/b", "bob", secs(10))));
    apply(3, T0 + 2 * SECOND, renew("lock/a", 1));
    apply(4, T0 + 3 * SECOND, update("lock/a", 1, A1));
    assertEquals(
        2,
        apply(5, T0 + 20 * SECOND, expire(expiry("lock/b", 2, 2), expiry("lock/a", 1, 3)))
            .reply()
            .getExpire()
            .getExpired());
    apply(6, T0 + 21 * SECOND, acquire("nons", "x"));
    granted(apply(7, T0 + 22 * SECOND, acquire("lock/c", "carol", secs(10), A2)));
    apply(8, T0 + 23 * SECOND, release("lock/c", 7));
    List<Event> all = stored().stream().map(Stored::event).collect(Collectors.toList());
    assertEquals(
        List.of(
            "ACQUIRED@1:lock/a",
            "ACQUIRED@2:lock/b",
            "UPDATED@4:lock/a",
            "EXPIRED@5:lock/b",
            "EXPIRED@5:lock/a",
            "ACQUIRED@7:lock/c",
            "RELEASED@8:lock/c"),
        describeApi(all));
    return all;
  }

  private static List<String> describeApi(List<Event> events) {
    return events.stream()
        .map(e -> e.getType() + "@" + e.getRevision() + ":" + e.getName())
        .collect(Collectors.toList());
  }

  private static List<Event> from(List<Event> all, long revision) {
    return all.stream().filter(e -> e.getRevision() >= revision).collect(Collectors.toList());
  }

  @Test
  void readHistoryFromAMiddleRevisionReturnsExactlyTheEventsFromThereInOrder() throws IOException {
    List<Event> all = mixedHistory();

    assertEquals(
        List.of(
            "UPDATED@4:lock/a",
            "EXPIRED@5:lock/b",
            "EXPIRED@5:lock/a",
            "ACQUIRED@7:lock/c",
            "RELEASED@8:lock/c"),
        describeApi(history(3)),
        "from a revision without events: the next ones");
    assertEquals(
        List.of("EXPIRED@5:lock/b", "EXPIRED@5:lock/a", "ACQUIRED@7:lock/c", "RELEASED@8:lock/c"),
        describeApi(history(5)),
        "from a revision with two events: both, in their entry's order");
    for (long from = 0; from <= 10; from++) {
      assertEquals(from(all, from), history(from), "from " + from);
    }
    assertEquals(List.of(), history(9));

    List<Event> seen = new ArrayList<>();
    LeaseCore.HistoryRead read = core.readHistory(4, seen::add);
    assertEquals(new LeaseCore.HistoryRead(false, 0, 8), read);
    assertEquals(from(all, 4), seen);
  }

  @Test
  void readHistoryOnAnEmptyHistoryVisitsNothing() throws IOException {
    assertEquals(
        new LeaseCore.HistoryRead(false, 0, 0),
        core.readHistory(
            0,
            e -> {
              throw new AssertionError(e);
            }));
    apply(1, T0, expire("lock/a", 1, 1));
    assertEquals(
        new LeaseCore.HistoryRead(false, 0, 1),
        core.readHistory(
            1,
            e -> {
              throw new AssertionError(e);
            }));
    assertEquals(HistoryMeta.getDefaultInstance(), core.history());
  }

  // ---- compaction ----

  @Test
  void compactionDropsExactlyTheEventsBelowTheRevision() throws IOException {
    List<Event> all = mixedHistory();
    granted(apply(9, T0 + 24 * SECOND, acquire("lock/live", "lee")));
    all.add(storedAt(9).get(0).event());
    var leasesBefore = leases();

    assertEquals(compactReply(5, 3, 10), compacted(apply(10, T0 + 24 * SECOND, compact(5))));
    assertEquals(
        from(all, 5),
        stored().stream().map(Stored::event).collect(Collectors.toList()),
        "events at 5 stay: the bound is exclusive");
    assertEquals(meta(5, 5), core.history());
    assertEquals(from(all, 5), history(5));
    assertEquals(leasesBefore, leases(), "compaction leaves the leases alone");

    // Both events of entry 5 go together; a bound at a revision without events removes nothing
    // below it.
    assertEquals(compactReply(6, 2, 11), compacted(apply(11, T0 + 25 * SECOND, compact(6))));
    assertEquals(meta(6, 3), core.history());
    assertEquals(compactReply(7, 0, 12), compacted(apply(12, T0 + 26 * SECOND, compact(7))));
    assertEquals(meta(7, 3), core.history());
    assertEquals(from(all, 7), history(7));
    assertEquals(from(all, 7), stored().stream().map(Stored::event).collect(Collectors.toList()));
  }

  @Test
  void readHistoryFromBelowTheCompactRevisionReportsCompactedAndVisitsNothing() throws IOException {
    mixedHistory();
    compacted(apply(9, T0 + 24 * SECOND, compact(5)));

    for (long from : new long[] {0, 1, 4}) {
      List<Event> seen = new ArrayList<>();
      assertEquals(
          new LeaseCore.HistoryRead(true, 5, 9), core.readHistory(from, seen::add), "from " + from);
      assertEquals(List.of(), seen, "from " + from);
    }
    assertEquals(new LeaseCore.HistoryRead(false, 5, 9), core.readHistory(5, e -> {}));
    assertEquals(new LeaseCore.HistoryRead(false, 5, 9), core.readHistory(9, e -> {}));
  }

  @Test
  void compactionNotAboveTheCompactRevisionIsANoop() throws IOException {
    // On a fresh history: nothing to do, and no bounds are written.
    assertEquals(compactReply(0, 0, 1), compacted(apply(1, T0, compact(0))));
    assertEquals(compactReply(0, 0, 2), compacted(apply(2, T0, compact(-5))));
    assertEquals(Optional.empty(), rawHistoryMeta());

    granted(apply(3, T0, acquire("lock/a", "alice")));
    granted(apply(4, T0, acquire("lock/b", "bob")));
    granted(apply(5, T0, acquire("lock/c", "carol")));
    assertEquals(compactReply(4, 1, 6), compacted(apply(6, T0, compact(4))));
    List<Stored> before = stored();
    String metaBefore = rawHistoryMeta().orElseThrow();

    long index = 6;
    for (long below : new long[] {4, 3, 1, 0, -1, Long.MIN_VALUE}) {
      index++;
      assertEquals(
          compactReply(4, 0, index), compacted(apply(index, T0, compact(below))), "below " + below);
      assertEquals(before, stored());
      assertEquals(metaBefore, rawHistoryMeta().orElseThrow());
    }
    assertEquals(meta(4, 2), core.history());
  }

  @Test
  void compactionNeverDropsBeyondItsOwnIndex() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    granted(apply(2, T0, acquire("lock/b", "bob")));
    apply(3, T0, release("lock/a", 1));

    assertEquals(compactReply(4, 3, 4), compacted(apply(4, T0, compact(1_000))));
    assertEquals(meta(4, 0), core.history());
    assertEquals(List.of(), stored());

    // Later events are in the history, from the compaction's own index on.
    granted(apply(5, T0, acquire("lock/c", "carol")));
    List<Event> later = stored().stream().map(Stored::event).collect(Collectors.toList());
    assertEquals(1, later.size());
    assertEquals(later, history(4));
    assertEquals(later, history(5));
    assertEquals(new LeaseCore.HistoryRead(true, 4, 5), core.readHistory(3, e -> {}));
    assertEquals(meta(4, 1), core.history());

    assertEquals(compactReply(6, 1, 6), compacted(apply(6, T0, compact(Long.MAX_VALUE))));
    assertEquals(meta(6, 0), core.history());
    assertEquals(
        compactReply(6, 0, 7),
        compacted(apply(7, T0, compact(6))),
        "the capped bound is the one recorded");
  }

  @Test
  void historyBoundsSurviveARestartOfTheCore() throws IOException {
    mixedHistory();
    compacted(apply(9, T0 + 24 * SECOND, compact(5)));
    HistoryMeta bounds = core.history();
    List<Stored> events = stored();

    core = new LeaseCore(store);
    assertEquals(bounds, core.history());
    assertEquals(events, stored());
    assertEquals(
        compactReply(5, 0, 10),
        compacted(apply(10, T0 + 30 * SECOND, compact(5))),
        "the restarted core knows the compact revision");
    granted(apply(11, T0 + 30 * SECOND, acquire("lock/d", "dave")));
    assertEquals(meta(5, 5), core.history(), "the restarted core counts on from the stored count");
    assertEquals(compactReply(8, 3, 12), compacted(apply(12, T0 + 31 * SECOND, compact(8))));
    assertEquals(meta(8, 2), core.history());
  }

  @Test
  void compactionLeavesReplicasByteIdentical() throws IOException {
    KvStore second = newStore(tempDir.resolve("replica-2"));
    KvStore reference = new InMemoryStore();
    try {
      List<LeaseCore> replicas =
          new ArrayList<>(List.of(core, new LeaseCore(second), new LeaseCore(reference)));
      List<LogCommand.Builder> log = new ArrayList<>();
      log.add(acquire("lock/a", "alice", secs(10), A1));
      log.add(acquire("lock/b", "bob", secs(10), A2));
      log.add(renew(item("lock/a", 1), item("lock/b", 2)));
      log.add(update("lock/a", 1, A2));
      log.add(acquire("lock/c", "carol"));
      log.add(compact(3)); // drops the events at 1 and 2
      log.add(expire(expiry("lock/c", 5, 5), expiry("lock/b", 2, 3)));
      log.add(compact(3)); // a no-op
      log.add(acquire("lock/d", "dave", secs(5), attrs("10.0.0.9:1", "", Map.of("k", "v"))));
      log.add(compact(5)); // drops the update at 4
      log.add(release("lock/a", 1));
      log.add(compact(1_000)); // capped at its own index: drops everything
      log.add(acquire("lock/e", "erin"));
      List<CompactHistoryResponse> replies = new ArrayList<>();
      long index = 0;
      for (LogCommand.Builder c : log) {
        index++;
        ApplyResult first = null;
        for (int i = 0; i < replicas.size(); i++) {
          ApplyResult r =
              replicas
                  .get(i)
                  .apply(TERM, index, c.setLeaderTimeMicros(T0 + index * SECOND).build());
          if (first == null) {
            first = r;
          } else {
            assertEquals(first.reply(), r.reply(), "reply of replica " + i + " at " + index);
          }
        }
        if (first.reply().hasCompactHistory()) {
          replies.add(first.reply().getCompactHistory());
        }
        if (index == 8) {
          // One replica restarts between compactions.
          replicas.set(1, new LeaseCore(second));
        }
        byte[] dump = StoreKind.dump(store);
        assertArrayEquals(dump, StoreKind.dump(second), "replica 2 at " + index);
        assertArrayEquals(dump, StoreKind.dump(reference), "in-memory reference at " + index);
      }
      assertEquals(
          List.of(
              compactReply(3, 2, 6),
              compactReply(3, 0, 8),
              compactReply(5, 1, 10),
              compactReply(12, 5, 12)),
          replies);
      for (LeaseCore replica : replicas) {
        assertEquals(meta(12, 1), replica.history());
        List<Event> events = new ArrayList<>();
        assertEquals(
            new LeaseCore.HistoryRead(false, 12, 13), replica.readHistory(12, events::add));
        assertEquals(List.of("ACQUIRED@13:lock/e"), describeApi(events));
      }
    } finally {
      second.close();
      reference.close();
    }
  }
}
