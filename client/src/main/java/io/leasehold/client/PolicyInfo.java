package io.leasehold.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A namespace's policy ({@link LeaseholdAdmin#policy}, {@link LeaseholdAdmin#policies}). A {@link
 * Policy}'s fields are optional: an unset field takes the built-in value.
 *
 * @param namespace the namespace ({@code ""} for the default policy)
 * @param own the namespace's own policy, as set; absent when it has none
 * @param effective what is in force there, every field filled in (absent in listings)
 * @param revision the revision that set its own policy (0 when it has none)
 * @param updatedAt when its own policy was set (leader-stamped), if it has one
 */
public record PolicyInfo(
    String namespace,
    Optional<Policy> own,
    Optional<Policy> effective,
    long revision,
    Optional<Instant> updatedAt) {
  /**
   * Checks that every field is given.
   *
   * @param namespace the namespace ({@code ""} for the default policy)
   * @param own the namespace's own policy, as set; absent when it has none
   * @param effective what is in force there, every field filled in (absent in listings)
   * @param revision the revision that set its own policy (0 when it has none)
   * @param updatedAt when its own policy was set (leader-stamped), if it has one
   */
  public PolicyInfo {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(own, "own");
    Objects.requireNonNull(effective, "effective");
    Objects.requireNonNull(updatedAt, "updatedAt");
  }

  /**
   * Whether the namespace has no policy of its own (the default or built-in policy applies).
   *
   * @return whether the namespace has no policy of its own
   */
  public boolean inherited() {
    return own.isEmpty();
  }
}
