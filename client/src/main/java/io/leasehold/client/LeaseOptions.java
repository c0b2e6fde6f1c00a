package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to acquire a lease: its TTL, its attributes, and how long to wait for the name if another
 * holder has it. Immutable; start from {@link #defaults()}.
 *
 * <pre>{@code
 * LeaseOptions.defaults().withTtl(Duration.ofSeconds(15)).withAddress("10.0.0.7:8443").withWait(Duration.ofMinutes(1))
 * }</pre>
 *
 * @param ttl the lease's time to live; absent: the cluster's default TTL
 * @param attributes address, metadata and status to store with the lease
 * @param waitUpTo how long {@link LeaseholdClient#acquire(String, LeaseOptions)} waits for the name
 *     to become free; absent: as long as it takes (cancel the future to stop)
 */
public record LeaseOptions(
    Optional<Duration> ttl, LeaseAttributes attributes, Optional<Duration> waitUpTo) {
  private static final LeaseOptions DEFAULTS =
      new LeaseOptions(Optional.empty(), LeaseAttributes.NONE, Optional.empty());

  /**
   * Checks the fields.
   *
   * @param ttl the lease's time to live; absent: the cluster's default TTL
   * @param attributes address, metadata and status to store with the lease
   * @param waitUpTo how long {@link LeaseholdClient#acquire(String, LeaseOptions)} waits for the
   *     name to become free; absent: as long as it takes (cancel the future to stop)
   */
  public LeaseOptions {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(attributes, "attributes");
    Objects.requireNonNull(waitUpTo, "waitUpTo");
    waitUpTo.ifPresent(
        w -> {
          if (w.isNegative()) {
            throw new IllegalArgumentException("waitUpTo: must not be negative, got " + w);
          }
        });
  }

  /**
   * The cluster's default TTL, no attributes, wait as long as it takes.
   *
   * @return the options
   */
  public static LeaseOptions defaults() {
    return DEFAULTS;
  }

  /**
   * These options with a TTL (the cluster checks it against its bounds, 2 s to 24 h by default).
   *
   * @param ttl the lease's time to live
   * @return the options with the change
   */
  public LeaseOptions withTtl(Duration ttl) {
    return new LeaseOptions(Optional.of(Objects.requireNonNull(ttl, "ttl")), attributes, waitUpTo);
  }

  /**
   * These options, granting the lease {@code attributes}.
   *
   * @param attributes address, metadata and status to store with the lease, replacing any set
   *     before
   * @return the options with the change
   */
  public LeaseOptions withAttributes(LeaseAttributes attributes) {
    return new LeaseOptions(ttl, attributes, waitUpTo);
  }

  /**
   * These options, granting the lease {@code address}.
   *
   * @param address the address ({@code host:port} or a URL; {@code ""}: none)
   * @return the options with the change
   */
  public LeaseOptions withAddress(String address) {
    return withAttributes(attributes.withAddress(address));
  }

  /**
   * These options, adding {@code key} = {@code value} to the lease's metadata.
   *
   * @param key the metadata key
   * @param value its value
   * @return the options with the change
   */
  public LeaseOptions withMetadata(String key, String value) {
    return withAttributes(attributes.withMetadata(key, value));
  }

  /**
   * These options, granting the lease {@code status}.
   *
   * @param status the status, e.g. SERVING or DRAINING
   * @return the options with the change
   */
  public LeaseOptions withStatus(String status) {
    return withAttributes(attributes.withStatus(status));
  }

  /**
   * These options with a bound on how long an acquisition waits ({@link Duration#ZERO}: one
   * attempt).
   *
   * @param waitUpTo the longest wait for the name ({@link Duration#ZERO}: one attempt)
   * @return the options with the change
   */
  public LeaseOptions withWait(Duration waitUpTo) {
    return new LeaseOptions(
        ttl, attributes, Optional.of(Objects.requireNonNull(waitUpTo, "waitUpTo")));
  }

  /**
   * These options, waiting as long as it takes.
   *
   * @return the options with the change
   */
  public LeaseOptions waitIndefinitely() {
    return new LeaseOptions(ttl, attributes, Optional.empty());
  }
}
