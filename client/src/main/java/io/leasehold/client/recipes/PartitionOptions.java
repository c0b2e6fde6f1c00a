package io.leasehold.client.recipes;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link PartitionMember} joins its group.
 *
 * @param namespace the lease namespace of the group's names ({@code <namespace>/<group>/...})
 * @param address where this member serves, carried by its partition leases for routing
 * @param reconcileInterval how often the member reconciles even without a change (to retry what
 *     failed)
 * @param leaveTimeout how long {@link PartitionMember#leave()} tries to hand partitions over before
 *     releasing them
 */
public record PartitionOptions(
    String namespace, Optional<String> address, Duration reconcileInterval, Duration leaveTimeout) {
  private static final PartitionOptions DEFAULTS =
      new PartitionOptions(
          "partitions", Optional.empty(), Duration.ofSeconds(1), Duration.ofSeconds(15));

  /**
   * Checks the components.
   *
   * @param namespace the lease namespace of the group's names, one segment
   * @param address where this member serves, if anywhere
   * @param reconcileInterval how often the member reconciles without a change, positive
   * @param leaveTimeout how long leaving tries to hand partitions over, positive
   */
  public PartitionOptions {
    Objects.requireNonNull(namespace, "namespace");
    if (namespace.isEmpty() || namespace.contains("/")) {
      throw new IllegalArgumentException(
          "namespace: must be one non-empty segment, got \"" + namespace + "\"");
    }
    address = Objects.requireNonNull(address, "address").filter(a -> !a.isEmpty());
    positive("reconcileInterval", reconcileInterval);
    positive("leaveTimeout", leaveTimeout);
  }

  /**
   * Namespace {@code partitions}, no address, reconcile every second, 15 s to leave.
   *
   * @return the default options
   */
  public static PartitionOptions defaults() {
    return DEFAULTS;
  }

  /**
   * These options in another namespace.
   *
   * @param namespace the lease namespace of the group's names
   * @return the new options
   */
  public PartitionOptions withNamespace(String namespace) {
    return new PartitionOptions(namespace, address, reconcileInterval, leaveTimeout);
  }

  /**
   * These options with the address this member serves at.
   *
   * @param address where this member serves ({@code host:port} or a URL)
   * @return the new options
   */
  public PartitionOptions withAddress(String address) {
    return new PartitionOptions(
        namespace,
        Optional.of(Objects.requireNonNull(address, "address")),
        reconcileInterval,
        leaveTimeout);
  }

  /**
   * These options with another reconcile interval.
   *
   * @param interval how often to reconcile without a change
   * @return the new options
   */
  public PartitionOptions withReconcileInterval(Duration interval) {
    return new PartitionOptions(namespace, address, interval, leaveTimeout);
  }

  /**
   * These options with another leave timeout.
   *
   * @param timeout how long leaving tries to hand partitions over
   * @return the new options
   */
  public PartitionOptions withLeaveTimeout(Duration timeout) {
    return new PartitionOptions(namespace, address, reconcileInterval, timeout);
  }

  private static void positive(String field, Duration d) {
    Objects.requireNonNull(d, field);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(field + ": must be positive, got " + d);
    }
  }
}
