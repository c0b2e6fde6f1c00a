package io.leasehold.statemachine.core;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireManyResult;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Conflict;
import io.leasehold.proto.v1.ExpireCommand;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.ExpireResponse;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Rejection;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.StoredOffer;
import io.leasehold.proto.v1.StoredRequest;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.TransferResponse;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.UpdateResponse;
import io.leasehold.proto.v1.WithdrawOfferItem;
import io.leasehold.proto.v1.WithdrawOffers;
import io.leasehold.proto.v1.WithdrawOffersResponse;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiPredicate;
import java.util.function.IntToLongFunction;

/**
 * The apply of the lease commands (Acquire, Renew, Release, Update, Transfer, Expire) within one
 * entry's transaction: policy first, then the lease as the entry left it so far ({@link Tx#get}).
 */
final class LeaseCommands {
  private final KvStore store;
  private final CoreState state;

  /**
   * Acquire request ids applied by earlier commands of the batch being applied, with their replies.
   */
  private Map<String, AcquireResponse> entryRequests = Map.of();

  /** Whether an identity holds an admin role over a name, at this entry's place in the log. */
  private final BiPredicate<String, String> admin;

  LeaseCommands(KvStore store, CoreState state, BiPredicate<String, String> admin) {
    this.store = store;
    this.state = state;
    this.admin = admin;
  }

  /** The requests applied so far by the batch being applied; empty outside a batch. */
  void batchRequests(Map<String, AcquireResponse> requests) {
    entryRequests = requests;
  }

  /**
   * An Acquire with a request id applied before is answered as it was then and changes nothing (see
   * {@link AppliedRequests}); any other is decided and, if it has an id, remembered.
   */
  AcquireResponse acquire(Tx tx, AcquireRequest r) {
    Validation.acquire(r);
    holderIsCaller(tx, r.getHolder());
    String id = r.getRequestId();
    if (id.isEmpty()) {
      return decideAcquire(tx, r);
    }
    if (state.requests.contains(id)) {
      AcquireResponse sameEntry = entryRequests.get(id);
      if (sameEntry != null) {
        return sameEntry; // an earlier command of this batch, not in the store until the entry
        // commits
      }
      StoredRequest stored = storedRequest(id);
      if (stored.hasAcquireMany()) {
        throw new InvalidArgumentException(
            "request_id", "was used by an AcquireMany, not an Acquire: give each call its own id");
      }
      return stored.getAcquire();
    }
    AcquireResponse reply = decideAcquire(tx, r);
    tx.requestApplied(id, reply);
    return reply;
  }

