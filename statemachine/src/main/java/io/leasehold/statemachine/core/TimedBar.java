package io.leasehold.statemachine.core;

/**
 * A bar the leader must lift by proposing a command: a name's lock-delay, a holder's timed ban, or
 * a transfer offered on a name and not yet accepted (lifted: withdrawn). Applying an entry reports
 * the bars it set or removed ({@link ApplyResult#bars}), and a new leader reads the ones in the
 * state ({@link LeaseCore#forEachTimedBar}); the leader decides on its monotonic clock when each is
 * due and proposes LiftLockDelays or LiftBans. The state machine never lifts a bar by itself.
 *
 * @param key the name (lock-delay, offer) or the holder (ban)
 * @param revision the revision that set the bar: the ending (lock-delay) or the Ban; the lift
 *     command carries it, and is applied only if the bar is still that one
 * @param holdMicros how long after now the bar is due: when set, the lock-delay or the ban's length
 *     (until minus the stamped time, at least 0); read from the state by a new leader, the full
 *     lock-delay, or what remains of the ban by the latest stamped time
 * @param removed the bar is gone (lifted, the name granted again, the holder unbanned or banned
 *     without end); {@code holdMicros} then means nothing
 */
public record TimedBar(Kind kind, String key, long revision, long holdMicros, boolean removed) {
  public enum Kind {
    LOCK_DELAY,
    BAN,
    OFFER
  }

  static TimedBar set(Kind kind, String key, long revision, long holdMicros) {
    return new TimedBar(kind, key, revision, Math.max(0, holdMicros), false);
  }

  static TimedBar removed(Kind kind, String key) {
    return new TimedBar(kind, key, 0, 0, true);
  }
}
