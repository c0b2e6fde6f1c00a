package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.BanRecord;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.Rejection;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.proto.v1.StoredSession;
import java.util.Optional;

/**
 * The policy checks of every Acquire and every renewal. A refusal is a {@link Rejection} in the
 * reply, never an exception. With no policy, bans or delays set, each check is a field test.
 */
final class PolicyGate {
  private PolicyGate() {}

  static Optional<Rejection> banned(Bans bans, String holder, long now) {
    Optional<BanRecord> ban = bans.get(holder);
    if (ban.isEmpty()) {
      return Optional.empty();
    }
    BanRecord b = ban.get();
    Rejection.Builder r =
        Rejection.newBuilder()
            .setReason(RejectReason.BANNED)
            .setMessage(
                "holder \""
                    + holder
                    + "\" is banned"
                    + (b.getReason().isEmpty() ? "" : ": " + b.getReason()));
    if (b.getUntilMicros() != 0) {
      // An estimate from stamped times; the ban holds until the leader lifts it, even past its end.
      long remaining = Math.max(0, b.getUntilMicros() - now);
      r.setRetryAfter(Times.duration(remaining));
      if (remaining == 0) {
        r.setMessage(
            r.getMessage() + " (its end has passed; the ban ends when the leader lifts it)");
      }
    }
    return Optional.of(r.build());
  }

  static Optional<Rejection> pattern(PolicyTerms p, String name) {
    if (p.pattern().isEmpty()) {
      return Optional.empty();
    }
    int slash = name.indexOf('/');
    if (p.allows(name.substring(slash + 1))) {
      return Optional.empty();
    }
    return Optional.of(
        Rejection.newBuilder()
            .setReason(RejectReason.NAME_NOT_ALLOWED)
            .setMessage(
                "the name after \""
                    + name.substring(0, slash + 1)
                    + "\" must match the namespace's pattern "
                    + p.patternText())
            .setNamePattern(p.patternText())
            .build());
  }

  static Optional<Rejection> ttl(PolicyTerms p, long ttlMicros) {
    if (ttlMicros >= p.minTtlMicros() && ttlMicros <= p.maxTtlMicros()) {
      return Optional.empty();
    }
    return Optional.of(
        Rejection.newBuilder()
            .setReason(RejectReason.TTL_OUT_OF_RANGE)
            .setMessage(
                "ttl must be between "
                    + PolicyTerms.show(Times.duration(p.minTtlMicros()))
                    + " and "
                    + PolicyTerms.show(Times.duration(p.maxTtlMicros()))
                    + ", got "
                    + PolicyTerms.show(Times.duration(ttlMicros)))
            .setMinTtl(Times.duration(p.minTtlMicros()))
            .setMaxTtl(Times.duration(p.maxTtlMicros()))
            .build());
  }

  /**
   * A barred name is refused until the leader lifts its lock-delay. What remains is only an
   * estimate from stamped times (floored at 0): the state machine does not decide that time passed.
   */
  static Optional<Rejection> lockDelay(LockDelays delays, String name, long now) {
    Optional<StoredLockDelay> bar = delays.get(name);
    if (bar.isEmpty()) {
      return Optional.empty();
    }
    long remaining = Math.max(0, bar.get().getUntilMicros() - now);
    String message =
        remaining > 0
            ? "the last lease on "
                + name
                + " expired or was revoked; it cannot be acquired for about another "
                + DurationText.approxMicros(remaining)
                + " (the lock-delay ends when the leader lifts it)"
            : "the last lease on "
                + name
                + " expired or was revoked; its lock-delay is not lifted yet"
                + " (the lock-delay ends when the leader lifts it)";
    return Optional.of(
        Rejection.newBuilder()
            .setReason(RejectReason.LOCK_DELAY)
            .setMessage(message)
            .setRetryAfter(Times.duration(remaining))
            .build());
  }

  /** A new lease must fit under both quotas; both count the leases in the name's namespace. */
  static Optional<Rejection> quotaForNew(
      LeaseIndex index, PolicyTerms p, String name, String holder) {
    return quotaForNew(index, p, name, holder, 0);
  }

