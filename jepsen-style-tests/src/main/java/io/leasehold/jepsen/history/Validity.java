package io.leasehold.jepsen.history;

import java.util.Objects;

/**
 * A client-side validity interval: from the moment the client learned it holds {@code name} to the
 * moment it stopped believing so (the SDK's local deadline, or the release, whichever came first),
 * both on the test JVM's monotonic clock, which every client shares.
 */
public record Validity(String client, String name, long token, long fromNanos, long untilNanos) {
  public Validity {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(name, "name");
  }

  public boolean overlaps(Validity o) {
    return fromNanos < o.untilNanos && o.fromNanos < untilNanos;
  }
}
