package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.acquireIn;
import static io.leasehold.statemachine.core.Cmds.ban;
import static io.leasehold.statemachine.core.Cmds.closeSession;
import static io.leasehold.statemachine.core.Cmds.createSession;
import static io.leasehold.statemachine.core.Cmds.expire;
import static io.leasehold.statemachine.core.Cmds.expireSession;
import static io.leasehold.statemachine.core.Cmds.formatSessions;
import static io.leasehold.statemachine.core.Cmds.keepAlive;
import static io.leasehold.statemachine.core.Cmds.policy;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static io.leasehold.statemachine.core.Cmds.transfer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseState;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.Session;
import io.leasehold.proto.v1.TransferResponse;
import io.leasehold.proto.v1.WithdrawOfferItem;
import io.leasehold.proto.v1.WithdrawOffers;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sessions and transfers (log format 4): every outcome of CreateSession, KeepAlive, CloseSession,
 * an Acquire naming a session, the Expire of a session and Transfer, and the holder index. Run on
 * every store.
 */
public abstract class SessionContract extends CoreFixture {
  private long index;

  @BeforeEach
  void raiseFormat() throws IOException {
    apply(1, T0, formatSessions());
    index = 1;
  }

  /** A new, empty store (log format 1) in place of the one the fixture opened. */
  private void freshStore() throws IOException {
    closeStore();
    store = newStore(tempDir.resolve("fresh"));
    core = new LeaseCore(store);
  }

  private ApplyResult next(LogCommand.Builder c) throws IOException {
    return next(c, 0);
  }

  private ApplyResult next(LogCommand.Builder c, long afterSeconds) throws IOException {
    index++;
    return apply(index, T0 + afterSeconds * SECOND, c);
  }

  private static long token(long index) {
    return index * 256;
  }

  private long newSession(String holder, long ttlSeconds) throws IOException {
    ApplyResult r = next(createSession(holder, secs(ttlSeconds)));
    assertEquals(
        Outcome.GRANTED, r.reply().getCreateSession().getOutcome(), () -> r.reply().toString());
    return r.reply().getCreateSession().getSession().getId();
  }

  private Session session(long id) {
    var g = core.getSession(GetSessionRequest.newBuilder().setSession(id).build(), T0);
    assertTrue(g.getFound(), "no session " + id);
    return g.getSession();
  }

  private boolean sessionExists(long id) {
    return core.getSession(GetSessionRequest.newBuilder().setSession(id).build(), T0).getFound();
  }

  @Test
  void sessionCommandsNeedFormatFour() throws IOException {
    freshStore();
    assertTrue(
        invalid(apply(1, T0, createSession("alice", secs(10))))
            .getMessage()
            .contains("needs log format 4"));
    assertTrue(
        invalid(apply(2, T0, acquireIn("lock/a", "alice", 5)))
            .getMessage()
            .contains("needs log format 4"));
    assertTrue(
        invalid(apply(3, T0, transfer("lock/a", 1, "bob")))
            .getMessage()
            .contains("needs log format 4"));
    assertTrue(leases().isEmpty());
  }

  @Test
  void aSessionsIdComesFromItsLogPositionAndItReadsBack() throws IOException {
    ApplyResult r = next(createSession("alice", secs(12)));
    Session s = r.reply().getCreateSession().getSession();
    assertEquals(token(2), s.getId());
    assertEquals("alice", s.getHolder());
    assertEquals(secs(12), s.getTtl());
    assertEquals(
        List.of(new SessionChange(s.getId(), r.sessions().get(0).session())), r.sessions());
    Session read = session(s.getId());
    assertEquals(2, read.getLastRenewRevision());
    assertEquals(0, read.getLeases());
    assertEquals(Cmds.at(T0 + 12 * SECOND), read.getExpiresAt());
  }