  /** With authentication on, a client acquires only for itself. */
  private static void holderIsCaller(Tx tx, String holder) {
    if (!tx.caller.isEmpty() && !tx.caller.equals(holder)) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          "holder",
          "the holder must be the caller's identity " + tx.caller + ", not " + holder);
    }
  }

  /** An applied request's record, which the in-memory ids say the store holds. */
  private StoredRequest storedRequest(String id) {
    byte[] stored =
        store
            .get(Space.REQUESTS, LeaseCore.utf8(id))
            .orElseThrow(
                () ->
                    new StoreException(
                        "applied request " + id + " is in memory but not in the store", null));
    return AppliedRequests.decode(stored);
  }

  /** Grants a free name, renews it for its holder asking again, or says why not. */
  private AcquireResponse decideAcquire(Tx tx, AcquireRequest r) {
    Decision d = decide(tx, r, 0);
    return d.grant() == null ? d.refusal() : grant(tx, d.grant(), tx.token);
  }

  /**
   * An AcquireMany: every name decided as an Acquire of its own would be, in order, the quotas
   * counting the grants before it; then, unless all or nothing was asked and a name was refused,
   * each grant made with the token of its position ({@code tokenAt}). A request id applied before
   * is answered as it was then.
   */
  AcquireManyResponse acquireMany(Tx tx, AcquireManyRequest r, IntToLongFunction tokenAt) {
    Validation.acquireMany(r);
    holderIsCaller(tx, r.getHolder());
    String id = r.getRequestId();
    if (!id.isEmpty() && state.requests.contains(id)) {
      StoredRequest stored = storedRequest(id);
      if (!stored.hasAcquireMany()) {
        throw new InvalidArgumentException(
            "request_id", "was used by an Acquire, not an AcquireMany: give each call its own id");
      }
      return stored.getAcquireMany();
    }
    AcquireManyResponse reply = decideMany(tx, r, tokenAt);
    if (!id.isEmpty()) {
      tx.requestApplied(id, reply);
    }
    return reply;
  }

  private AcquireManyResponse decideMany(Tx tx, AcquireManyRequest r, IntToLongFunction tokenAt) {
    int n = r.getItemsCount();
    Decision[] decisions = new Decision[n];
    Map<String, Integer> newInNamespace = new HashMap<>();
    boolean refused = false;
    AcquireRequest.Builder one = AcquireRequest.newBuilder().setHolder(r.getHolder());
    if (r.hasTtl()) {
      one.setTtl(r.getTtl());
    }
    one.setSession(r.getSession());
    for (int i = 0; i < n; i++) {
      AcquireManyItem item = r.getItems(i);
      one.setName(item.getName());
      if (item.hasAttributes()) {
        one.setAttributes(item.getAttributes());
      } else {
        one.clearAttributes();
      }
      String namespace = LeaseIndex.namespace(item.getName());
      Decision d = decide(tx, one.build(), newInNamespace.getOrDefault(namespace, 0));
      decisions[i] = d;
      if (d.grant() == null) {
        refused = true;
      } else if (d.grant().current().isEmpty()) {
        newInNamespace.merge(namespace, 1, Integer::sum);
      }
    }
    AcquireManyResponse.Builder reply = AcquireManyResponse.newBuilder().setRevision(tx.index);
    boolean none = refused && r.getAllOrNothing();
    long heartbeat = Long.MAX_VALUE;
    int granted = 0;
    for (int i = 0; i < n; i++) {
      Decision d = decisions[i];
      AcquireManyResult.Builder result =
          AcquireManyResult.newBuilder().setName(r.getItems(i).getName());
      AcquireResponse answer;
      if (d.grant() == null) {
        answer = d.refusal();
      } else if (none) {
        reply.addResults(result.setOutcome(Outcome.SKIPPED));
        continue;
      } else {
        answer = grant(tx, d.grant(), tokenAt.applyAsLong(i));
        granted++;
        heartbeat = Math.min(heartbeat, Times.micros(answer.getHeartbeatInterval()));
      }
      result.setOutcome(answer.getOutcome());
      if (answer.hasLease()) {
        result.setLease(answer.getLease());
      }
      if (answer.hasConflict()) {
        result.setConflict(answer.getConflict());
      }
      if (answer.hasRejection()) {
        result.setRejection(answer.getRejection());
      }
      reply.addResults(result);
    }
    reply.setGranted(granted);
    if (granted > 0) {
      reply.setHeartbeatInterval(Times.duration(heartbeat));
    }
    return reply.build();
  }

  /** What an Acquire decided before it changes anything: a reply that refuses, or a grant. */
  private record Decision(AcquireResponse refusal, Grant grant) {}

  /**
   * A grant to make: a new lease, or the holder's own one renewed ({@code current} present), with
   * its TTL, session and the attributes asked for.
   */
  private record Grant(
      AcquireRequest request,
      PolicyTerms policy,
      Optional<LeaseRecord> current,
      long sessionId,
      Optional<StoredSession> session,
      long ttl) {}

  /**
   * Decides an Acquire without changing anything. Policy comes first (the holder's ban, the name
   * pattern, the TTL bounds), then a conflict with another holder, then what only a new grant must
   * pass (the lock-delay, the quotas, counting {@code pendingNew} grants of the same command in the
   * name's namespace that are not yet in the index).
   */
  private Decision decide(Tx tx, AcquireRequest r, int pendingNew) {
    String name = r.getName();
    PolicyTerms policy = state.policies.forName(name);
    AcquireResponse.Builder reply = AcquireResponse.newBuilder().setRevision(tx.index);
    Optional<Rejection> refused = PolicyGate.banned(state.bans, r.getHolder(), tx.now);
    if (refused.isEmpty()) {
      refused = PolicyGate.pattern(policy, name);
    }
    Optional<LeaseRecord> current = tx.get(name);
    boolean holderAsksAgain =
        current.isPresent() && current.get().getHolder().equals(r.getHolder());
    // The session the lease is to live with: the one named, else (a bare retry) the one it has.
    long sessionId =
        r.getSession() != 0
            ? r.getSession()
            : holderAsksAgain && !r.hasTtl() ? current.get().getSession() : 0;
    Optional<StoredSession> session = sessionId == 0 ? Optional.empty() : tx.session(sessionId);
    if (refused.isEmpty() && sessionId != 0) {
      refused = PolicyGate.session(session, sessionId, r.getHolder());
    }
    // No TTL in the request: a new lease gets the default; the holder asking again keeps its own,
    // so a bare retry never shortens a lease. A lease with a session has the session's.
    long ttl =
        session.isPresent()
            ? session.get().getTtlMicros()
            : r.hasTtl()
                ? Times.micros(r.getTtl())
                : holderAsksAgain ? current.get().getTtlMicros() : policy.defaultTtlMicros();
    if (refused.isEmpty()) {
      refused = PolicyGate.ttl(policy, ttl);
    }
    if (refused.isEmpty() && current.isPresent() && !holderAsksAgain) {
      LeaseRecord held = current.get();
      long remaining = Math.max(0, LeaseViews.expiresAtMicros(held) - tx.now);
      return new Decision(
          reply
              .setOutcome(Outcome.CONFLICT)
              .setConflict(
                  Conflict.newBuilder()
                      .setHolder(held.getHolder())
                      .setToken(held.getToken())
                      .setRemaining(Times.duration(remaining)))
              .build(),
          null);
    }
    if (refused.isEmpty()) {
      refused =
          holderAsksAgain
              ? PolicyGate.quotaForHeld(state.index, policy, name, current.get())
              : PolicyGate.lockDelay(state.lockDelays, name, tx.now)
                  .or(
                      () ->
                          PolicyGate.quotaForNew(
                              state.index, policy, name, r.getHolder(), pendingNew));
    }
    if (refused.isPresent()) {
      tx.rejected(refused.get().getReason());
      return new Decision(
          reply.setOutcome(Outcome.REJECTED).setRejection(refused.get()).build(), null);
    }
    return new Decision(
        null,
        new Grant(
            r, policy, holderAsksAgain ? current : Optional.empty(), sessionId, session, ttl));
  }

  /** Makes a grant decided by {@link #decide}: a new lease gets {@code token}. */
  private AcquireResponse grant(Tx tx, Grant g, long token) {
    AcquireRequest r = g.request();
    String name = r.getName();
    LeaseRecord lease;
    if (g.current().isPresent()) {
      // The holder asks again (a retry, or a restart that kept its identity): same lease, renewed.
      LeaseRecord held = g.current().get();
      LeaseRecord.Builder b =
          renewed(tx, held, g.policy()).setTtlMicros(g.ttl()).setSession(g.sessionId());
      boolean attributesChanged =
          r.hasAttributes() && !r.getAttributes().equals(held.getAttributes());
      if (attributesChanged) {
        b.setAttributes(r.getAttributes());
      }
      lease = b.build();
      tx.put(name, lease, LeaseEvent.Type.RENEWED);
      if (attributesChanged) {
        tx.updated(name, lease, held.getAttributes());
      }
    } else {
      lease =
          granted(
              tx,
              token,
              r.getHolder(),
              g.ttl(),
              g.sessionId(),
              g.policy(),
              r.hasAttributes() ? r.getAttributes() : null);
      tx.put(name, lease, LeaseEvent.Type.ACQUIRED);
      tx.clearLockDelay(name);
    }
    Optional<StoredSession> session = g.session();
    if (session.isPresent()) {
      // Attaching is the client's keep-alive too: its SDK counts the lease valid from the
      // Acquire's send time for one session TTL, so the session must not end before that. Read
      // again: an earlier grant of the same command may have renewed it already.
      StoredSession s = tx.session(g.sessionId()).orElse(session.get());
      session =
          Optional.of(
              s.toBuilder().setRenewedAtMicros(tx.now).setLastRenewRevision(tx.index).build());
      tx.putSession(g.sessionId(), session.get());
    }
    return AcquireResponse.newBuilder()
        .setRevision(tx.index)
        .setOutcome(Outcome.GRANTED)
        .setLease(LeaseViews.toLease(name, lease, session.orElse(null), OptionalLong.empty()))
        .setHeartbeatInterval(
            Times.duration(
                session.map(LeaseViews::heartbeatMicros).orElse(LeaseViews.heartbeatMicros(lease))))
        .build();
  }

  /** A new lease for {@code holder}, with {@code token}. */
  private LeaseRecord granted(
      Tx tx,
      long token,
      String holder,
      long ttl,
      long sessionId,
      PolicyTerms policy,
      Attributes attributes) {
    LeaseRecord.Builder b =
        LeaseRecord.newBuilder()
            .setHolder(state.index.holder(holder)) // shared with the holder's other leases
            .setToken(token)
            .setTtlMicros(ttl)
            .setAcquiredAtMicros(tx.now)
            .setRenewedAtMicros(tx.now)
            .setLastRenewRevision(tx.index)
            .setModRevision(tx.index)
            .setHeartbeatMicros(policy.heartbeatMicros().orElse(0))
            .setGraceMicros(policy.graceMicros())
            .setSession(sessionId);
    if (attributes != null) {
      b.setAttributes(attributes);
    }
    return b.build();
  }

  /**
   * Hands a lease to another holder in this one command: the lease ends (TRANSFERRED) and the new
   * holder is granted the name with this command's token, larger than every token before it. The
   * name is never free, so no racing Acquire can take it, and no lock-delay applies. The new holder
   * must pass what an Acquire of a new lease passes (ban, TTL bounds, its session, quotas).
   */
  TransferResponse transfer(Tx tx, TransferRequest r) {
    Validation.transfer(r);
    neverIssued(tx, "token", r.getToken());
    String name = r.getName();
    TransferResponse.Builder reply = TransferResponse.newBuilder().setRevision(tx.index);
    Optional<LeaseRecord> current = tx.get(name);
    if (current.isEmpty() || current.get().getToken() != r.getToken()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    LeaseRecord held = current.get();
    if (!tx.caller.isEmpty()
        && !tx.caller.equals(held.getHolder())
        && !admin.test(tx.caller, name)) {
      // Only its holder, or an admin over the name, may hand it on.
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          "name",
          "lease " + name + " is held by " + held.getHolder() + ", not by the caller " + tx.caller);
    }
    if (r.hasAcceptWithin()) {
      // Only offered: checked now as it will be at acceptance, so a hopeless offer is refused at
      // once.
      Optional<Rejection> refused = newHolderRefusal(tx, name, held, r);
      if (refused.isPresent()) {
        tx.rejected(refused.get().getReason());
        return reply.setOutcome(Outcome.REJECTED).setRejection(refused.get()).build();
      }
      long within = Times.micros(r.getAcceptWithin());
      tx.putOffer(
          name,
          StoredOffer.newBuilder()
              .setToHolder(r.getToHolder())
              .setToken(held.getToken())
              .setRevision(tx.index)
              .setWithinMicros(within)
              .setUntilMicros(tx.now + within)
              .setRequest(r.toBuilder().clearAcceptWithin())
              .build());
      return reply.setOutcome(Outcome.OFFERED).setOffer(tx.index).build();
    }
    return handOver(tx, name, held, r, reply);
  }

  /**
   * Takes up an offered transfer: applied as the Transfer would be now, if the offer still stands
   * (the same offer, on the lease it was made on) and the caller is the holder it was made to.
   */
  TransferResponse acceptTransfer(Tx tx, AcceptTransferRequest r) {
    Validation.acceptTransfer(r);
    String name = r.getName();
    TransferResponse.Builder reply = TransferResponse.newBuilder().setRevision(tx.index);
    Optional<StoredOffer> offer = tx.offer(name).filter(o -> o.getRevision() == r.getOffer());
    Optional<LeaseRecord> current = tx.get(name);
    if (offer.isEmpty()
        || current.isEmpty()
        || current.get().getToken() != offer.get().getToken()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    String to = offer.get().getToHolder();
    String claimed = r.getHolder().isEmpty() ? tx.caller : r.getHolder();
    if (!to.equals(claimed) || (!tx.caller.isEmpty() && !tx.caller.equals(to))) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          "holder",
          "the transfer of "
              + name
              + " was offered to "
              + to
              + ", not to "
              + (claimed.isEmpty() ? "an unnamed holder" : claimed));
    }
    tx.removeOffer(name);
    return handOver(tx, name, current.get(), offer.get().getRequest(), reply);
  }

  /**
   * Withdraws the offers the leader found past their deadline, each only if it is still the one
   * made at that revision.
   */
  WithdrawOffersResponse withdrawOffers(Tx tx, WithdrawOffers c) {
    int withdrawn = 0;
    int skipped = 0;
    for (WithdrawOfferItem item : c.getItemsList()) {
      Optional<StoredOffer> offer =
          item.getName().isEmpty() ? Optional.empty() : tx.offer(item.getName());
      if (offer.isPresent()
          && offer.get().getRevision() == item.getRevision()
          && !state.frozen(item.getName())) {
        tx.removeOffer(item.getName());
        withdrawn++;
      } else {
        skipped++;
      }
    }
    return WithdrawOffersResponse.newBuilder()
        .setWithdrawn(withdrawn)
        .setSkipped(skipped)
        .setRevision(tx.index)
        .build();
  }

  /** Why the new holder may not have the lease now: a ban, its session, the TTL bounds, a quota. */
  private Optional<Rejection> newHolderRefusal(
      Tx tx, String name, LeaseRecord held, TransferRequest r) {
    String to = r.getToHolder();
    PolicyTerms policy = state.policies.forName(name);
    Optional<StoredSession> session =
        r.getSession() == 0 ? Optional.empty() : tx.session(r.getSession());
    long ttl =
        session.isPresent()
            ? session.get().getTtlMicros()
            : r.hasTtl() ? Times.micros(r.getTtl()) : policy.defaultTtlMicros();
    Optional<Rejection> refused = PolicyGate.banned(state.bans, to, tx.now);
    if (refused.isEmpty() && r.getSession() != 0) {
      refused = PolicyGate.session(session, r.getSession(), to);
    }
    if (refused.isEmpty()) {
      refused = PolicyGate.ttl(policy, ttl);
    }
    if (refused.isEmpty() && !to.equals(held.getHolder())) {
      refused = PolicyGate.quotaForNew(state.index, policy, name, to);
    }
    return refused;
  }

  /**
   * The transfer itself: the lease ends (TRANSFERRED) and the new holder gets the name with this
   * command's token.
   */
  private TransferResponse handOver(
      Tx tx, String name, LeaseRecord held, TransferRequest r, TransferResponse.Builder reply) {
    String to = r.getToHolder();
    PolicyTerms policy = state.policies.forName(name);
    Optional<StoredSession> session =
        r.getSession() == 0 ? Optional.empty() : tx.session(r.getSession());
    long ttl =
        session.isPresent()
            ? session.get().getTtlMicros()
            : r.hasTtl() ? Times.micros(r.getTtl()) : policy.defaultTtlMicros();
    Optional<Rejection> refused = newHolderRefusal(tx, name, held, r);
    if (refused.isPresent()) {
      tx.rejected(refused.get().getReason());
      return reply.setOutcome(Outcome.REJECTED).setRejection(refused.get()).build();
    }
    tx.end(name, held, LeaseEvent.Type.TRANSFERRED, "to " + to);
    LeaseRecord lease =
        granted(
            tx,
            tx.token,
            to,
            ttl,
            r.getSession(),
            policy,
            r.hasAttributes() ? r.getAttributes() : null);
    tx.put(name, lease, LeaseEvent.Type.ACQUIRED);
    return reply
        .setOutcome(Outcome.TRANSFERRED)
        .setLease(LeaseViews.toLease(name, lease, session.orElse(null), OptionalLong.empty()))
        .build();
  }

  /**
   * Renews each item still held with its token, if policy allows: a renewal is checked like an
   * Acquire (ban, pattern, the lease's TTL against the bounds now in force, quotas), and takes on
   * the heartbeat and grace of the policy now in force.
   */
  RenewResponse renew(Tx tx, RenewRequest r) {
    Validation.renew(r);
    for (int i = 0; i < r.getItemsCount(); i++) {
      if (r.getItems(i).getToken() >= tx.token) {
        neverIssued(tx, "items[" + i + "].token", r.getItems(i).getToken());
      }
    }
    for (int i = 0; i < r.getItemsCount(); i++) {
      ownLease(tx, "items[" + i + "]", r.getItems(i).getName(), r.getItems(i).getToken());
    }
    RenewResponse.Builder reply = RenewResponse.newBuilder().setRevision(tx.index);
    long shortestHeartbeat = Long.MAX_VALUE;
    // Leases renewed together mostly share a TTL and heartbeat: build their Durations once.
    long ttlMicros = -1;
    Duration ttl = null;
    long heartbeatMicros = -1;
    Duration heartbeat = null;
    for (RenewItem item : r.getItemsList()) {
      RenewResult.Builder result =
          RenewResult.newBuilder().setName(item.getName()).setToken(item.getToken());
      Optional<LeaseRecord> current = tx.get(item.getName());
      if (current.isPresent() && current.get().getToken() == item.getToken()) {
        PolicyTerms policy = state.policies.forName(item.getName());
        Optional<Rejection> refused =
            PolicyGate.renewal(state, policy, item.getName(), current.get(), tx.now);
        if (refused.isPresent()) {
          tx.rejected(refused.get().getReason());
          reply.addResults(result.setOutcome(Outcome.REJECTED).setRejection(refused.get()));
          continue;
        }
        LeaseRecord lease = renewed(tx, current.get(), policy).build();
        tx.put(item.getName(), lease, LeaseEvent.Type.RENEWED);
        if (lease.getTtlMicros() != ttlMicros) {
          ttlMicros = lease.getTtlMicros();
          ttl = Times.duration(ttlMicros);
        }
        long hb = LeaseViews.heartbeatMicros(lease);
        if (hb != heartbeatMicros) {
          heartbeatMicros = hb;
          heartbeat = Times.duration(hb);
        }
        result
            .setOutcome(Outcome.RENEWED)
            .setTtl(ttl)
            .setHeartbeatInterval(heartbeat)
            .setExpiresAt(Times.timestamp(LeaseViews.expiresAtMicros(lease)))
            .setDeadline(Times.timestamp(LeaseViews.deadlineMicros(lease)));
        shortestHeartbeat = Math.min(shortestHeartbeat, hb);
      } else {
        result.setOutcome(Outcome.NOT_HELD);
        if (current.isEmpty() && state.counters.expiredRecently(item.getName(), item.getToken())) {
          tx.lateHeartbeat();
        }
      }
      reply.addResults(result);
    }
    if (shortestHeartbeat != Long.MAX_VALUE) {
      reply.setHeartbeatInterval(Times.duration(shortestHeartbeat));
    }
    return reply.build();
  }

  ReleaseResponse release(Tx tx, ReleaseRequest r) {
    Validation.release(r);
    neverIssued(tx, "token", r.getToken());
    ownLease(tx, "name", r.getName(), r.getToken());
    ReleaseResponse.Builder reply = ReleaseResponse.newBuilder().setRevision(tx.index);
    Optional<LeaseRecord> current = tx.get(r.getName());
    if (current.isEmpty() || current.get().getToken() != r.getToken()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    tx.end(r.getName(), current.get(), LeaseEvent.Type.RELEASED, "");
    return reply.setOutcome(Outcome.RELEASED).build();
  }

  UpdateResponse update(Tx tx, UpdateRequest r) {
    Validation.update(r);
    neverIssued(tx, "token", r.getToken());
    ownLease(tx, "name", r.getName(), r.getToken());
    UpdateResponse.Builder reply = UpdateResponse.newBuilder().setRevision(tx.index);
    Optional<LeaseRecord> current = tx.get(r.getName());
    if (current.isEmpty() || current.get().getToken() != r.getToken()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    Attributes attributes = merge(current.get().getAttributes(), r);
    LeaseRecord lease =
        current.get().toBuilder().setAttributes(attributes).setModRevision(tx.index).build();
    tx.update(r.getName(), lease, current.get().getAttributes());
    return reply
        .setOutcome(Outcome.UPDATED)
        .setLease(LeaseViews.toLease(r.getName(), lease, OptionalLong.empty()))
        .build();
  }

  /**
   * Ends leases the leader's ticker found past their deadline, but only those still at the token
   * and renewal the ticker saw: a renewal that raced the proposal wins, and a deposed leader's late
   * proposal changes nothing.
   */
  ExpireResponse expire(Tx tx, ExpireCommand c) {
    int expired = 0;
    int skipped = 0;
    for (ExpireItem item : c.getItemsList()) {
      Optional<LeaseRecord> current =
          item.getName().isEmpty() ? Optional.empty() : tx.get(item.getName());
      // A lease attached to a session ends with the session, never on a deadline of its own.
      if (current.isPresent()
          && current.get().getToken() == item.getToken()
          && current.get().getSession() == 0
          && current.get().getLastRenewRevision() <= item.getLastRenewRevision()
          && !state.frozen(item.getName())) {
        tx.end(item.getName(), current.get(), LeaseEvent.Type.EXPIRED, "");
        expired++;
      } else {
        skipped++;
      }
    }
    return ExpireResponse.newBuilder()
        .setExpired(expired)
        .setSkipped(skipped)
        .setRevision(tx.index)
        .build();
  }

  /** The attributes after an update: all replaced, or only the fields its mask names. */
  private static Attributes merge(Attributes current, UpdateRequest r) {
    if (r.getUpdateMask().getPathsCount() == 0) {
      return r.getAttributes();
    }
    Attributes.Builder merged = current.toBuilder();
    for (String path : r.getUpdateMask().getPathsList()) {
      switch (path) {
        case "address" -> merged.setAddress(r.getAttributes().getAddress());
        case "status" -> merged.setStatus(r.getAttributes().getStatus());
        case "metadata" ->
            merged.clearMetadata().putAllMetadata(r.getAttributes().getMetadataMap());
        default -> throw new InvalidArgumentException("update_mask", "unknown path " + path);
      }
    }
    return merged.build();
  }

  private static LeaseRecord.Builder renewed(Tx tx, LeaseRecord lease, PolicyTerms policy) {
    return lease.toBuilder()
        .setRenewedAtMicros(tx.now)
        .setLastRenewRevision(tx.index)
        .setRenewCount(lease.getRenewCount() + 1)
        .setModRevision(tx.index)
        .setHeartbeatMicros(policy.heartbeatMicros().orElse(0))
        .setGraceMicros(policy.graceMicros());
  }

  /**
   * With a caller (authentication on), a lease command changes only the caller's own leases: the
   * token alone, which anyone who reads or watches the name sees, does not suffice.
   */
  private static void ownLease(Tx tx, String field, String name, long token) {
    if (tx.caller.isEmpty()) {
      return;
    }
    Optional<LeaseRecord> current = tx.get(name);
    if (current.isPresent()
        && current.get().getToken() == token
        && !current.get().getHolder().equals(tx.caller)) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          field,
          "lease "
              + name
              + " is held by "
              + current.get().getHolder()
              + ", not by the caller "
              + tx.caller);
    }
  }

  /**
   * A token at or above the one this command would grant cannot have been granted yet: bad input,
   * not a stale lease.
   */
  private static void neverIssued(Tx tx, String field, long token) {
    if (token >= tx.token) {
      throw new InvalidArgumentException(
          field, "token " + token + " was never issued (the next token is " + tx.token + ")");
    }
  }
}
