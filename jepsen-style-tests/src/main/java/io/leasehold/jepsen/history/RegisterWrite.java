package io.leasehold.jepsen.history;

import java.util.Objects;

/**
 * One write to the in-test fenced register of {@code resource}, in the register's own order ({@code
 * seq}): accepted, or refused because a higher token had been seen.
 */
public record RegisterWrite(
    long seq, String resource, String client, long token, boolean accepted, long nanos) {
  public RegisterWrite {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(client, "client");
  }
}