  @Test
  void aSessionsTtlIsCheckedAgainstTheDefaultPolicyAndABannedHolderGetsNone() throws IOException {
    var tooShort = next(createSession("alice", secs(1))).reply().getCreateSession();
    assertEquals(Outcome.REJECTED, tooShort.getOutcome());
    assertEquals(RejectReason.TTL_OUT_OF_RANGE, tooShort.getRejection().getReason());
    next(ban("mallory", "abuse"));
    var banned = next(createSession("mallory", secs(10))).reply().getCreateSession();
    assertEquals(RejectReason.BANNED, banned.getRejection().getReason());
    assertEquals(
        0, core.listSessions(ListSessionsRequest.getDefaultInstance(), T0).getSessionsCount());
  }

  @Test
  void aLeaseAttachedToASessionHasItsOwnTokenAndTheSessionsTtl() throws IOException {
    long s = newSession("alice", 15);
    Lease a = granted(next(acquireIn("lock/a", "alice", s))).getLease();
    Lease b = granted(next(acquireIn("lock/b", "alice", s))).getLease();
    assertEquals(token(3), a.getToken());
    assertEquals(token(4), b.getToken());
    assertEquals(s, a.getSession());
    assertEquals(secs(15), a.getTtl());
    assertEquals(2, session(s).getLeases());
    assertEquals(
        List.of("lock/a", "lock/b"),
        core.getSession(GetSessionRequest.newBuilder().setSession(s).build(), T0).getLeasesList());
  }

  /**
   * Found by the session fault workload: a lease attached late in the session's TTL was counted
   * valid by its client for a whole TTL from the Acquire, but the session expired sooner.
   */
  @Test
  void attachingALeaseKeepsTheSessionAlive() throws IOException {
    long s = newSession("alice", 10);
    long created = index;
    ApplyResult r = next(acquireIn("lock/a", "alice", s), 8);
    assertEquals(
        List.of(s), r.sessions().stream().map(SessionChange::id).collect(Collectors.toList()));
    assertEquals(index, session(s).getLastRenewRevision());
    assertEquals(Cmds.at(T0 + 18 * SECOND), r.reply().getAcquire().getLease().getExpiresAt());
    assertEquals(
        1,
        next(expireSession(s, created), 12).reply().getExpire().getSessionsSkipped(),
        "the ticker's view from before the acquisition is stale");
  }

  @Test
  void aSessionThatIsNotLiveOrNotTheHoldersIsRejected() throws IOException {
    long s = newSession("alice", 10);
    assertEquals(
        RejectReason.NO_SESSION, rejected(next(acquireIn("lock/a", "bob", s))).getReason());
    assertEquals(
        RejectReason.NO_SESSION, rejected(next(acquireIn("lock/a", "alice", s + 1))).getReason());
    next(closeSession(s));
    assertEquals(
        RejectReason.NO_SESSION, rejected(next(acquireIn("lock/a", "alice", s))).getReason());
  }

  @Test
  void aSessionAndATtlTogetherAreBadInput() throws IOException {
    long s = newSession("alice", 10);
    LogCommand.Builder both = acquireIn("lock/a", "alice", s);
    both.getAcquireBuilder().setTtl(secs(10));
    assertEquals("ttl", invalid(next(both)).getField());
  }

  @Test
  void keepingASessionAliveWritesOneItemWhateverItsLeases() throws IOException {
    long s = newSession("alice", 10);
    for (int i = 0; i < 50; i++) {
      granted(next(acquireIn("lock/l" + i, "alice", s)));
    }
    ApplyResult r = next(keepAlive(s), 3);
    KeepAliveResult k = r.reply().getKeepAlive().getResults(0);
    assertEquals(Outcome.RENEWED, k.getOutcome());
    assertEquals(50, k.getLeases());
    assertEquals(Cmds.at(T0 + 13 * SECOND), k.getExpiresAt());
    assertTrue(r.events().isEmpty(), "no lease is written: " + describe(r.events()));
    assertEquals(1, r.sessions().size());
    assertEquals(index, session(s).getLastRenewRevision());
    Lease read = get("lock/l7", T0 + 3 * SECOND).getLease();
    assertEquals(
        Cmds.at(T0 + 13 * SECOND),
        read.getExpiresAt(),
        "an attached lease ends when its session would");
  }

