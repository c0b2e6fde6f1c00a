package io.leasehold.client;

import java.time.Instant;
import java.util.Map;
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
 * @param globalVersion with lease groups, the version of the policies, bans and roles the meta
 *     group holds on the node that answered {@link LeaseholdAdmin#policy}; 0 otherwise
 * @param groupCopies with lease groups, the version of that state each lease group the policy
 *     governs holds on that node, by group number: the namespace's group (none while it lives in
 *     the meta group), every lease group for the default policy; empty otherwise
 */
public record PolicyInfo(
    String namespace,
    Optional<Policy> own,
    Optional<Policy> effective,
    long revision,
    Optional<Instant> updatedAt,
    long globalVersion,
    Map<Integer, Long> groupCopies) {
  /**
   * Checks that every field is given.
   *
   * @param namespace the namespace ({@code ""} for the default policy)
   * @param own the namespace's own policy, as set; absent when it has none
   * @param effective what is in force there, every field filled in (absent in listings)
   * @param revision the revision that set its own policy (0 when it has none)
   * @param updatedAt when its own policy was set (leader-stamped), if it has one
   * @param globalVersion the meta group's version of the global state, 0 without lease groups
   * @param groupCopies each governing lease group's copy of it, by number
   */
  public PolicyInfo {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(own, "own");
    Objects.requireNonNull(effective, "effective");
    Objects.requireNonNull(updatedAt, "updatedAt");
    groupCopies = Map.copyOf(Objects.requireNonNull(groupCopies, "groupCopies"));
  }

  /**
   * A policy as a cluster without lease groups answers it.
   *
   * @param namespace the namespace ({@code ""} for the default policy)
   * @param own the namespace's own policy, as set; absent when it has none
   * @param effective what is in force there, every field filled in (absent in listings)
   * @param revision the revision that set its own policy (0 when it has none)
   * @param updatedAt when its own policy was set (leader-stamped), if it has one
   */
  public PolicyInfo(
      String namespace,
      Optional<Policy> own,
      Optional<Policy> effective,
      long revision,
      Optional<Instant> updatedAt) {
    this(namespace, own, effective, revision, updatedAt, 0, Map.of());
  }

  /**
   * Whether every lease group the policy governs holds the meta group's global state as the
   * answering node saw it: otherwise a group there still enforces an older policy, ban or role
   * (true without lease groups).
   *
   * @return whether no governing group's copy is behind
   */
  public boolean copiesCurrent() {
    return groupCopies.values().stream().allMatch(v -> v >= globalVersion);
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
