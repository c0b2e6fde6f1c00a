package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LeaseRecord;

/**
 * A change produced by applying one log entry. {@code lease} is the lease after the change, or
 * as it was when it ended; {@code timeMicros} is the leader-stamped time of the entry.
 */
public record LeaseEvent(Type type, long revision, String name, LeaseRecord lease, long timeMicros) {
  public enum Type {
    ACQUIRED,
    /** Not shown to watchers unless asked for: renewals would flood them. */
    RENEWED,
    UPDATED,
    RELEASED,
    EXPIRED;

    public boolean endsLease() {
      return this == RELEASED || this == EXPIRED;
    }
  }
}
