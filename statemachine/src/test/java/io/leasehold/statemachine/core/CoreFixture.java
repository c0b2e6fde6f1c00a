package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.attrs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.CompactHistory;
import io.leasehold.proto.v1.CompactHistoryResponse;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.proto.v1.InvalidCommand;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link LeaseCore} over a fresh store of the kind under test, with helpers that drive {@code
 * apply} with explicit log indexes and leader times and read the state back. Shared by the core
 * contracts; each runs on every {@link KvStore}.
 */
public abstract class CoreFixture {
  protected static final long TERM = 1;
  protected static final Attributes A1 = attrs("10.0.0.1:8080", "SERVING", Map.of("zone", "a"));
  protected static final Attributes A2 =
      attrs("10.0.0.2:9090", "DRAINING", Map.of("zone", "b", "v", "2"));

  @TempDir protected Path tempDir;

  protected KvStore store;
  protected LeaseCore core;

  /** A fresh, empty store of the kind under test, living in (or under) {@code tempDir}. */
  protected abstract KvStore newStore(Path tempDir) throws IOException;

  @BeforeEach
  void openStore() throws IOException {
    store = newStore(tempDir);
    core = new LeaseCore(store);
  }

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  // ---- helpers ----

  /**
   * Applies {@code command} as the entry at {@code index}, stamped with the leader time {@code
   * timeMicros}.
   */
  protected ApplyResult apply(long index, long timeMicros, LogCommand.Builder command)
      throws IOException {
    return core.apply(TERM, index, command.setLeaderTimeMicros(timeMicros).build());
  }

  protected Optional<LeaseRecord> record(String name) {
    return store.get(Space.LEASES, name.getBytes(StandardCharsets.UTF_8)).map(LeaseCore::parse);
  }

  protected LeaseRecord held(String name) {
    return record(name).orElseThrow(() -> new AssertionError("no lease on " + name));
  }

  protected Map<String, LeaseRecord> leases() {
    Map<String, LeaseRecord> all = new LinkedHashMap<>();
    core.forEachLease(all::put);
    return all;
  }

  protected GetResponse get(String name, long nowMicros) {
    return core.get(GetRequest.newBuilder().setName(name).build(), nowMicros);
  }

  protected ListResponse list(String prefix, int limit, String startAfter, long nowMicros) {
    return core.list(
        ListRequest.newBuilder()
            .setPrefix(prefix)
            .setLimit(limit)
            .setStartAfter(startAfter)
            .build(),
        nowMicros);
  }

  protected static List<String> names(ListResponse r) {
    return r.getLeasesList().stream().map(Lease::getName).collect(Collectors.toList());
  }

  protected static List<String> describe(List<LeaseEvent> events) {
    return events.stream()
        .map(e -> e.type() + "@" + e.revision() + ":" + e.name())
        .collect(Collectors.toList());
  }

  protected static AcquireResponse granted(ApplyResult r) {
    assertTrue(r.reply().hasAcquire(), () -> "not an acquire reply: " + r.reply());
    assertEquals(Outcome.GRANTED, r.reply().getAcquire().getOutcome(), () -> r.reply().toString());
    return r.reply().getAcquire();
  }

  protected static io.leasehold.proto.v1.Rejection rejected(ApplyResult r) {
    assertTrue(r.reply().hasAcquire(), () -> "not an acquire reply: " + r.reply());
    assertEquals(Outcome.REJECTED, r.reply().getAcquire().getOutcome(), () -> r.reply().toString());
    assertTrue(r.events().isEmpty(), "a rejected acquire changes nothing");
    return r.reply().getAcquire().getRejection();
  }

  /** The query's reply, read on the core under test. */
  protected io.leasehold.proto.v1.ReadReply query(
      io.leasehold.proto.v1.ReadQuery.Builder q, long nowMicros) {
    return core.query(q.build(), nowMicros);
  }

  /** The ended leases of a name, newest first. */
  protected List<io.leasehold.proto.v1.EndedLease> historyOf(String name) {
    return core.query(
            io.leasehold.proto.v1.ReadQuery.newBuilder()
                .setHistory(io.leasehold.proto.v1.HistoryRequest.newBuilder().setName(name))
                .build(),
            0)
        .getHistory()
        .getLeasesList();
  }

