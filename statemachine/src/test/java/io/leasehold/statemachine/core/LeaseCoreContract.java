package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.at;
import static io.leasehold.statemachine.core.Cmds.attrs;
import static io.leasehold.statemachine.core.Cmds.expire;
import static io.leasehold.statemachine.core.Cmds.expiry;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.micros;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.update;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import com.google.protobuf.FieldMask;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.ExpireResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.InvalidCommand;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.UpdateResponse;
import io.leasehold.statemachine.store.AppliedPosition;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.StoreKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The behaviour of {@link LeaseCore}, run against every {@link KvStore}: the core cannot tell the
 * stores apart, so every test here must pass on each of them.
 *
 * <p>Tests drive {@code apply} with explicit log indexes and leader times, exactly as Raft would.
 */
public abstract class LeaseCoreContract extends CoreFixture {

  // ---- acquire ----

  @Test
  void acquireOfFreeNameIsGrantedWithTokenEqualToLogIndex() throws IOException {
    ApplyResult r = apply(7, T0, acquire("lock/a", "alice", secs(10), A1));

    AcquireResponse a = granted(r);
    assertEquals(7, r.revision());
    assertEquals(7, a.getRevision());
    Lease l = a.getLease();
    assertEquals("lock/a", l.getName());
    assertEquals("alice", l.getHolder());
    assertEquals(7, l.getToken());
    assertEquals(secs(10), l.getTtl());
    assertEquals(at(T0), l.getAcquiredAt());
    assertEquals(at(T0), l.getRenewedAt());
    assertEquals(at(T0 + 10 * SECOND), l.getExpiresAt());
    assertEquals(7, l.getLastRenewRevision());
    assertEquals(0, l.getRenewCount());
    assertEquals(7, l.getModRevision());
    assertEquals(A1, l.getAttributes());
    assertFalse(l.hasRemaining(), "a reply from apply must not depend on a local clock");
    assertEquals(micros(10 * SECOND / 3), a.getHeartbeatInterval());
    assertEquals(new AppliedPosition(TERM, 7), core.applied());

    GetResponse g = get("lock/a", T0 + 4 * SECOND);
    assertTrue(g.getFound());
    assertEquals(7, g.getRevision());
    // A read adds what the serving node judged, and the deadline the store can tell: an estimate
    // (the server replaces it with the leader's own when it can ask the leader).
    assertEquals(
        l.toBuilder()
            .setRemaining(secs(6))
            .setState(io.leasehold.proto.v1.LeaseState.ACTIVE)
            .setDeadline(at(T0 + 10 * SECOND))
            .setDeadlineRemaining(secs(6))
            .setDeadlineSource(io.leasehold.proto.v1.DeadlineSource.DEADLINE_SOURCE_ESTIMATE)
            .build(),
        g.getLease());
  }

  @Test
  void tokensStrictlyIncreaseAcrossGrants() throws IOException {
    String[] names = {"lock/a", "lock/b", "partition/7"};
    Map<String, Long> tokens = new LinkedHashMap<>();
    long lastGrant = 0;
    int grants = 0;
    long time = T0;
    for (long index = 1; index <= 150; index++) {
      time += SECOND;
      String name = names[(int) (index % names.length)];
      Long token = tokens.get(name);
      if (token != null && index % 5 != 0) {
        ApplyResult r = apply(index, time, release(name, token));
        assertEquals(Outcome.RELEASED, r.reply().getRelease().getOutcome());
        tokens.remove(name);
      } else if (token != null) {
        // The holder retries: same token, no new grant.
        String holder = held(name).getHolder();
        assertEquals(
            token, granted(apply(index, time, acquire(name, holder))).getLease().getToken());
      } else {
        long t =
            granted(apply(index, time, acquire(name, "h" + (index % 4)))).getLease().getToken();
        assertEquals(index, t, "a new grant's token is its log index");
        assertTrue(t > lastGrant, "token " + t + " after " + lastGrant);
        lastGrant = t;
        grants++;
        tokens.put(name, t);
      }
    }
    assertTrue(grants >= 40, "only " + grants + " grants");
  }

  @Test
  void anAcquiresWaitIsNotTheLogsBusinessWhateverItSays() throws IOException {
    // A node too old to know the field logs it as the client sent it: every replica must apply
    // the entry alike, so apply never judges the wait (the receiving node does, AcquireWaits).
    AcquireRequest.Builder r =
        Cmds.acquireRequest("lock/waited", "alice")
            .setTtl(secs(10))
            .setWait(com.google.protobuf.Duration.newBuilder().setSeconds(3_600));
    granted(apply(1, T0, LogCommand.newBuilder().setAcquire(r)));
    r.setWait(com.google.protobuf.Duration.newBuilder().setSeconds(-1));
    granted(apply(2, T0 + SECOND, LogCommand.newBuilder().setAcquire(r)));
  }

  @Test
  void reacquireByHolderIsIdempotentAndKeepsToken() throws IOException {
    Lease first = granted(apply(1, T0, acquire("lock/a", "alice", secs(10), A1))).getLease();

    ApplyResult r = apply(2, T0 + SECOND, acquire("lock/a", "alice", secs(10), A1));
    Lease again = granted(r).getLease();
    assertEquals(1, again.getToken());
    assertEquals(2, r.reply().getAcquire().getRevision());
    assertEquals(first.getAcquiredAt(), again.getAcquiredAt());
    assertEquals(at(T0 + SECOND), again.getRenewedAt());
    assertEquals(at(T0 + 11 * SECOND), again.getExpiresAt());
    assertEquals(2, again.getLastRenewRevision());
    assertEquals(2, again.getModRevision());
    assertEquals(1, again.getRenewCount());
    assertEquals(A1, again.getAttributes());
    assertEquals(List.of("RENEWED@2:lock/a"), describe(r.events()));

    Lease third =
        granted(apply(3, T0 + 2 * SECOND, acquire("lock/a", "alice", secs(10), A1))).getLease();
    assertEquals(1, third.getToken());
    assertEquals(2, third.getRenewCount());
    assertEquals(1, held("lock/a").getToken());
    assertEquals(1, leases().size());
  }