  @Test
  void keepAliveAnswersEachSession() throws IOException {
    long s = newSession("alice", 10);
    long gone = newSession("alice", 10);
    next(closeSession(gone));
    var reply = next(keepAlive(s, gone)).reply().getKeepAlive();
    assertEquals(
        List.of(Outcome.RENEWED, Outcome.NOT_HELD),
        reply.getResultsList().stream()
            .map(KeepAliveResult::getOutcome)
            .collect(Collectors.toList()));
    assertEquals(
        List.of(Outcome.RENEWED, Outcome.RENEWED),
        next(keepAlive(s, s)).reply().getKeepAlive().getResultsList().stream()
            .map(KeepAliveResult::getOutcome)
            .collect(Collectors.toList()),
        "a session listed twice is kept alive twice, as Renew does");
    assertEquals("sessions[0]", invalid(next(keepAlive(-3L))).getField());
  }

  @Test
  void closingASessionEndsEveryAttachedLeaseInOneEntry() throws IOException {
    next(setPolicy("lock", policy().setLockDelay(secs(30))));
    long s = newSession("alice", 10);
    granted(next(acquireIn("lock/a", "alice", s)));
    granted(next(acquireIn("lock/b", "alice", s)));
    granted(next(acquire("lock/own", "alice")));
    ApplyResult r = next(closeSession(s));
    assertEquals(Outcome.CLOSED, r.reply().getCloseSession().getOutcome());
    assertEquals(2, r.reply().getCloseSession().getLeasesEnded());
    assertEquals(
        List.of("SESSION_CLOSED@" + index + ":lock/a", "SESSION_CLOSED@" + index + ":lock/b"),
        describe(r.events()));
    Event api = Events.toApi(r.events().get(0));
    assertEquals(Event.Type.RELEASED, api.getType());
    assertEquals(Event.Reason.REASON_SESSION_CLOSED, api.getReason());
    assertEquals("session " + s, api.getMessage());
    assertEquals(List.of("lock/own"), new ArrayList<>(leases().keySet()));
    assertFalse(sessionExists(s));
    granted(next(acquire("lock/a", "bob"))); // a close leaves no lock-delay, as a release does
    EndedLease ended = historyOf("lock/a").get(0);
    assertEquals(Event.Reason.REASON_SESSION_CLOSED, ended.getReason());
    assertEquals(s, ended.getSession());
    assertEquals(Outcome.NOT_HELD, next(closeSession(s)).reply().getCloseSession().getOutcome());
  }

  @Test
  void aSessionsExpiryIsGuardedAndEndsItsLeasesBehindTheLockDelay() throws IOException {
    next(setPolicy("lock", policy().setLockDelay(secs(30))));
    long s = newSession("alice", 10);
    long created = index;
    granted(next(acquireIn("lock/a", "alice", s)));
    next(keepAlive(s), 5);
    ApplyResult stale = next(expireSession(s, created + 1), 12);
    assertEquals(
        1,
        stale.reply().getExpire().getSessionsSkipped(),
        "a keep-alive after the ticker's view wins");
    assertTrue(stale.events().isEmpty());

    long keptAt = session(s).getLastRenewRevision();
    ApplyResult r = next(expireSession(s, keptAt), 16);
    assertEquals(1, r.reply().getExpire().getSessionsExpired());
    assertEquals(1, r.reply().getExpire().getSessionLeasesEnded());
    assertEquals(List.of("SESSION_EXPIRED@" + index + ":lock/a"), describe(r.events()));
    Event api = Events.toApi(r.events().get(0));
    assertEquals(Event.Type.EXPIRED, api.getType());
    assertEquals(Event.Reason.REASON_SESSION_EXPIRED, api.getReason());
    assertEquals(List.of(new SessionChange(s, java.util.Optional.empty())), r.sessions());
    assertEquals(RejectReason.LOCK_DELAY, rejected(next(acquire("lock/a", "bob"))).getReason());
    assertEquals(Event.Reason.REASON_SESSION_EXPIRED, historyOf("lock/a").get(0).getReason());
    // The stored history reads back with its reason, as watchers replaying it see it.
    Event replayed =
        history(index - 1).stream()
            .filter(e -> e.getName().equals("lock/a"))
            .findFirst()
            .orElseThrow();
    assertEquals(Event.Reason.REASON_SESSION_EXPIRED, replayed.getReason());
  }