  /**
   * As {@link #quotaForNew(LeaseIndex, PolicyTerms, String, String)}, counting {@code pending} new
   * leases of the holder in the name's namespace that the same command granted before this one.
   */
  static Optional<Rejection> quotaForNew(
      LeaseIndex index, PolicyTerms p, String name, String holder, int pending) {
    if (p.maxLeasesPerHolder().isPresent()
        && index.heldBy(holder, LeaseIndex.namespace(name)) + pending
            >= p.maxLeasesPerHolder().getAsLong()) {
      return Optional.of(
          quota(
              RejectReason.HOLDER_QUOTA,
              "holder \"" + holder + "\" already holds ",
              p.maxLeasesPerHolder().getAsLong(),
              " leases in namespace \"" + LeaseIndex.namespace(name) + "\", its quota"));
    }
    if (p.maxLeasesPerNamespace().isPresent()
        && index.inNamespace(LeaseIndex.namespace(name)) + pending
            >= p.maxLeasesPerNamespace().getAsLong()) {
      return Optional.of(
          quota(
              RejectReason.NAMESPACE_QUOTA,
              "namespace \"" + LeaseIndex.namespace(name) + "\" already has ",
              p.maxLeasesPerNamespace().getAsLong(),
              " leases, its quota"));
    }
    return Optional.empty();
  }

  /**
   * A held lease may be renewed while it is within the quotas. Holding more than a quota is
   * possible only after the quota was lowered; then the oldest grants keep renewing and the newest
   * ones beyond the quota are refused (and expire), so the count shrinks to the quota without
   * disturbing the leases that were there first.
   */
  static Optional<Rejection> quotaForHeld(
      LeaseIndex index, PolicyTerms p, String name, LeaseRecord lease) {
    if (p.maxLeasesPerHolder().isPresent()
        && !index.holderWithin(
            lease.getHolder(),
            LeaseIndex.namespace(name),
            lease.getToken(),
            p.maxLeasesPerHolder().getAsLong())) {
      return Optional.of(
          quota(
              RejectReason.HOLDER_QUOTA,
              "holder \"" + lease.getHolder() + "\" holds more than ",
              p.maxLeasesPerHolder().getAsLong(),
              " leases in namespace \""
                  + LeaseIndex.namespace(name)
                  + "\" (its quota was lowered); its newest ones are not renewed"));
    }
    if (p.maxLeasesPerNamespace().isPresent()
        && !index.namespaceWithin(
            LeaseIndex.namespace(name), lease.getToken(), p.maxLeasesPerNamespace().getAsLong())) {
      return Optional.of(
          quota(
              RejectReason.NAMESPACE_QUOTA,
              "namespace \"" + LeaseIndex.namespace(name) + "\" has more than ",
              p.maxLeasesPerNamespace().getAsLong(),
              " leases (its quota was lowered); its newest ones are not renewed"));
    }
    return Optional.empty();
  }

  /**
   * Everything a renewal must pass: the holder's ban, the name pattern, the lease's TTL against the
   * bounds, the quotas.
   */
  static Optional<Rejection> renewal(
      CoreState s, PolicyTerms p, String name, LeaseRecord lease, long now) {
    Optional<Rejection> r = banned(s.bans, lease.getHolder(), now);
    if (r.isEmpty()) {
      r = pattern(p, name);
    }
    if (r.isEmpty()) {
      r = ttl(p, lease.getTtlMicros());
    }
    if (r.isEmpty()) {
      r = quotaForHeld(s.index, p, name, lease);
    }
    return r;
  }

  /** A lease may live with a session only while the session is live and belongs to its holder. */
  static Optional<Rejection> session(Optional<StoredSession> session, long id, String holder) {
    if (session.isPresent() && session.get().getHolder().equals(holder)) {
      return Optional.empty();
    }
    return Optional.of(
        Rejection.newBuilder()
            .setReason(RejectReason.NO_SESSION)
            .setMessage(
                session.isEmpty()
                    ? "session "
                        + id
                        + " does not exist (it expired or was closed); create a new session"
                    : "session "
                        + id
                        + " belongs to \""
                        + session.get().getHolder()
                        + "\", not to \""
                        + holder
                        + "\"")
            .build());
  }

  private static Rejection quota(RejectReason reason, String before, long limit, String after) {
    return Rejection.newBuilder()
        .setReason(reason)
        .setMessage(before + limit + after)
        .setLimit(limit)
        .build();
  }
}