  @Test
  void reacquireUpdatesTtlAndAttributes() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1)));

    ApplyResult r = apply(2, T0 + SECOND, acquire("svc/pay/1", "alice", secs(30), A2));
    AcquireResponse a = granted(r);
    assertEquals(1, a.getLease().getToken());
    assertEquals(secs(30), a.getLease().getTtl());
    assertEquals(A2, a.getLease().getAttributes());
    assertEquals(secs(10), a.getHeartbeatInterval());
    assertEquals(List.of("RENEWED@2:svc/pay/1", "UPDATED@2:svc/pay/1"), describe(r.events()));
    assertEquals(30 * SECOND, held("svc/pay/1").getTtlMicros());
    assertEquals(A2, held("svc/pay/1").getAttributes());

    // Same attributes again: a renewal only.
    ApplyResult same = apply(3, T0 + 2 * SECOND, acquire("svc/pay/1", "alice", secs(30), A2));
    assertEquals(List.of("RENEWED@3:svc/pay/1"), describe(same.events()));

    // No attributes in the request: the lease keeps its own; no TTL: its own too, so a bare
    // retry never shortens a lease to the default.
    ApplyResult bare = apply(4, T0 + 3 * SECOND, acquire("svc/pay/1", "alice"));
    assertEquals(A2, granted(bare).getLease().getAttributes());
    assertEquals(secs(30), granted(bare).getLease().getTtl());
    assertEquals(30 * SECOND, held("svc/pay/1").getTtlMicros());
    assertEquals(List.of("RENEWED@4:svc/pay/1"), describe(bare.events()));
    assertEquals(1, held("svc/pay/1").getToken());
  }

  @Test
  void acquireHeldByAnotherIsConflictWithHolderTokenAndRemaining() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10))));
    LeaseRecord before = held("lock/a");

    ApplyResult r = apply(2, T0 + 3 * SECOND, acquire("lock/a", "bob", secs(20), A2));
    AcquireResponse a = r.reply().getAcquire();
    assertEquals(Outcome.CONFLICT, a.getOutcome());
    assertEquals(2, a.getRevision());
    assertEquals("alice", a.getConflict().getHolder());
    assertEquals(1, a.getConflict().getToken());
    assertEquals(secs(7), a.getConflict().getRemaining());
    assertFalse(a.hasLease());
    assertTrue(r.events().isEmpty());
    assertEquals(before, held("lock/a"), "a conflict changes nothing");

    // Past the stamped estimate the lease still stands (only the leader's Expire ends it):
    // remaining is 0, not negative.
    ApplyResult late = apply(3, T0 + 25 * SECOND, acquire("lock/a", "bob"));
    assertEquals(Outcome.CONFLICT, late.reply().getAcquire().getOutcome());
    assertEquals(
        Duration.getDefaultInstance(), late.reply().getAcquire().getConflict().getRemaining());
    assertEquals(before, held("lock/a"));
  }

  @Test
  void ttlBelowFloorOrAboveCeilingIsRejectedWithBounds() throws IOException {
    Duration[] outOfRange = {
      secs(1), secs(25 * 3600), micros(2 * SECOND - 1), micros(24 * 3600 * SECOND + 1),
    };
    long index = 0;
    for (Duration ttl : outOfRange) {
      index++;
      ApplyResult r = apply(index, T0, acquire("lock/a", "alice", ttl));
      AcquireResponse a = r.reply().getAcquire();
      assertEquals(Outcome.REJECTED, a.getOutcome(), () -> "ttl " + ttl);
      assertEquals(RejectReason.TTL_OUT_OF_RANGE, a.getRejection().getReason());
      assertEquals(secs(2), a.getRejection().getMinTtl());
      assertEquals(secs(24 * 3600), a.getRejection().getMaxTtl());
      assertFalse(a.getRejection().getMessage().isEmpty());
      assertFalse(a.hasLease());
      assertTrue(r.events().isEmpty());
      assertTrue(leases().isEmpty(), "a rejected acquire grants nothing");
    }
    assertEquals(
        secs(2),
        granted(apply(++index, T0, acquire("lock/min", "alice", secs(2)))).getLease().getTtl());
    assertEquals(
        secs(24 * 3600),
        granted(apply(++index, T0, acquire("lock/max", "alice", secs(24 * 3600))))
            .getLease()
            .getTtl());
  }

  @Test
  void missingTtlUsesDefault() throws IOException {
    AcquireResponse a = granted(apply(1, T0, acquire("lock/a", "alice")));
    long defaultMicros = Limits.DEFAULT_TTL.toNanos() / 1000;
    assertEquals(micros(defaultMicros), a.getLease().getTtl());
    assertEquals(at(T0 + defaultMicros), a.getLease().getExpiresAt());
    assertEquals(micros(defaultMicros / 3), a.getHeartbeatInterval());
    assertEquals(defaultMicros, held("lock/a").getTtlMicros());
  }

  @Test
  void acquireWithTtlBeyondDurationRangeIsRefusedNotThrown() throws IOException {
    // 10^13 s is outside protobuf's Duration range (±315,576,000,000 s); in microseconds it
    // overflows a long.
    Duration huge = Duration.newBuilder().setSeconds(10_000_000_000_000L).build();
    ApplyResult r =
        assertDoesNotThrow(
            () -> apply(1, T0, acquire("lock/a", "alice", huge)),
            "an exception from apply stops every replica (Ratis shuts the server down)");
    boolean refused =
        r.reply().hasInvalid() && r.reply().getInvalid().getField().equals("ttl")
            || r.reply().getAcquire().getOutcome() == Outcome.REJECTED;
    assertTrue(refused, () -> "expected invalid(ttl) or REJECTED, got " + r.reply());
    assertTrue(leases().isEmpty());
    assertEquals(1, core.applied().index());
  }

  // ---- request ids ----

  static LogCommand.Builder acquireWithId(String name, String holder, String requestId) {
    return LogCommand.newBuilder()
        .setAcquire(Cmds.acquireRequest(name, holder).setTtl(secs(10)).setRequestId(requestId));
  }

  @Test
  void anAcquireWhoseRequestIdWasAppliedChangesNothingEvenAfterARelease() throws IOException {
    // The soak's case: the first attempt commits late, after its retry was granted and released.
    AcquireResponse first = granted(apply(5, T0, acquireWithId("lock/a", "alice", "call-1")));
    apply(6, T0 + SECOND, release("lock/a", 5));

    ApplyResult late = apply(7, T0 + 2 * SECOND, acquireWithId("lock/a", "alice", "call-1"));

    assertEquals(first, late.reply().getAcquire(), "answered as the first time");
    assertTrue(late.events().isEmpty(), () -> describe(late.events()).toString());
    assertFalse(record("lock/a").isPresent(), "the name stays free");
    assertEquals(
        8,
        granted(apply(8, T0 + 3 * SECOND, acquireWithId("lock/a", "alice", "call-2")))
            .getLease()
            .getToken(),
        "a new call, a new id: granted");
  }

  @Test
  void aRequestIdIsAnsweredTheSameWhateverTheFirstOutcome() throws IOException {
    granted(apply(5, T0, Cmds.acquire("lock/a", "bob", secs(10))));
    AcquireResponse conflict =
        apply(6, T0, acquireWithId("lock/a", "alice", "call-1")).reply().getAcquire();
    assertEquals(Outcome.CONFLICT, conflict.getOutcome());
    apply(7, T0 + SECOND, release("lock/a", 5));

    assertEquals(
        conflict,
        apply(8, T0 + SECOND, acquireWithId("lock/a", "alice", "call-1")).reply().getAcquire());
    assertFalse(record("lock/a").isPresent());
    // Without an id, the holder asking again is the idempotent re-acquire it always was.
    AcquireResponse a = granted(apply(9, T0 + SECOND, Cmds.acquire("lock/a", "alice", secs(10))));
    assertEquals(
        a.getLease().getToken(),
        granted(apply(10, T0 + SECOND, Cmds.acquire("lock/a", "alice", secs(10))))
            .getLease()
            .getToken());
  }

  @Test
  void appliedRequestIdsOutliveARestartOfTheCore() throws IOException {
    AcquireResponse first = granted(apply(5, T0, acquireWithId("lock/a", "alice", "call-1")));
    apply(6, T0 + SECOND, release("lock/a", 5));
    core = new LeaseCore(store);

    assertEquals(
        first,
        apply(7, T0 + SECOND, acquireWithId("lock/a", "alice", "call-1")).reply().getAcquire());
    assertFalse(record("lock/a").isPresent());
  }

  @Test
  void aBadRequestIdIsAnInvalidEntryThatChangesNothing() throws IOException {
    InvalidCommand bad = invalid(apply(5, T0, acquireWithId("lock/a", "alice", "x".repeat(65))));
    assertEquals("request_id", bad.getField());
    assertFalse(record("lock/a").isPresent());
  }

  // ---- renew ----

  @Test
  void renewWithCurrentTokenRenews() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10), A1)));

    ApplyResult r = apply(2, T0 + 4 * SECOND, renew("lock/a", 1));
    RenewResponse rr = r.reply().getRenew();
    assertEquals(2, rr.getRevision());
    assertEquals(
        List.of(
            RenewResult.newBuilder()
                .setName("lock/a")
                .setToken(1)
                .setOutcome(Outcome.RENEWED)
                .setTtl(secs(10))
                .setHeartbeatInterval(micros(10 * SECOND / 3))
                .setExpiresAt(Cmds.at(T0 + 14 * SECOND))
                .setDeadline(Cmds.at(T0 + 14 * SECOND))
                .build()),
        rr.getResultsList());
    assertEquals(micros(10 * SECOND / 3), rr.getHeartbeatInterval());
    LeaseRecord l = held("lock/a");
    assertEquals(1, l.getToken());
    assertEquals(1, l.getRenewCount());
    assertEquals(2, l.getLastRenewRevision());
    assertEquals(2, l.getModRevision());
    assertEquals(T0, l.getAcquiredAtMicros());
    assertEquals(T0 + 4 * SECOND, l.getRenewedAtMicros());
    assertEquals(A1, l.getAttributes());
    assertEquals(List.of("RENEWED@2:lock/a"), describe(r.events()));
    assertEquals(l, r.events().get(0).lease());

    apply(3, T0 + 8 * SECOND, renew("lock/a", 1));
    assertEquals(2, held("lock/a").getRenewCount());
    assertEquals(3, held("lock/a").getLastRenewRevision());
    assertEquals(at(T0 + 18 * SECOND), get("lock/a", T0 + 8 * SECOND).getLease().getExpiresAt());
  }

  @Test
  void renewWithStaleTokenIsNotHeld() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    apply(2, T0, release("lock/a", 1));
    granted(apply(3, T0, acquire("lock/a", "bob")));
    LeaseRecord bobs = held("lock/a");

    ApplyResult r = apply(4, T0 + SECOND, renew(item("lock/a", 1), item("lock/never", 2)));
    RenewResponse rr = r.reply().getRenew();
    assertEquals(4, rr.getRevision());
    assertEquals(2, rr.getResultsCount());
    for (RenewResult result : rr.getResultsList()) {
      assertEquals(Outcome.NOT_HELD, result.getOutcome(), result::toString);
      assertFalse(result.hasTtl());
    }
    assertFalse(rr.hasHeartbeatInterval());
    assertTrue(r.events().isEmpty());
    assertEquals(bobs, held("lock/a"));
    assertFalse(record("lock/never").isPresent());
  }

  @Test
  void renewBatchReportsEachItem() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(30))));
    granted(apply(2, T0, acquire("lock/b", "alice", secs(10))));
    granted(apply(3, T0, acquire("lock/c", "alice", secs(6))));
    apply(4, T0, release("lock/b", 2));

    ApplyResult r =
        apply(
            5,
            T0 + SECOND,
            renew(
                item("lock/c", 3),
                item("lock/b", 2),
                item("lock/x", 1),
                item("lock/a", 1),
                item("lock/a", 3)));
    RenewResponse rr = r.reply().getRenew();
    assertEquals(
        List.of("lock/c", "lock/b", "lock/x", "lock/a", "lock/a"),
        rr.getResultsList().stream().map(RenewResult::getName).collect(Collectors.toList()));
    assertEquals(
        List.of(3L, 2L, 1L, 1L, 3L),
        rr.getResultsList().stream().map(RenewResult::getToken).collect(Collectors.toList()));
    assertEquals(
        List.of(
            Outcome.RENEWED, Outcome.NOT_HELD, Outcome.NOT_HELD, Outcome.RENEWED, Outcome.NOT_HELD),
        rr.getResultsList().stream().map(RenewResult::getOutcome).collect(Collectors.toList()));
    assertEquals(secs(6), rr.getResults(0).getTtl());
    assertEquals(secs(30), rr.getResults(3).getTtl());
    assertEquals(secs(2), rr.getHeartbeatInterval(), "a third of the shortest renewed TTL");
    assertEquals(List.of("RENEWED@5:lock/c", "RENEWED@5:lock/a"), describe(r.events()));
    assertEquals(5, held("lock/a").getLastRenewRevision());
    assertEquals(5, held("lock/c").getLastRenewRevision());
    assertFalse(record("lock/b").isPresent());
  }

  // ---- release ----

  @Test
  void releaseWithStaleTokenIsNotHeld() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    assertEquals(
        Outcome.RELEASED, apply(2, T0, release("lock/a", 1)).reply().getRelease().getOutcome());
    granted(apply(3, T0, acquire("lock/a", "bob")));
    LeaseRecord bobs = held("lock/a");

    ApplyResult stale = apply(4, T0, release("lock/a", 1));
    assertEquals(
        ReleaseResponse.newBuilder().setOutcome(Outcome.NOT_HELD).setRevision(4).build(),
        stale.reply().getRelease());
    assertTrue(stale.events().isEmpty());
    assertEquals(bobs, held("lock/a"));

    ApplyResult nothing = apply(5, T0, release("lock/none", 3));
    assertEquals(Outcome.NOT_HELD, nothing.reply().getRelease().getOutcome());
    assertEquals(Map.of("lock/a", bobs), leases());
  }

  @Test
  void releaseFreesNameAtOnce() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(60))));
    LeaseRecord alices = held("lock/a");

    ApplyResult r = apply(2, T0 + SECOND, release("lock/a", 1));
    assertEquals(
        ReleaseResponse.newBuilder().setOutcome(Outcome.RELEASED).setRevision(2).build(),
        r.reply().getRelease());
    assertEquals(List.of("RELEASED@2:lock/a"), describe(r.events()));
    assertEquals(
        alices, r.events().get(0).lease(), "the event carries the lease as it was when it ended");
    assertFalse(get("lock/a", T0 + SECOND).getFound());
    assertEquals(0, list("lock/", 0, "", T0).getLeasesCount());

    // Well within the old TTL, another holder gets the name.
    AcquireResponse bob = granted(apply(3, T0 + SECOND, acquire("lock/a", "bob")));
    assertEquals(3, bob.getLease().getToken());
    assertEquals("bob", held("lock/a").getHolder());
  }

  // ---- update ----

  @Test
  void updateChangesAttributesButNotToken() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1)));
    LeaseRecord before = held("svc/pay/1");

    ApplyResult r = apply(2, T0 + 2 * SECOND, update("svc/pay/1", 1, A2));
    UpdateResponse u = r.reply().getUpdate();
    assertEquals(Outcome.UPDATED, u.getOutcome());
    assertEquals(2, u.getRevision());
    assertEquals(1, u.getLease().getToken());
    assertEquals(A2, u.getLease().getAttributes());
    assertEquals(2, u.getLease().getModRevision());
    LeaseRecord after = held("svc/pay/1");
    assertEquals(
        before.toBuilder().setAttributes(A2).setModRevision(2).build(),
        after,
        "an update is not a renewal: only attributes and mod_revision change");
    assertEquals(List.of("UPDATED@2:svc/pay/1"), describe(r.events()));
    assertEquals(after, r.events().get(0).lease());

    // The attributes are replaced, not merged: an empty set clears them.
    apply(3, T0 + 3 * SECOND, update("svc/pay/1", 1, Attributes.getDefaultInstance()));
    assertEquals(Attributes.getDefaultInstance(), held("svc/pay/1").getAttributes());
    assertEquals(1, held("svc/pay/1").getToken());
  }

  @Test
  void updateWithStaleTokenIsNotHeld() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1)));
    apply(2, T0, release("svc/pay/1", 1));
    granted(apply(3, T0, acquire("svc/pay/1", "bob", secs(10), A1)));
    LeaseRecord bobs = held("svc/pay/1");

    ApplyResult r = apply(4, T0, update("svc/pay/1", 1, A2));
    assertEquals(
        UpdateResponse.newBuilder().setOutcome(Outcome.NOT_HELD).setRevision(4).build(),
        r.reply().getUpdate());
    assertTrue(r.events().isEmpty());
    assertEquals(bobs, held("svc/pay/1"));

    assertEquals(
        Outcome.NOT_HELD,
        apply(5, T0, update("svc/none/1", 3, A2)).reply().getUpdate().getOutcome());
    assertFalse(record("svc/none/1").isPresent());
  }

  // ---- update masks ----

  /**
   * The attributes masked updates start from: metadata with two keys, so replacement and key-wise
   * merging differ.
   */
  private static final Attributes CURRENT =
      attrs("10.0.0.1:8080", "SERVING", Map.of("zone", "a", "v", "1"));

  /** What masked updates send: every field differs from CURRENT, and its metadata lacks "zone". */
  private static final Attributes SENT =
      attrs("10.9.9.9:1", "DRAINING", Map.of("v", "2", "w", "3"));

  protected static LogCommand.Builder maskedUpdate(
      String name, long token, Attributes attributes, String... paths) {
    UpdateRequest.Builder u =
        UpdateRequest.newBuilder()
            .setName(name)
            .setToken(token)
            .setUpdateMask(FieldMask.newBuilder().addAllPaths(List.of(paths)));
    if (attributes != null) {
      u.setAttributes(attributes);
    }
    return LogCommand.newBuilder().setUpdate(u);
  }

  static Stream<Arguments> masks() {
    Map<String, String> kept = Map.of("zone", "a", "v", "1");
    Map<String, String> sent = Map.of("v", "2", "w", "3");
    return Stream.of(
        Arguments.of(List.of("address"), attrs("10.9.9.9:1", "SERVING", kept)),
        Arguments.of(List.of("metadata"), attrs("10.0.0.1:8080", "SERVING", sent)),
        Arguments.of(List.of("status"), attrs("10.0.0.1:8080", "DRAINING", kept)),
        Arguments.of(List.of("address", "status"), attrs("10.9.9.9:1", "DRAINING", kept)),
        Arguments.of(List.of("metadata", "address"), attrs("10.9.9.9:1", "SERVING", sent)),
        Arguments.of(List.of("status", "metadata"), attrs("10.0.0.1:8080", "DRAINING", sent)),
        Arguments.of(List.of("address", "metadata", "status"), SENT),
        Arguments.of(List.of("status", "status"), attrs("10.0.0.1:8080", "DRAINING", kept)));
  }

  @ParameterizedTest(name = "mask {0}")
  @MethodSource("masks")
  void updateMaskChangesOnlyTheNamedAttributesAndReplacesMetadataWhole(
      List<String> paths, Attributes expected) throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), CURRENT)));
    LeaseRecord before = held("svc/pay/1");

    ApplyResult r =
        apply(2, T0 + SECOND, maskedUpdate("svc/pay/1", 1, SENT, paths.toArray(String[]::new)));
    UpdateResponse u = r.reply().getUpdate();
    assertEquals(Outcome.UPDATED, u.getOutcome(), r.reply()::toString);
    assertEquals(expected, u.getLease().getAttributes());
    assertEquals(
        before.toBuilder().setAttributes(expected).setModRevision(2).build(),
        held("svc/pay/1"),
        "only the named attributes and mod_revision change");
    assertEquals(List.of("UPDATED@2:svc/pay/1"), describe(r.events()));
    assertEquals(expected, r.events().get(0).lease().getAttributes());
    assertEquals(
        List.of(expected),
        storedAt(2).stream()
            .map(s -> s.event().getLease().getAttributes())
            .collect(Collectors.toList()));
  }

  @Test
  void emptyUpdateMaskReplacesEveryAttribute() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), CURRENT)));
    Attributes noStatus = attrs("10.9.9.9:1", "", Map.of("v", "2"));

    ApplyResult r = apply(2, T0 + SECOND, maskedUpdate("svc/pay/1", 1, noStatus));
    assertEquals(Outcome.UPDATED, r.reply().getUpdate().getOutcome());
    assertEquals(
        noStatus,
        held("svc/pay/1").getAttributes(),
        "no mask: status cleared, metadata key zone gone");
  }

  @Test
  void updateMaskWithoutAttributesClearsTheNamedFields() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), CURRENT)));

    ApplyResult status = apply(2, T0 + SECOND, maskedUpdate("svc/pay/1", 1, null, "status"));
    assertEquals(
        Outcome.UPDATED, status.reply().getUpdate().getOutcome(), status.reply()::toString);
    assertEquals(
        attrs("10.0.0.1:8080", "", Map.of("zone", "a", "v", "1")),
        held("svc/pay/1").getAttributes());

    apply(3, T0 + SECOND, maskedUpdate("svc/pay/1", 1, null, "metadata"));
    assertEquals(attrs("10.0.0.1:8080", "", Map.of()), held("svc/pay/1").getAttributes());
  }

  @Test
  void updateMaskOnALeaseWithoutAttributesSetsOnlyTheNamedField() throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10))));

    apply(2, T0 + SECOND, maskedUpdate("svc/pay/1", 1, SENT, "address"));
    assertEquals(attrs("10.9.9.9:1", "", Map.of()), held("svc/pay/1").getAttributes());
  }

  @ParameterizedTest(name = "paths {0}")
  @MethodSource("unknownMasks")
  void updateMaskWithUnknownPathIsInvalidAndChangesNothing(List<String> paths, String field)
      throws IOException {
    granted(apply(1, T0, acquire("svc/pay/1", "alice", secs(10), CURRENT)));
    Map<String, LeaseRecord> before = leases();
    List<Stored> history = stored();

    ApplyResult r =
        apply(2, T0 + SECOND, maskedUpdate("svc/pay/1", 1, SENT, paths.toArray(String[]::new)));
    assertEquals(field, invalid(r).getField());
    assertTrue(invalid(r).getMessage().contains(field), invalid(r)::getMessage);
    assertTrue(r.events().isEmpty());
    assertEquals(before, leases());
    assertEquals(history, stored());
    assertEquals(meta(0, 1), core.history());
    assertEquals(2, core.applied().index(), "the entry is consumed");
  }

  static Stream<Arguments> unknownMasks() {
    return Stream.of(
        Arguments.of(List.of("zone"), "update_mask.paths[0]"),
        Arguments.of(List.of("address", "zone"), "update_mask.paths[1]"),
        Arguments.of(List.of("status", "metadata", "Address"), "update_mask.paths[2]"),
        Arguments.of(List.of("attributes.address"), "update_mask.paths[0]"),
        Arguments.of(List.of("metadata.zone", "status"), "update_mask.paths[0]"),
        Arguments.of(List.of("address", ""), "update_mask.paths[1]"));
  }

  // ---- expire ----

  @Test
  void expireAfterRenewalIsNoop() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10))));
    apply(2, T0 + 5 * SECOND, renew("lock/a", 1));
    LeaseRecord renewed = held("lock/a");

    // The ticker saw the grant (last_renew_revision 1); the renewal at 2 raced its proposal and
    // wins.
    ApplyResult r = apply(3, T0 + 11 * SECOND, expire("lock/a", 1, 1));
    assertEquals(
        ExpireResponse.newBuilder().setExpired(0).setSkipped(1).setRevision(3).build(),
        r.reply().getExpire());
    assertTrue(r.events().isEmpty());
    assertEquals(renewed, held("lock/a"));

    ApplyResult later = apply(4, T0 + 16 * SECOND, expire("lock/a", 1, 2));
    assertEquals(1, later.reply().getExpire().getExpired());
    assertFalse(record("lock/a").isPresent());
  }

  @Test
  void expireWithSupersededTokenIsNoop() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    apply(2, T0, release("lock/a", 1));
    granted(apply(3, T0, acquire("lock/a", "bob")));
    LeaseRecord bobs = held("lock/a");

    // A deposed leader's late proposal for alice's lease.
    ApplyResult r = apply(4, T0 + 20 * SECOND, expire("lock/a", 1, 1));
    assertEquals(
        ExpireResponse.newBuilder().setExpired(0).setSkipped(1).setRevision(4).build(),
        r.reply().getExpire());
    assertTrue(r.events().isEmpty());
    assertEquals(bobs, held("lock/a"));
  }

  @Test
  void expireRemovesLeaseAndEmitsEvent() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    granted(apply(2, T0, acquire("lock/b", "bob")));
    granted(apply(3, T0, acquire("lock/c", "carol")));
    LeaseRecord a = held("lock/a");
    LeaseRecord b = held("lock/b");
    LeaseRecord c = held("lock/c");

    ApplyResult r =
        apply(
            4,
            T0 + 11 * SECOND,
            expire(
                expiry("lock/a", 1, 1),
                expiry("lock/b", 2, 2),
                expiry("lock/gone", 1, 1),
                expiry("", 1, 1),
                expiry("lock/a", 1, 1)));
    assertEquals(
        ExpireResponse.newBuilder().setExpired(2).setSkipped(3).setRevision(4).build(),
        r.reply().getExpire());
    assertEquals(List.of("EXPIRED@4:lock/a", "EXPIRED@4:lock/b"), describe(r.events()));
    assertEquals(a, r.events().get(0).lease());
    assertEquals(b, r.events().get(1).lease());
    assertEquals(Map.of("lock/c", c), leases());
    assertFalse(get("lock/a", T0).getFound());

    assertEquals(
        5, granted(apply(5, T0 + 11 * SECOND, acquire("lock/a", "bob"))).getLease().getToken());
  }

  // ---- invalid entries ----

  @Test
  void tokenNeverIssuedIsInvalidAndChangesNothing() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10), A1)));
    Map<String, LeaseRecord> before = leases();

    ApplyResult rel = apply(2, T0 + SECOND, release("lock/a", 2));
    assertEquals("token", invalid(rel).getField());
    assertTrue(invalid(rel).getMessage().contains("token"));
    assertTrue(rel.events().isEmpty());
    assertEquals(new AppliedPosition(TERM, 2), core.applied());

    ApplyResult upd = apply(3, T0 + SECOND, update("lock/a", 99, A2));
    assertEquals("token", invalid(upd).getField());
    assertEquals(3, core.applied().index());

    // One never-issued token makes the whole batch invalid: the valid item is not renewed either.
    ApplyResult ren = apply(4, T0 + SECOND, renew(item("lock/a", 1), item("lock/a", 4)));
    assertEquals("items[1].token", invalid(ren).getField());
    assertTrue(invalid(ren).getMessage().contains("items[1].token"));
    assertTrue(ren.events().isEmpty());
    assertEquals(4, core.applied().index());

    assertEquals(before, leases());
    assertEquals(
        Outcome.RELEASED,
        apply(5, T0 + SECOND, release("lock/a", 1)).reply().getRelease().getOutcome());
  }

  @Test
  void invalidCommandInLogIsNoop() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    Map<String, LeaseRecord> before = leases();

    Object[][] cases = {
      {acquire("", "bob"), "name"},
      {LogCommand.newBuilder(), "command"},
      {acquire("lock/b", ""), "holder"},
      {acquire("lock/b", "bob", secs(0)), "ttl"},
      {acquire("nons", "bob"), "name"},
      {
        LogCommand.newBuilder().setUpdate(UpdateRequest.newBuilder().setName("lock/a").setToken(1)),
        "attributes"
      },
      {LogCommand.newBuilder().setRenew(RenewRequest.getDefaultInstance()), "items"},
      {release("lock/a", 0), "token"},
      {renew(item("lock/a", 1), item("bad", 1)), "items[1].name"},
    };
    long index = 1;
    for (Object[] c : cases) {
      index++;
      ApplyResult r = apply(index, T0 + index * SECOND, (LogCommand.Builder) c[0]);
      InvalidCommand inv = invalid(r);
      assertEquals(c[1], inv.getField(), inv::toString);
      assertTrue(inv.getMessage().contains((String) c[1]), inv::getMessage);
      assertTrue(r.events().isEmpty());
      assertEquals(new AppliedPosition(TERM, index), core.applied(), "the entry is consumed");
      assertEquals(before, leases(), "an invalid entry changes no lease");
    }
  }

  @Test
  void entriesAtOrBelowAppliedIndexAreSkipped() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice")));
    granted(apply(2, T0 + SECOND, acquire("lock/b", "bob")));
    byte[] dump = StoreKind.dump(store);

    ApplyResult again = apply(2, T0 + 5 * SECOND, acquire("lock/c", "carol"));
    assertEquals(LogReply.getDefaultInstance(), again.reply());
    assertTrue(again.events().isEmpty());
    ApplyResult older = apply(1, T0 + 5 * SECOND, release("lock/a", 1));
    assertEquals(LogReply.getDefaultInstance(), older.reply());
    assertArrayEquals(
        dump, StoreKind.dump(store), "a replayed entry changes nothing, not even the clock");
    assertEquals(new AppliedPosition(TERM, 2), core.applied());

    // A restarted core over the same store skips the same way.
    core = new LeaseCore(store);
    assertEquals(
        LogReply.getDefaultInstance(), apply(2, T0 + 5 * SECOND, release("lock/b", 2)).reply());
    assertArrayEquals(dump, StoreKind.dump(store));

    assertEquals(
        3, granted(apply(3, T0 + 2 * SECOND, acquire("lock/c", "carol"))).getLease().getToken());
  }

  // ---- time ----

  @Test
  void recordedTimesStayMonotoneWhenLeaderClockGoesBack() throws IOException {
    granted(apply(1, T0 + 10 * SECOND, acquire("lock/a", "alice", secs(10))));
    assertEquals(T0 + 10 * SECOND, held("lock/a").getAcquiredAtMicros());

    apply(2, T0, renew("lock/a", 1));
    assertEquals(
        T0 + 10 * SECOND,
        held("lock/a").getRenewedAtMicros(),
        "a new leader's slower clock must not move time back");

    granted(apply(3, T0 + 5 * SECOND, acquire("lock/b", "bob")));
    assertEquals(T0 + 10 * SECOND, held("lock/b").getAcquiredAtMicros());

    apply(4, T0 + 20 * SECOND, renew("lock/a", 1));
    assertEquals(T0 + 20 * SECOND, held("lock/a").getRenewedAtMicros());

    // An entry without a stamp keeps the last time.
    granted(apply(5, 0, acquire("lock/c", "carol")));
    assertEquals(T0 + 20 * SECOND, held("lock/c").getAcquiredAtMicros());

    // Conflict's remaining is computed against the monotone clock, not the earlier stamp.
    ApplyResult conflict = apply(6, T0 + SECOND, acquire("lock/a", "bob"));
    assertEquals(secs(10), conflict.reply().getAcquire().getConflict().getRemaining());

    // The clock survives a restart of the core over the same store.
    core = new LeaseCore(store);
    granted(apply(7, T0, acquire("lock/d", "dave")));
    assertEquals(T0 + 20 * SECOND, held("lock/d").getAcquiredAtMicros());

    for (LeaseRecord r : leases().values()) {
      assertTrue(r.getRenewedAtMicros() >= r.getAcquiredAtMicros(), r::toString);
    }
  }

  // ---- events ----

  @Test
  void eventsMatchChanges() throws IOException {
    List<LeaseEvent> all = new ArrayList<>();
    long t = T0;
    List<ApplyResult> results = new ArrayList<>();
    results.add(apply(1, t, acquire("svc/pay/1", "alice", secs(10))));
    results.add(apply(2, t += SECOND, renew("svc/pay/1", 1)));
    results.add(apply(3, t += SECOND, acquire("svc/pay/1", "alice", secs(10), A1)));
    results.add(apply(4, t += SECOND, update("svc/pay/1", 1, A2)));
    results.add(apply(5, t += SECOND, acquire("svc/pay/1", "bob"))); // conflict: no event
    results.add(apply(6, t += SECOND, acquire("svc/pay/2", "bob", secs(1)))); // rejected: no event
    results.add(apply(7, t += SECOND, renew("svc/pay/2", 6))); // not held: no event
    results.add(apply(8, t += SECOND, release("svc/pay/1", 1)));
    results.add(apply(9, t += SECOND, acquire("svc/pay/1", "bob")));
    results.add(apply(10, t += 20 * SECOND, expire("svc/pay/1", 9, 9)));
    results.add(apply(11, t, expire("svc/pay/1", 9, 9))); // already gone: no event
    for (ApplyResult r : results) {
      for (LeaseEvent e : r.events()) {
        assertEquals(r.revision(), e.revision(), "an event's revision is the index of its entry");
        all.add(e);
      }
    }
    assertEquals(
        List.of(
            "ACQUIRED@1:svc/pay/1",
            "RENEWED@2:svc/pay/1",
            "RENEWED@3:svc/pay/1",
            "UPDATED@3:svc/pay/1",
            "UPDATED@4:svc/pay/1",
            "RELEASED@8:svc/pay/1",
            "ACQUIRED@9:svc/pay/1",
            "EXPIRED@10:svc/pay/1"),
        describe(all));
    assertEquals(1, all.get(0).lease().getToken());
    assertEquals(A1, all.get(3).lease().getAttributes());
    assertEquals(A2, all.get(4).lease().getAttributes());
    assertEquals("alice", all.get(5).lease().getHolder());
    assertEquals(1, all.get(5).lease().getToken());
    assertEquals(9, all.get(6).lease().getToken());
    assertEquals("bob", all.get(7).lease().getHolder());
    assertTrue(leases().isEmpty());
    for (LeaseEvent e : all) {
      assertEquals(
          e.type().endsLease(),
          e.type() == LeaseEvent.Type.RELEASED || e.type() == LeaseEvent.Type.EXPIRED);
    }
  }

  @Test
  void acquireEmitsAcquiredWithTheStoredLease() throws IOException {
    ApplyResult r = apply(1, T0, acquire("svc/pay/1", "alice", secs(10), A1));
    assertEquals(
        List.of(new LeaseEvent(LeaseEvent.Type.ACQUIRED, 1, "svc/pay/1", held("svc/pay/1"), T0)),
        r.events());
  }

  // ---- reads ----

  @Test
  void listByPrefixPagesInNameOrderWithRevision() throws IOException {
    String[] names = {"a/bz", "b/x", "a/b/2", "a/c", "a/b", "a/b/\u00fc", "a/b0", "a/b/1", "ab/x"};
    long index = 0;
    for (String n : names) {
      index++;
      granted(apply(index, T0, acquire(n, "h", secs(10))));
    }
    long rev = index;

    ListResponse ab = list("a/b", 0, "", T0 + SECOND);
    // Unsigned UTF-8 byte order: '/' (0x2f) < '0' < 'z'; "ü" (0xc3 0xbc) after ASCII.
    assertEquals(List.of("a/b", "a/b/1", "a/b/2", "a/b/\u00fc", "a/b0", "a/bz"), names(ab));
    assertEquals(rev, ab.getRevision());
    assertFalse(ab.getMore());
    assertEquals(secs(9), ab.getLeases(0).getRemaining());
    assertEquals(get("a/b", T0 + SECOND).getLease(), ab.getLeases(0));

    ListResponse page1 = list("a/b/", 2, "", T0);
    assertEquals(List.of("a/b/1", "a/b/2"), names(page1));
    assertTrue(page1.getMore());
    assertEquals(rev, page1.getRevision());
    ListResponse page2 = list("a/b/", 2, "a/b/2", T0);
    assertEquals(List.of("a/b/\u00fc"), names(page2));
    assertFalse(page2.getMore());

    // A page that ends exactly at the last match has no "more".
    ListResponse exact = list("a/b/", 3, "", T0);
    assertEquals(3, exact.getLeasesCount());
    assertFalse(exact.getMore());

    // start_after need not be a stored name; a start_after before the prefix means "from the
    // prefix".
    assertEquals(List.of("a/b/2", "a/b/\u00fc"), names(list("a/b/", 0, "a/b/10", T0)));
    assertEquals(List.of("a/b/1", "a/b/2", "a/b/\u00fc"), names(list("a/b/", 0, "a/a", T0)));
    assertEquals(List.of(), names(list("a/b/", 0, "a/b/\u00fc", T0)));

    ListResponse all = list("", 0, "", T0);
    List<String> sorted =
        List.of(names).stream()
            .sorted(
                (x, y) ->
                    java.util.Arrays.compareUnsigned(
                        x.getBytes(StandardCharsets.UTF_8), y.getBytes(StandardCharsets.UTF_8)))
            .collect(Collectors.toList());
    assertEquals(sorted, names(all));

    // Paging through everything one at a time yields every name once, in order.
    List<String> paged = new ArrayList<>();
    String after = "";
    ListResponse page;
    do {
      page = list("", 1, after, T0);
      paged.addAll(names(page));
      after = page.getLeasesCount() == 0 ? after : page.getLeases(0).getName();
    } while (page.getMore());
    assertEquals(sorted, paged);

    ListResponse none = list("zzz/", 0, "", T0);
    assertEquals(0, none.getLeasesCount());
    assertFalse(none.getMore());
    assertEquals(rev, none.getRevision());

    apply(rev + 1, T0, release("a/c", 4));
    assertEquals(rev + 1, list("a/", 0, "", T0).getRevision());
    assertFalse(names(list("a/", 0, "", T0)).contains("a/c"));
  }

  @Test
  void listWithAddressKeepsOnlyLeasesWithAnAddressAndPagesOverMatchesOnly() throws IOException {
    Attributes addressed = attrs("10.0.0.1:1", "", Map.of());
    Attributes statusOnly = attrs("", "SERVING", Map.of("zone", "a"));
    Object[][] leases = {
      {"r/1", addressed}, {"r/2", null}, {"r/3", statusOnly}, {"r/4", addressed},
      {"r/5", null}, {"r/6", addressed}, {"r/7", statusOnly}, {"s/1", addressed},
    };
    long index = 0;
    for (Object[] l : leases) {
      index++;
      Attributes a = (Attributes) l[1];
      granted(
          apply(
              index,
              T0,
              a == null
                  ? acquire((String) l[0], "h", secs(10))
                  : acquire((String) l[0], "h", secs(10), a)));
    }

    assertEquals(List.of("r/1", "r/4", "r/6"), names(routes("r/", 0, "")));
    assertEquals(List.of("r/1", "r/4", "r/6", "s/1"), names(routes("", 0, "")));
    assertEquals(8, list("", 0, "", T0).getLeasesCount(), "without the flag every lease is listed");
    assertEquals(index, routes("r/", 0, "").getRevision());
    assertEquals(
        get("r/4", T0).getLease(),
        routes("r/", 0, "").getLeases(1),
        "a route is listed as Get shows it");

    // The limit counts matches only, and "more" means another match, not another lease.
    ListResponse page1 = routes("r/", 2, "");
    assertEquals(List.of("r/1", "r/4"), names(page1));
    assertTrue(page1.getMore());
    ListResponse page2 = routes("r/", 2, "r/4");
    assertEquals(List.of("r/6"), names(page2));
    assertFalse(page2.getMore(), "only leases without an address follow r/6");
    ListResponse exact = routes("r/", 3, "");
    assertEquals(List.of("r/1", "r/4", "r/6"), names(exact));
    assertFalse(exact.getMore());
    assertEquals(List.of("r/4"), names(routes("r/", 1, "r/1")));

    List<String> paged = new ArrayList<>();
    String after = "";
    ListResponse page;
    do {
      page = routes("", 1, after);
      paged.addAll(names(page));
      after = page.getLeasesCount() == 0 ? after : page.getLeases(0).getName();
    } while (page.getMore());
    assertEquals(List.of("r/1", "r/4", "r/6", "s/1"), paged);

    // An update that clears the address drops the lease from the routes; one that sets it adds it.
    apply(++index, T0, maskedUpdate("r/4", 4, null, "address"));
    apply(++index, T0, maskedUpdate("r/3", 3, addressed, "address"));
    assertEquals(List.of("r/1", "r/3", "r/6"), names(routes("r/", 0, "")));
    assertEquals(
        statusOnly.toBuilder().setAddress("10.0.0.1:1").build(),
        routes("r/", 0, "").getLeases(1).getAttributes());
  }

  private ListResponse routes(String prefix, int limit, String startAfter) {
    return core.list(
        ListRequest.newBuilder()
            .setPrefix(prefix)
            .setLimit(limit)
            .setStartAfter(startAfter)
            .setWithAddress(true)
            .build(),
        T0);
  }

  @Test
  void getReportsRevisionAndRemaining() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10))));
    granted(apply(2, T0 + SECOND, acquire("lock/b", "bob")));
    apply(3, T0 + 2 * SECOND, renew("lock/b", 2));

    GetResponse g = get("lock/a", T0 + 4 * SECOND);
    assertTrue(g.getFound());
    assertEquals(3, g.getRevision());
    assertEquals(secs(6), g.getLease().getRemaining());
    assertEquals(
        Duration.getDefaultInstance(),
        get("lock/a", T0 + 60 * SECOND).getLease().getRemaining(),
        "remaining never goes negative");
    assertEquals(secs(15), get("lock/a", T0 - 5 * SECOND).getLease().getRemaining());

    GetResponse missing = get("lock/none", T0);
    assertFalse(missing.getFound());
    assertFalse(missing.hasLease());
    assertEquals(3, missing.getRevision());

    assertEquals(
        g,
        core.query(
                ReadQuery.newBuilder().setGet(GetRequest.newBuilder().setName("lock/a")).build(),
                T0 + 4 * SECOND)
            .getGet());
    assertEquals(
        list("lock/", 0, "", T0),
        core.query(
                ReadQuery.newBuilder().setList(ListRequest.newBuilder().setPrefix("lock/")).build(),
                T0)
            .getList());

    InvalidArgumentException e =
        assertThrows(InvalidArgumentException.class, () -> get("nope", T0));
    assertEquals("name", e.field());
    InvalidArgumentException q =
        assertThrows(
            InvalidArgumentException.class, () -> core.query(ReadQuery.getDefaultInstance(), T0));
    assertEquals("query", q.field());
    InvalidArgumentException l =
        assertThrows(InvalidArgumentException.class, () -> list("", -1, "", T0));
    assertEquals("limit", l.field());
  }

  @Test
  void forEachLeaseVisitsAllInNameOrderAtOneRevision() throws IOException {
    granted(apply(1, T0, acquire("lock/b", "alice")));
    granted(apply(2, T0, acquire("lock/a", "bob")));
    List<String> seen = new ArrayList<>();
    long rev = core.forEachLease((name, lease) -> seen.add(name + "=" + lease.getToken()));
    assertEquals(2, rev);
    assertEquals(List.of("lock/a=2", "lock/b=1"), seen);
  }
}
