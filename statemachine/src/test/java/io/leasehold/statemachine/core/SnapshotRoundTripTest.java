package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.CompactHistory;
import io.leasehold.proto.v1.CompactHistoryResponse;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.statemachine.store.AppliedPosition;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.StoreKind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A snapshot carries the whole state: a replica restored from it is indistinguishable from its
 * source.
 */
class SnapshotRoundTripTest {
  @TempDir Path tempDir;

  private final List<KvStore> opened = new ArrayList<>();
  private int dirs;

  @AfterEach
  void closeAll() {
    opened.forEach(KvStore::close);
  }

  private KvStore open(StoreKind kind) throws IOException {
    KvStore s = kind.open(tempDir.resolve("db" + (dirs++)));
    opened.add(s);
    return s;
  }

  /** Applies {@code steps} entries of a seeded workload; returns the workload to continue it. */
  private static RandomWorkload run(LeaseCore core, long seed, int steps) throws IOException {
    RandomWorkload w = new RandomWorkload(seed);
    for (int i = 0; i < steps; i++) {
      RandomWorkload.Step s = w.next();
      w.observe(core.apply(s.term(), s.index(), s.command()));
    }
    return w;
  }

  @ParameterizedTest
  @EnumSource(StoreKind.class)
  void restoredReplicasMatchTheirSource(StoreKind sourceKind) throws IOException {
    KvStore source = open(sourceKind);
    LeaseCore sourceCore = new LeaseCore(source);
    RandomWorkload w = run(sourceCore, 42, 500);
    assertTrue(sourceCore.forEachLease((n, l) -> {}) > 0);
    assertTrue(
        sourceCore.history().getCompactRevision() > 0 && sourceCore.history().getCount() > 10,
        () -> "the snapshot should carry a compacted, non-empty history: " + sourceCore.history());
    byte[] snapshot = StoreKind.dump(source);

    List<LeaseCore> restored = new ArrayList<>();
    for (StoreKind kind : StoreKind.values()) {
      KvStore target = open(kind);
      // The target had a life before: the snapshot must replace it, not merge into it.
      run(new LeaseCore(target), 7, 50);
      StoreKind.load(target, snapshot);
      LeaseCore core = new LeaseCore(target);
      restored.add(core);

      assertArrayEquals(snapshot, StoreKind.dump(target), kind + ": dump after load");
      assertEquals(source.applied(), target.applied(), kind + ": applied position");
      assertEquals(sourceCore.applied(), core.applied());
      long now = T0 + 30 * SECOND;
      assertEquals(
          sourceCore.list(ListRequest.getDefaultInstance(), now),
          core.list(ListRequest.getDefaultInstance(), now));
      for (String name : RandomWorkload.NAMES) {
        GetRequest g = GetRequest.newBuilder().setName(name).build();
        assertEquals(sourceCore.get(g, now), core.get(g, now), kind + ": get " + name);
      }
      assertEquals(sourceCore.history(), core.history(), kind + ": history bounds");
      long compactRevision = sourceCore.history().getCompactRevision();
      assertEquals(
          events(sourceCore, compactRevision), events(core, compactRevision), kind + ": history");
    }

    // The next entries give the same replies everywhere, including the clock restored from the
    // snapshot.
    for (int i = 0; i < 50; i++) {
      RandomWorkload.Step s = w.next();
      ApplyResult expected = sourceCore.apply(s.term(), s.index(), s.command());
      for (LeaseCore core : restored) {
        ApplyResult actual = core.apply(s.term(), s.index(), s.command());
        assertEquals(expected.reply(), actual.reply(), "reply at " + s.index());
        assertEquals(expected.events(), actual.events(), "events at " + s.index());
      }
      w.observe(expected);
    }
    byte[] after = StoreKind.dump(source);
    for (LeaseCore core : restored) {
      assertArrayEquals(after, StoreKind.dump(core.store()));
    }
  }

  /**
   * The events a core's history holds from {@code fromRevision}, failing if it reports compaction.
   */
  private static List<Event> events(LeaseCore core, long fromRevision) {
    List<Event> out = new ArrayList<>();
    assertFalse(core.readHistory(fromRevision, out::add).compacted());
    return out;
  }