  @Test
  void anAttachedLeaseNeverExpiresOnItsOwn() throws IOException {
    long s = newSession("alice", 10);
    Lease a = granted(next(acquireIn("lock/a", "alice", s))).getLease();
    ApplyResult r = next(expire("lock/a", a.getToken(), a.getLastRenewRevision()), 60);
    assertEquals(1, r.reply().getExpire().getSkipped());
    assertTrue(record("lock/a").isPresent());
  }

  @Test
  void aKeepAliveCountsTheAttachedLeasesThatEndedSoItsClientChecksThem() throws IOException {
    long s = newSession("alice", 10);
    Lease a = granted(next(acquireIn("lock/a", "alice", s))).getLease();
    granted(next(acquireIn("lock/b", "alice", s)));
    long renewedAt = session(s).getLastRenewRevision();
    ApplyResult revoked = next(Cmds.revoke("lock/a", a.getToken(), "operator"));
    assertTrue(
        revoked.sessions().isEmpty(), "an ending is no keep-alive: the leader's deadline stays");
    assertEquals(renewedAt, session(s).getLastRenewRevision());
    KeepAliveResult k = next(keepAlive(s)).reply().getKeepAlive().getResults(0);
    assertEquals(1, k.getLeasesEnded());
    assertEquals(1, k.getLeases());
  }

  @Test
  void releaseAndRenewWorkOnAnAttachedLease() throws IOException {
    long s = newSession("alice", 10);
    Lease a = granted(next(acquireIn("lock/a", "alice", s))).getLease();
    assertEquals(
        Outcome.RENEWED,
        next(renew("lock/a", a.getToken())).reply().getRenew().getResults(0).getOutcome());
    assertEquals(
        Outcome.RELEASED, next(release("lock/a", a.getToken())).reply().getRelease().getOutcome());
    assertEquals(0, session(s).getLeases());
    assertEquals(0, next(closeSession(s)).reply().getCloseSession().getLeasesEnded());
  }

  @Test
  void theHolderAskingAgainMovesALeaseIntoOrOutOfASession() throws IOException {
    Lease own = granted(next(acquire("lock/a", "alice"))).getLease();
    long s = newSession("alice", 20);
    Lease attached = granted(next(acquireIn("lock/a", "alice", s))).getLease();
    assertEquals(own.getToken(), attached.getToken(), "the same lease");
    assertEquals(s, attached.getSession());
    assertEquals(
        s,
        granted(next(acquire("lock/a", "alice"))).getLease().getSession(),
        "a bare retry keeps the session");
    LogCommand.Builder withTtl = acquire("lock/a", "alice");
    withTtl.getAcquireBuilder().setTtl(secs(30));
    assertEquals(0, granted(next(withTtl)).getLease().getSession(), "a TTL of its own detaches it");
    assertEquals(0, next(closeSession(s)).reply().getCloseSession().getLeasesEnded());
  }

  @Test
  void sessionsAndTheirLeasesSurviveAReload() throws IOException {
    long s = newSession("alice", 10);
    granted(next(acquireIn("lock/a", "alice", s)));
    granted(next(acquireIn("lock/b", "alice", s)));
    core = new LeaseCore(store);
    assertEquals(2, next(closeSession(s)).reply().getCloseSession().getLeasesEnded());
    assertTrue(leases().isEmpty());
  }

