package io.leasehold.jepsen.history;

import java.util.Objects;

/** One append to the in-test unfenced log: what a resource without fencing would have accepted. */
public record UnfencedWrite(String resource, String client, long token, long nanos) {
  public UnfencedWrite {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(client, "client");
  }
}