  @ParameterizedTest
  @EnumSource(StoreKind.class)
  void snapshotCarriesTheHistoryAndItsBounds(StoreKind sourceKind) throws IOException {
    KvStore source = open(sourceKind);
    LeaseCore sourceCore = new LeaseCore(source);
    long t = T0;
    sourceCore.apply(1, 1, Cmds.acquire("lock/a", "alice").setLeaderTimeMicros(t).build());
    sourceCore.apply(1, 2, Cmds.acquire("lock/b", "bob").setLeaderTimeMicros(t += SECOND).build());
    sourceCore.apply(
        1,
        3,
        Cmds.update("lock/a", 1, Cmds.attrs("10.0.0.1:1", "SERVING", java.util.Map.of()))
            .setLeaderTimeMicros(t += SECOND)
            .build());
    sourceCore.apply(1, 4, compact(3).setLeaderTimeMicros(t += SECOND).build());
    sourceCore.apply(1, 5, Cmds.release("lock/b", 2).setLeaderTimeMicros(t += SECOND).build());
    sourceCore.apply(
        1, 6, Cmds.acquire("lock/c", "carol").setLeaderTimeMicros(t += SECOND).build());
    HistoryMeta bounds = HistoryMeta.newBuilder().setCompactRevision(3).setCount(3).build();
    assertEquals(bounds, sourceCore.history());
    List<Event> history = events(sourceCore, 3);
    assertEquals(List.of(3L, 5L, 6L), history.stream().map(Event::getRevision).toList());
    byte[] snapshot = StoreKind.dump(source);

    for (StoreKind kind : StoreKind.values()) {
      KvStore target = open(kind);
      // A replica with a longer life of its own (events at later revisions, other bounds) that
      // installs the snapshot and reloads, as the Ratis state machine does.
      LeaseCore core = new LeaseCore(target);
      RandomWorkload w = new RandomWorkload(5);
      for (int i = 0; i < 200; i++) {
        RandomWorkload.Step s = w.next();
        w.observe(core.apply(s.term(), s.index(), s.command()));
      }
      assertTrue(
          core.history().getCount() > 0 && !core.history().equals(bounds),
          () -> "prior life: " + core.history());
      StoreKind.load(target, snapshot);
      core.reload();

      assertEquals(bounds, core.history(), kind + ": bounds");
      assertEquals(history, events(core, 3), kind + ": events, and only the snapshot's");
      List<Event> visited = new ArrayList<>();
      assertEquals(
          new LeaseCore.HistoryRead(true, 3, 6),
          core.readHistory(2, visited::add),
          kind + ": below the bound");
      assertEquals(List.of(), visited);

      // The reloaded bounds drive the next compactions exactly as on the source.
      // {index, below, expected compact revision, expected removed}: a no-op, then a real one.
      for (long[] step : new long[][] {{7, 3, 3, 0}, {8, 6, 6, 2}}) {
        LogCommand c = compact(step[1]).setLeaderTimeMicros(t).build();
        ApplyResult expected = sourceCore.apply(1, step[0], c);
        ApplyResult actual = core.apply(1, step[0], c);
        assertEquals(
            CompactHistoryResponse.newBuilder()
                .setCompactRevision(step[2])
                .setRemoved(step[3])
                .setRevision(step[0])
                .build(),
            actual.reply().getCompactHistory(),
            kind + ": compaction at " + step[0]);
        assertEquals(expected.reply(), actual.reply(), kind + ": compaction at " + step[0]);
      }
      assertArrayEquals(
          StoreKind.dump(source), StoreKind.dump(target), kind + ": after compacting");
      // Back to the snapshot's state, so the next target is compared with the same source.
      StoreKind.load(source, snapshot);
      sourceCore.reload();
    }
  }