  @Test
  void sessionCommandsMayShareABatch() throws IOException {
    long s = newSession("alice", 10);
    index++;
    ApplyResult r =
        apply(
            index,
            T0,
            LogCommand.newBuilder()
                .setBatch(
                    CommandBatch.newBuilder()
                        .addCommands(acquireIn("lock/a", "alice", s))
                        .addCommands(keepAlive(s))
                        .addCommands(createSession("bob", secs(10)))));
    var replies = r.reply().getBatch();
    assertEquals(index * 256, replies.getReplies(0).getAcquire().getLease().getToken());
    assertEquals(1, replies.getReplies(1).getKeepAlive().getResults(0).getLeases());
    assertEquals(index * 256 + 2, replies.getReplies(2).getCreateSession().getSession().getId());
    assertEquals(
        3, r.sessions().size(), "the attachment's keep-alive, the keep-alive and the new session");
  }

  // ---- transfers ----

  @Test
  void aTransferEndsTheLeaseAndGrantsANewLargerTokenAtTheSameRevision() throws IOException {
    next(setPolicy("lock", policy().setLockDelay(secs(30))));
    Lease old = granted(next(acquire("lock/a", "alice"))).getLease();
    ApplyResult r = next(transfer("lock/a", old.getToken(), "bob"));
    TransferResponse t = r.reply().getTransfer();
    assertEquals(Outcome.TRANSFERRED, t.getOutcome());
    assertEquals("bob", t.getLease().getHolder());
    assertEquals(token(index), t.getLease().getToken());
    assertTrue(t.getLease().getToken() > old.getToken());
    assertEquals(
        List.of("TRANSFERRED@" + index + ":lock/a", "ACQUIRED@" + index + ":lock/a"),
        describe(r.events()));
    Event ending = Events.toApi(r.events().get(0));
    assertEquals(Event.Type.RELEASED, ending.getType());
    assertEquals(Event.Reason.REASON_TRANSFERRED, ending.getReason());
    assertEquals("to bob", ending.getMessage());
    assertEquals("alice", ending.getLease().getHolder());
    assertEquals(
        List.of(Event.Type.RELEASED, Event.Type.ACQUIRED),
        storedAt(index).stream().map(e -> e.event().getType()).collect(Collectors.toList()));
    assertEquals(Event.Reason.REASON_TRANSFERRED, historyOf("lock/a").get(0).getReason());

    assertEquals(
        Outcome.NOT_HELD,
        next(release("lock/a", old.getToken())).reply().getRelease().getOutcome());
    assertEquals(
        Outcome.NOT_HELD,
        next(renew("lock/a", old.getToken())).reply().getRenew().getResults(0).getOutcome());
    assertEquals(
        Outcome.CONFLICT, next(acquire("lock/a", "carol")).reply().getAcquire().getOutcome());
    assertEquals(
        Outcome.RELEASED,
        next(release("lock/a", t.getLease().getToken())).reply().getRelease().getOutcome());
    granted(next(acquire("lock/a", "carol"))); // no lock-delay came from the transfer
  }

  @Test
  void aTransferWithAStaleTokenChangesNothing() throws IOException {
    Lease old = granted(next(acquire("lock/a", "alice"))).getLease();
    next(release("lock/a", old.getToken()));
    Lease now = granted(next(acquire("lock/a", "carol"))).getLease();
    ApplyResult r = next(transfer("lock/a", old.getToken(), "bob"));
    assertEquals(Outcome.NOT_HELD, r.reply().getTransfer().getOutcome());
    assertTrue(r.events().isEmpty());
    assertEquals(now.getToken(), held("lock/a").getToken());
  }

