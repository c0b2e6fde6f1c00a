package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CloseSessionResponse;
import io.leasehold.proto.v1.CreateSessionPart;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.CreateSessionResponse;
import io.leasehold.proto.v1.EndSessionParts;
import io.leasehold.proto.v1.ExpireCommand;
import io.leasehold.proto.v1.ExpireResponse;
import io.leasehold.proto.v1.ExpireSessionItem;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResponse;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Rejection;
import io.leasehold.proto.v1.SessionPartsResponse;
import io.leasehold.proto.v1.StoredSession;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * The apply of the session commands (CreateSession, KeepAlive, CloseSession, and the sessions of an
 * Expire). A session is kept alive as one item whatever number of leases are attached to it; its
 * end ends them all in the same entry. Sessions belong to no namespace: the default policy bounds
 * their TTL and suggests their heartbeat, and a lease attached to one is checked against its own
 * namespace's policy when it is acquired.
 */
final class SessionCommands {
  private final CoreState state;
  private final Supplier<AccessView> access;

  SessionCommands(CoreState state, Supplier<AccessView> access) {
    this.state = state;
    this.access = access;
  }

  CreateSessionResponse create(Tx tx, CreateSessionRequest r) {
    Validation.createSession(r);
    if (!tx.caller.isEmpty() && !tx.caller.equals(r.getHolder())) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          "holder",
          "the holder must be the caller's identity " + tx.caller + ", not " + r.getHolder());
    }
    PolicyTerms policy = state.policies.defaults();
    long ttl = r.hasTtl() ? Times.micros(r.getTtl()) : policy.defaultTtlMicros();
    CreateSessionResponse.Builder reply = CreateSessionResponse.newBuilder().setRevision(tx.index);
    Optional<Rejection> refused =
        PolicyGate.banned(state.bans, r.getHolder(), tx.now).or(() -> PolicyGate.ttl(policy, ttl));
    if (refused.isPresent()) {
      tx.rejected(refused.get().getReason());
      return reply.setOutcome(Outcome.REJECTED).setRejection(refused.get()).build();
    }
    StoredSession session =
        StoredSession.newBuilder()
            .setHolder(state.index.holder(r.getHolder()))
            .setTtlMicros(ttl)
            .setCreatedAtMicros(tx.now)
            .setRenewedAtMicros(tx.now)
            .setLastRenewRevision(tx.index)
            .setHeartbeatMicros(policy.heartbeatMicros().orElse(0))
            .build();
    long id = tx.token; // from the log position, like a token: unique and increasing
    tx.putSession(id, session);
    return reply
        .setOutcome(Outcome.GRANTED)
        .setSession(LeaseViews.toSession(id, session, 0, OptionalLong.empty()))
        .setHeartbeatInterval(Times.duration(LeaseViews.heartbeatMicros(session)))
        .build();
  }

  /**
   * Renews each live session, if its holder is not banned and its TTL is still within the default
   * policy's bounds: one write per session, none per attached lease.
   */
  KeepAliveResponse keepAlive(Tx tx, KeepAliveRequest r) {
    Validation.keepAlive(r);
    for (int i = 0; i < r.getSessionsCount(); i++) {
      ownSession(tx, "sessions[" + i + "]", r.getSessions(i));
    }
    PolicyTerms policy = state.policies.defaults();
    KeepAliveResponse.Builder reply = KeepAliveResponse.newBuilder().setRevision(tx.index);
    long shortestHeartbeat = Long.MAX_VALUE;
    for (long id : r.getSessionsList()) {
      KeepAliveResult.Builder result = KeepAliveResult.newBuilder().setSession(id);
      Optional<StoredSession> current = tx.session(id);
      if (current.isEmpty()) {
        reply.addResults(result.setOutcome(Outcome.NOT_HELD));
        continue;
      }
      StoredSession s = current.get();
      Optional<Rejection> refused =
          PolicyGate.banned(state.bans, s.getHolder(), tx.now)
              .or(() -> PolicyGate.ttl(policy, s.getTtlMicros()));
      if (refused.isPresent()) {
        tx.rejected(refused.get().getReason());
        reply.addResults(result.setOutcome(Outcome.REJECTED).setRejection(refused.get()));
        continue;
      }
      StoredSession renewed =
          s.toBuilder()
              .setRenewedAtMicros(tx.now)
              .setLastRenewRevision(tx.index)
              .setRenewCount(s.getRenewCount() + 1)
              .setHeartbeatMicros(policy.heartbeatMicros().orElse(0))
              .build();
      tx.putSession(id, renewed);
      shortestHeartbeat = Math.min(shortestHeartbeat, LeaseViews.heartbeatMicros(renewed));
      reply.addResults(
          result
              .setOutcome(Outcome.RENEWED)
              .setTtl(Times.duration(renewed.getTtlMicros()))
              .setExpiresAt(Times.timestamp(LeaseViews.expiresAtMicros(renewed)))
              .setLeases(state.sessions.attachedTo(id))
              .setLeasesEnded(renewed.getLeasesEnded()));
    }
    if (shortestHeartbeat != Long.MAX_VALUE) {
      reply.setHeartbeatInterval(Times.duration(shortestHeartbeat));
    }
    return reply.build();
  }

  /** Ends a session and its leases (reason SESSION_CLOSED: no lock-delay, as for a release). */
  CloseSessionResponse close(Tx tx, CloseSessionRequest r) {
    Validation.closeSession(r);
    CloseSessionResponse.Builder reply = CloseSessionResponse.newBuilder().setRevision(tx.index);
    Optional<StoredSession> current = tx.session(r.getSession());
    if (current.isEmpty()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    if (!tx.caller.isEmpty()
        && !tx.caller.equals(current.get().getHolder())
        && !ApplyAuthorization.adminOverEverything(access.get(), tx.caller)) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          "session",
          "session "
              + r.getSession()
              + " belongs to "
              + current.get().getHolder()
              + "; only it or an admin over every name may close it");
    }
    int ended = tx.endSession(r.getSession(), LeaseEvent.Type.SESSION_CLOSED);
    return reply.setOutcome(Outcome.CLOSED).setLeasesEnded(ended).build();
  }

  /**
   * A lease group's part of a meta-group session (docs/design/multi-raft.md, "Sessions"), made from
   * the session as the meta group holds it; a part that exists is left as it is. A caller, if the
   * command names one, must be the holder.
   */
  SessionPartsResponse createPart(Tx tx, CreateSessionPart c) {
    if (c.getSession() <= 0) {
      throw new InvalidArgumentException(
          "session", "must name a session by its id, above 0; got " + c.getSession());
    }
    if (c.getHolder().isEmpty()) {
      throw new InvalidArgumentException("holder", "must name the session's holder");
    }
    if (c.getTtlMicros() <= 0) {
      throw new InvalidArgumentException("ttl_micros", "must be above 0; got " + c.getTtlMicros());
    }
    if (!tx.caller.isEmpty() && !tx.caller.equals(c.getHolder())) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          "holder",
          "session " + c.getSession() + " belongs to " + c.getHolder() + ", not to " + tx.caller);
    }
    SessionPartsResponse.Builder reply = SessionPartsResponse.newBuilder().setRevision(tx.index);
    if (tx.session(c.getSession()).isPresent()) {
      return reply.build();
    }
    tx.putSession(
        c.getSession(),
        StoredSession.newBuilder()
            .setHolder(state.index.holder(c.getHolder()))
            .setTtlMicros(c.getTtlMicros())
            .setCreatedAtMicros(tx.now)
            .setRenewedAtMicros(tx.now)
            .setLastRenewRevision(tx.index)
            .setHeartbeatMicros(c.getHeartbeatMicros())
            .setPart(true)
            .build());
    return reply.setCreated(1).build();
  }

  /** Ends session parts, and their leases, whose sessions ended in the meta group. */
  SessionPartsResponse endParts(Tx tx, EndSessionParts c) {
    LeaseEvent.Type type =
        c.getClosed() ? LeaseEvent.Type.SESSION_CLOSED : LeaseEvent.Type.SESSION_EXPIRED;
    int ended = 0;
    long leasesEnded = 0;
    for (long id : c.getSessionsList()) {
      Optional<StoredSession> part = id <= 0 ? Optional.empty() : tx.session(id);
      if (part.isPresent() && part.get().getPart()) {
        leasesEnded += tx.endSession(id, type);
        ended++;
      }
    }
    return SessionPartsResponse.newBuilder()
        .setEnded(ended)
        .setLeasesEnded(leasesEnded)
        .setRevision(tx.index)
        .build();
  }

  /**
   * Ends the sessions the leader's ticker found past their deadline, but only those not kept alive
   * since the revision it saw: a racing keep-alive wins, as a racing renewal does for a lease.
   */
  ExpireResponse expire(Tx tx, ExpireCommand c, ExpireResponse leases) {
    if (c.getSessionsCount() == 0) {
      return leases;
    }
    int expired = 0;
    int skipped = 0;
    long ended = 0;
    for (ExpireSessionItem item : c.getSessionsList()) {
      Optional<StoredSession> current =
          item.getSession() <= 0 ? Optional.empty() : tx.session(item.getSession());
      // A lease group's part ends with its session in the meta group (EndSessionParts), never here.
      if (current.isPresent()
          && !current.get().getPart()
          && current.get().getLastRenewRevision() <= item.getLastRenewRevision()) {
        ended += tx.endSession(item.getSession(), LeaseEvent.Type.SESSION_EXPIRED);
        expired++;
      } else {
        skipped++;
      }
    }
    return leases.toBuilder()
        .setSessionsExpired(expired)
        .setSessionsSkipped(skipped)
        .setSessionLeasesEnded(ended)
        .build();
  }

  /** With a caller (authentication on), only the holder keeps its session alive. */
  private static void ownSession(Tx tx, String field, long id) {
    if (tx.caller.isEmpty()) {
      return;
    }
    Optional<StoredSession> s = tx.session(id);
    if (s.isPresent() && !s.get().getHolder().equals(tx.caller)) {
      throw new RefusedException(
          RefusedException.Kind.PERMISSION_DENIED,
          field,
          "session "
              + id
              + " belongs to "
              + s.get().getHolder()
              + ", not to the caller "
              + tx.caller);
    }
  }
}