  @ParameterizedTest
  @EnumSource(StoreKind.class)
  void snapshotCarriesPoliciesBansLockDelaysAndLeaseHistory(StoreKind sourceKind)
      throws IOException {
    KvStore source = open(sourceKind);
    LeaseCore sourceCore = new LeaseCore(source);
    long t = T0;
    List<LogCommand.Builder> log =
        List.of(
            Cmds.setPolicy(
                "lock",
                Cmds.policy()
                    .setLockDelay(Cmds.secs(30))
                    .setNamePattern("[a-z]+")
                    .setMaxLeasesPerHolder(2)
                    .setHistoryLimit(5)),
            Cmds.setPolicy("", Cmds.policy().setMaxTtl(Cmds.secs(60))),
            Cmds.acquire("lock/a", "alice"),
            Cmds.acquire("lock/b", "bob"),
            Cmds.banFor("bob", Cmds.secs(100)),
            Cmds.revoke("lock/a", "maintenance"),
            Cmds.acquire("lock/c", "carol"),
            Cmds.release("lock/c", 7));
    long index = 0;
    for (LogCommand.Builder c : log) {
      sourceCore.apply(1, ++index, c.setLeaderTimeMicros(t += SECOND).build());
    }
    byte[] snapshot = StoreKind.dump(source);
    List<ReadQuery> reads =
        List.of(
            ReadQuery.newBuilder()
                .setGetPolicy(GetPolicyRequest.newBuilder().setNamespace("lock"))
                .build(),
            ReadQuery.newBuilder()
                .setGetPolicy(GetPolicyRequest.newBuilder().setNamespace("svc"))
                .build(),
            ReadQuery.newBuilder()
                .setListPolicies(ListPoliciesRequest.getDefaultInstance())
                .build(),
            ReadQuery.newBuilder().setListBans(ListBansRequest.getDefaultInstance()).build(),
            ReadQuery.newBuilder()
                .setHistory(HistoryRequest.newBuilder().setName("lock/a"))
                .build(),
            ReadQuery.newBuilder().setHistory(HistoryRequest.newBuilder().setHolder("bob")).build(),
            ReadQuery.newBuilder()
                .setHistory(HistoryRequest.newBuilder().setHolder("carol"))
                .build());
    assertEquals(1, sourceCore.query(reads.get(3), 0).getListBans().getBansCount());
    assertEquals(1, sourceCore.query(reads.get(4), 0).getHistory().getLeasesCount());

    for (StoreKind kind : StoreKind.values()) {
      KvStore target = open(kind);
      LeaseCore core = new LeaseCore(target);
      run(core, 7, 60);
      StoreKind.load(target, snapshot);
      core.reload();
      for (ReadQuery q : reads) {
        assertEquals(sourceCore.query(q, t), core.query(q, t), kind + ": " + q);
      }
      // What the in-memory state decides comes back too: lock-delay, ban, pattern, quota.
      Map<LogCommand.Builder, String> next = new java.util.LinkedHashMap<>();
      next.put(Cmds.acquire("lock/a", "dave"), "LOCK_DELAY");
      next.put(Cmds.acquire("lock/x", "bob"), "BANNED");
      next.put(Cmds.acquire("lock/x1", "erin"), "NAME_NOT_ALLOWED");
      next.put(Cmds.acquire("lock/d", "erin"), "GRANTED");
      next.put(Cmds.acquire("lock/e", "erin"), "GRANTED");
      next.put(Cmds.acquire("lock/f", "erin"), "HOLDER_QUOTA");
      next.put(Cmds.acquire("svc/a", "erin", Cmds.secs(61)), "TTL_OUT_OF_RANGE");
      long i = index;
      for (Map.Entry<LogCommand.Builder, String> e : next.entrySet()) {
        LogCommand command = e.getKey().setLeaderTimeMicros(t + SECOND).build();
        ApplyResult expected = sourceCore.apply(1, ++i, command);
        var reply = expected.reply().getAcquire();
        assertEquals(
            e.getValue(),
            reply.hasRejection()
                ? reply.getRejection().getReason().name()
                : reply.getOutcome().name(),
            command::toString);
        assertEquals(expected.reply(), core.apply(1, i, command).reply(), kind + ": " + command);
      }
      assertArrayEquals(
          StoreKind.dump(source), StoreKind.dump(target), kind + ": after the next entries");
      StoreKind.load(source, snapshot);
      sourceCore.reload();
    }
  }