  @Test
  void aTransferIsCheckedAgainstTheNewHoldersPolicy() throws IOException {
    next(setPolicy("lock", policy().setMaxLeasesPerHolder(1)));
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    granted(next(acquire("lock/b", "bob")));
    var quota = next(transfer("lock/a", a.getToken(), "bob")).reply().getTransfer();
    assertEquals(RejectReason.HOLDER_QUOTA, quota.getRejection().getReason());
    next(ban("mallory", "abuse"));
    var banned = next(transfer("lock/a", a.getToken(), "mallory")).reply().getTransfer();
    assertEquals(RejectReason.BANNED, banned.getRejection().getReason());
    assertEquals("alice", held("lock/a").getHolder());
    assertEquals(a.getToken(), held("lock/a").getToken());
  }

  @Test
  void aTransferMayAttachTheNewLeaseToTheNewHoldersSession() throws IOException {
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    long bobs = newSession("bob", 20);
    LogCommand.Builder c = transfer("lock/a", a.getToken(), "bob");
    c.getTransferBuilder().setSession(bobs);
    Lease moved = next(c).reply().getTransfer().getLease();
    assertEquals(bobs, moved.getSession());
    assertEquals(secs(20), moved.getTtl());
    assertEquals(1, next(closeSession(bobs)).reply().getCloseSession().getLeasesEnded());

    Lease again = granted(next(acquire("lock/b", "alice"))).getLease();
    long alices = newSession("alice", 20);
    LogCommand.Builder wrong = transfer("lock/b", again.getToken(), "bob");
    wrong.getTransferBuilder().setSession(alices);
    assertEquals(
        RejectReason.NO_SESSION, next(wrong).reply().getTransfer().getRejection().getReason());
  }

  @Test
  void aTransferOutOfASessionDetachesTheLease() throws IOException {
    long s = newSession("alice", 10);
    Lease a = granted(next(acquireIn("lock/a", "alice", s))).getLease();
    Lease moved = next(transfer("lock/a", a.getToken(), "bob")).reply().getTransfer().getLease();
    assertEquals(0, moved.getSession());
    assertEquals(0, next(closeSession(s)).reply().getCloseSession().getLeasesEnded());
    assertEquals("bob", held("lock/a").getHolder());
  }

  // ---- offered transfers ----

  private LogCommand.Builder offer(String name, long token, String to, long withinSeconds) {
    LogCommand.Builder c = transfer(name, token, to);
    c.getTransferBuilder().setAcceptWithin(secs(withinSeconds));
    return c;
  }

  private static LogCommand.Builder accept(String name, long offer, String holder) {
    return LogCommand.newBuilder()
        .setAcceptTransfer(
            AcceptTransferRequest.newBuilder().setName(name).setOffer(offer).setHolder(holder));
  }

  @Test
  void anOfferedTransferLeavesTheLeaseWhereItIsUntilTheNewHolderAccepts() throws IOException {
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    ApplyResult offered = next(offer("lock/a", a.getToken(), "bob", 30));
    assertEquals(Outcome.OFFERED, offered.reply().getTransfer().getOutcome());
    long offerId = offered.reply().getTransfer().getOffer();
    assertEquals(index, offerId);
    assertEquals(
        List.of(new TimedBar(TimedBar.Kind.OFFER, "lock/a", offerId, 30 * SECOND, false)),
        offered.bars());
    assertTrue(offered.events().isEmpty(), "nothing changes hands yet");
    assertEquals(
        Outcome.RENEWED,
        next(renew("lock/a", a.getToken())).reply().getRenew().getResults(0).getOutcome());

    assertEquals("holder", invalidOrRefused(next(accept("lock/a", offerId, "carol"))));
    assertEquals(
        Outcome.NOT_HELD,
        next(accept("lock/a", offerId + 1, "bob")).reply().getAcceptTransfer().getOutcome());
    ApplyResult accepted = next(accept("lock/a", offerId, "bob"));
    TransferResponse t = accepted.reply().getAcceptTransfer();
    assertEquals(Outcome.TRANSFERRED, t.getOutcome());
    assertEquals(token(index), t.getLease().getToken());
    assertEquals(
        List.of("TRANSFERRED@" + index + ":lock/a", "ACQUIRED@" + index + ":lock/a"),
        describe(accepted.events()));
    assertEquals(List.of(TimedBar.removed(TimedBar.Kind.OFFER, "lock/a")), accepted.bars());
    assertEquals(
        Outcome.NOT_HELD,
        next(accept("lock/a", offerId, "bob")).reply().getAcceptTransfer().getOutcome(),
        "an offer is taken up once");
  }