  /** The ended leases of a holder, newest first. */
  protected List<io.leasehold.proto.v1.EndedLease> historyOfHolder(String holder) {
    return core.query(
            io.leasehold.proto.v1.ReadQuery.newBuilder()
                .setHistory(io.leasehold.proto.v1.HistoryRequest.newBuilder().setHolder(holder))
                .build(),
            0)
        .getHistory()
        .getLeasesList();
  }

  protected static InvalidCommand invalid(ApplyResult r) {
    assertTrue(r.reply().hasInvalid(), () -> "expected an invalid-command reply, got " + r.reply());
    return r.reply().getInvalid();
  }

  // ---- history helpers ----

  /** One entry of the EVENTS space, its key decoded as (revision, sequence). */
  protected record Stored(long revision, int sequence, Event event) {}

  /** Every event in the EVENTS space, in key order, read directly from the store. */
  protected List<Stored> stored() {
    return store.read(
        view -> {
          List<Stored> out = new ArrayList<>();
          view.scan(
              Space.EVENTS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                assertEquals(12, key.length, "an event key is (i64 revision, i32 sequence)");
                ByteBuffer k = ByteBuffer.wrap(key);
                long revision = k.getLong();
                out.add(
                    new Stored(revision, k.getInt(), Events.toApi(Events.decode(revision, value))));
                return true;
              });
          return out;
        });
  }

  /** The stored events of the entry at {@code revision}. */
  protected List<Stored> storedAt(long revision) {
    return stored().stream().filter(s -> s.revision() == revision).collect(Collectors.toList());
  }

  /**
   * The events {@link LeaseCore#readHistory} visits from {@code fromRevision}; fails if it reports
   * compaction.
   */
  protected List<Event> history(long fromRevision) {
    List<Event> out = new ArrayList<>();
    LeaseCore.HistoryRead read = core.readHistory(fromRevision, out::add);
    assertFalse(
        read.compacted(), () -> "readHistory(" + fromRevision + ") reported compaction: " + read);
    return out;
  }

  /** The raw bytes (in hex) of the history bounds in the META space, if written. */
  protected Optional<String> rawHistoryMeta() {
    return store
        .get(Space.META, "history".getBytes(StandardCharsets.US_ASCII))
        .map(java.util.HexFormat.of()::formatHex);
  }

  protected static HistoryMeta meta(long compactRevision, long count) {
    return HistoryMeta.newBuilder().setCompactRevision(compactRevision).setCount(count).build();
  }

  protected static LogCommand.Builder compact(long belowRevision) {
    return LogCommand.newBuilder()
        .setCompactHistory(CompactHistory.newBuilder().setBelowRevision(belowRevision));
  }

  protected static CompactHistoryResponse compacted(ApplyResult r) {
    assertTrue(r.reply().hasCompactHistory(), () -> "not a compaction reply: " + r.reply());
    assertTrue(r.events().isEmpty(), "a compaction changes no lease");
    return r.reply().getCompactHistory();
  }

  protected static CompactHistoryResponse compactReply(
      long compactRevision, long removed, long revision) {
    return CompactHistoryResponse.newBuilder()
        .setCompactRevision(compactRevision)
        .setRemoved(removed)
        .setRevision(revision)
        .build();
  }

  /**
   * The API view of a live lease as apply produces it (no {@code remaining}, no {@code state}):
   * Get's view without its local-clock fields.
   */
  protected Lease view(String name) {
    GetResponse g = get(name, 0);
    assertTrue(g.getFound(), () -> "no lease on " + name);
    return g.getLease().toBuilder()
        .clearRemaining()
        .clearState()
        .clearDeadline()
        .clearDeadlineRemaining()
        .clearDeadlineSource()
        .build();
  }

  /** An event as the history should hold it; {@code reason} is unset for ACQUIRED and UPDATED. */
  protected static Event event(
      Event.Type type, long revision, String name, Lease lease, long timeMicros) {
    Event.Builder b =
        Event.newBuilder()
            .setType(type)
            .setRevision(revision)
            .setName(name)
            .setLease(lease)
            .setTime(Cmds.at(timeMicros));
    if (type == Event.Type.RELEASED) {
      b.setReason(Event.Reason.REASON_RELEASED);
    } else if (type == Event.Type.EXPIRED) {
      b.setReason(Event.Reason.REASON_EXPIRED);
    }
    return b.build();
  }
}