  private static LogCommand.Builder compact(long below) {
    return LogCommand.newBuilder()
        .setCompactHistory(CompactHistory.newBuilder().setBelowRevision(below));
  }

  @ParameterizedTest
  @EnumSource(StoreKind.class)
  void restoredClockStaysMonotone(StoreKind kind) throws IOException {
    KvStore source = open(StoreKind.IN_MEMORY);
    LeaseCore sourceCore = new LeaseCore(source);
    sourceCore.apply(
        1, 1, Cmds.acquire("lock/a", "alice").setLeaderTimeMicros(T0 + 100 * SECOND).build());

    KvStore target = open(kind);
    StoreKind.load(target, StoreKind.dump(source));
    LeaseCore core = new LeaseCore(target);
    // A leader whose clock is behind the snapshot's: recorded times must not go back.
    ApplyResult r = core.apply(2, 2, Cmds.acquire("lock/b", "bob").setLeaderTimeMicros(T0).build());
    assertEquals(Cmds.at(T0 + 100 * SECOND), r.reply().getAcquire().getLease().getAcquiredAt());
  }

  @ParameterizedTest
  @EnumSource(StoreKind.class)
  void corruptedSnapshotFailsAndLeavesTargetUntouched(StoreKind kind) throws IOException {
    KvStore source = open(StoreKind.IN_MEMORY);
    run(new LeaseCore(source), 42, 200);
    byte[] snapshot = StoreKind.dump(source);

    KvStore target = open(kind);
    LeaseCore targetCore = new LeaseCore(target);
    run(targetCore, 7, 60);
    byte[] before = StoreKind.dump(target);
    AppliedPosition position = target.applied();

    // Flip one byte: in the header, in a key length, inside the first value, in the stored CRC.
    int magic = 0;
    int firstKeyLength = 22;
    int keyLength = ByteBuffer.wrap(snapshot, firstKeyLength, 4).getInt();
    int insideFirstValue = firstKeyLength + 4 + keyLength + 4 + 1;
    int insideMiddleValue = middleValueOffset(snapshot) + 1;
    int crc = snapshot.length - 1;
    for (int at : new int[] {magic, firstKeyLength, insideFirstValue, insideMiddleValue, crc}) {
      byte[] bad = snapshot.clone();
      bad[at] ^= (byte) 0xFF;
      IOException e =
          assertThrows(IOException.class, () -> StoreKind.load(target, bad), "flip at " + at);
      assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
      assertArrayEquals(
          before,
          StoreKind.dump(target),
          kind + ": state after a failed load (flip at " + at + ")");
      assertEquals(position, target.applied());
    }

    // A truncated snapshot fails the same way.
    byte[] truncated = java.util.Arrays.copyOf(snapshot, snapshot.length - 9);
    assertThrows(IOException.class, () -> StoreKind.load(target, truncated));
    assertArrayEquals(before, StoreKind.dump(target));

    // The target still works, from where it was.
    long next = position.index() + 1;
    ApplyResult r =
        targetCore.apply(
            position.term(),
            next,
            Cmds.acquire("lock/after-failed-load", "x").setLeaderTimeMicros(T0).build());
    assertEquals(
        LogFormat.token(targetCore.logFormat(), next, 0),
        r.reply().getAcquire().getLease().getToken());
    assertEquals(next, target.applied().index());

    // And the intact snapshot still loads.
    StoreKind.load(target, snapshot);
    assertArrayEquals(snapshot, StoreKind.dump(target));
  }

  /**
   * The offset of the value of the entry in the middle of a snapshot (parsing the documented
   * layout).
   */
  private static int middleValueOffset(byte[] snapshot) {
    List<Integer> values = new ArrayList<>();
    ByteBuffer b = ByteBuffer.wrap(snapshot);
    b.position(21);
    while (b.get() != 0) {
      int keyLength = b.getInt();
      b.position(b.position() + keyLength);
      int length = b.getInt();
      if (length > 2) {
        values.add(b.position());
      }
      b.position(b.position() + length);
    }
    return values.get(values.size() / 2);
  }
}