  @Test
  void anOfferEndsWithItsLeaseOrWhenTheLeaderWithdrawsIt() throws IOException {
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    long first = next(offer("lock/a", a.getToken(), "bob", 30)).reply().getTransfer().getOffer();
    long second = next(offer("lock/a", a.getToken(), "carol", 30)).reply().getTransfer().getOffer();
    assertEquals(
        Outcome.NOT_HELD,
        next(accept("lock/a", first, "bob")).reply().getAcceptTransfer().getOutcome(),
        "a later offer replaces an earlier one");
    var stale =
        next(LogCommand.newBuilder()
                .setWithdrawOffers(
                    WithdrawOffers.newBuilder()
                        .addItems(
                            WithdrawOfferItem.newBuilder().setName("lock/a").setRevision(first))))
            .reply()
            .getWithdrawOffers();
    assertEquals(1, stale.getSkipped(), "the leader's lift of the replaced offer changes nothing");
    var withdrawn =
        next(LogCommand.newBuilder()
                .setWithdrawOffers(
                    WithdrawOffers.newBuilder()
                        .addItems(
                            WithdrawOfferItem.newBuilder().setName("lock/a").setRevision(second))))
            .reply()
            .getWithdrawOffers();
    assertEquals(1, withdrawn.getWithdrawn());
    assertEquals(
        Outcome.NOT_HELD,
        next(accept("lock/a", second, "carol")).reply().getAcceptTransfer().getOutcome());

    long third = next(offer("lock/a", a.getToken(), "bob", 30)).reply().getTransfer().getOffer();
    ApplyResult released = next(release("lock/a", a.getToken()));
    assertTrue(
        released.bars().contains(TimedBar.removed(TimedBar.Kind.OFFER, "lock/a")),
        "the lease's end withdraws its offer");
    granted(next(acquire("lock/a", "dave")));
    assertEquals(
        Outcome.NOT_HELD,
        next(accept("lock/a", third, "bob")).reply().getAcceptTransfer().getOutcome());
    assertEquals("dave", held("lock/a").getHolder());
  }

  @Test
  void anOfferTheNewHolderCouldNotTakeIsRefusedAtOnceAndAgainAtAcceptance() throws IOException {
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    next(ban("mallory", "abuse"));
    assertEquals(
        RejectReason.BANNED,
        next(offer("lock/a", a.getToken(), "mallory", 30))
            .reply()
            .getTransfer()
            .getRejection()
            .getReason());
    long offerId = next(offer("lock/a", a.getToken(), "bob", 30)).reply().getTransfer().getOffer();
    next(ban("bob", "abuse"));
    TransferResponse late = next(accept("lock/a", offerId, "bob")).reply().getAcceptTransfer();
    assertEquals(RejectReason.BANNED, late.getRejection().getReason());
    assertEquals("alice", held("lock/a").getHolder());
  }

  private String invalidOrRefused(ApplyResult r) {
    assertTrue(r.reply().hasRefused(), () -> "expected a refusal, got " + r.reply());
    return r.reply().getRefused().getField();
  }

  // ---- reads ----

  @Test
  void listByHolderFollowsGrantsTransfersAndEndings() throws IOException {
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    granted(next(acquire("lock/b", "alice")));
    granted(next(acquire("svc/x", "alice")));
    granted(next(acquire("lock/c", "bob")));
    assertEquals(List.of("lock/a", "lock/b", "svc/x"), names(byHolder("alice", "")));
    assertEquals(List.of("lock/a", "lock/b"), names(byHolder("alice", "lock/")));
    next(transfer("lock/a", a.getToken(), "bob"));
    assertEquals(List.of("lock/b", "svc/x"), names(byHolder("alice", "")));
    assertEquals(List.of("lock/a", "lock/c"), names(byHolder("bob", "")));
    next(release("lock/b", held("lock/b").getToken()));
    assertEquals(List.of("svc/x"), names(byHolder("alice", "")));
    var page = core.list(ListRequest.newBuilder().setHolder("bob").setLimit(1).build(), T0);
    assertEquals(List.of("lock/a"), names(page));
    assertTrue(page.getMore());
    assertEquals(
        List.of("lock/c"),
        names(
            core.list(
                ListRequest.newBuilder().setHolder("bob").setStartAfter("lock/a").build(), T0)));
  }

  @Test
  void theHolderIndexStartsWithTheLeasesLiveWhenTheFormatRises() throws IOException {
    freshStore();
    apply(1, T0, acquire("lock/a", "alice"));
    apply(2, T0, acquire("lock/b", "bob"));
    assertEquals("holder", assertInvalidList("alice"));
    apply(3, T0, formatSessions());
    assertEquals(List.of("lock/a"), names(byHolder("alice", "")));
    assertEquals(List.of("lock/b"), names(byHolder("bob", "")));
  }

  private String assertInvalidList(String holder) {
    try {
      byHolder(holder, "");
      throw new AssertionError("listing by holder before format 4 was accepted");
    } catch (InvalidArgumentException e) {
      return e.field();
    }
  }

  private io.leasehold.proto.v1.ListResponse byHolder(String holder, String prefix) {
    return core.list(ListRequest.newBuilder().setHolder(holder).setPrefix(prefix).build(), T0);
  }

  @Test
  void aLeasePastItsEndInsideItsGraceIsExpiring() throws IOException {
    next(setPolicy("lock", policy().setGracePeriod(secs(5))));
    granted(next(acquire("lock/a", "alice"))); // default TTL 10 s
    assertEquals(LeaseState.ACTIVE, get("lock/a", T0 + 2 * SECOND).getLease().getState());
    assertEquals(LeaseState.EXPIRING, get("lock/a", T0 + 12 * SECOND).getLease().getState());
    assertEquals(LeaseState.STALE, get("lock/a", T0 + 16 * SECOND).getLease().getState());
  }

  @Test
  void aRenewalSaysWhenTheLeaseWouldNowEnd() throws IOException {
    Lease a = granted(next(acquire("lock/a", "alice"))).getLease();
    var result = next(renew("lock/a", a.getToken()), 4).reply().getRenew().getResults(0);
    assertEquals(Cmds.at(T0 + 14 * SECOND), result.getExpiresAt());
  }

  @Test
  void listSessionsFiltersByHolderAndPages() throws IOException {
    long a1 = newSession("alice", 10);
    long b1 = newSession("bob", 10);
    long a2 = newSession("alice", 10);
    assertEquals(
        List.of(a1, a2),
        core
            .listSessions(ListSessionsRequest.newBuilder().setHolder("alice").build(), T0)
            .getSessionsList()
            .stream()
            .map(Session::getId)
            .collect(Collectors.toList()));
    var page = core.listSessions(ListSessionsRequest.newBuilder().setLimit(2).build(), T0);
    assertEquals(
        List.of(a1, b1),
        page.getSessionsList().stream().map(Session::getId).collect(Collectors.toList()));
    assertTrue(page.getMore());
    assertEquals(
        List.of(a2),
        core
            .listSessions(ListSessionsRequest.newBuilder().setStartAfter(b1).build(), T0)
            .getSessionsList()
            .stream()
            .map(Session::getId)
            .collect(Collectors.toList()));
  }
}
