package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A namespace's policy ({@link LeaseholdAdmin#setPolicy}). Every field is optional: an unset one
 * takes the built-in value (not the default policy's), as listed at each field. Build one with
 * {@link #builder()}.
 *
 * @param minTtl the smallest TTL allowed (built-in: 2 s, never below)
 * @param maxTtl the largest TTL allowed (built-in: 24 h, at most 366 days)
 * @param defaultTtl the TTL of an acquisition that gives none (built-in: 10 s, or the nearer bound)
 * @param heartbeatInterval the renewal interval suggested to clients (built-in: a third of the
 *     TTL); shorter than minTtl
 * @param namePattern an RE2 pattern the part of the name after {@code <namespace>/} must match
 *     (empty: any name)
 * @param gracePeriod how much longer than the TTL the leader waits before it expires a lease
 *     (built-in: none)
 * @param lockDelay how long a name stays unavailable after its lease expired or was revoked
 *     (built-in: none)
 * @param maxLeasesPerHolder how many leases one holder may hold in the namespace (built-in: no
 *     limit)
 * @param maxLeasesPerNamespace how many leases the namespace may hold (built-in: no limit)
 * @param historyLimit how many ended leases are kept per name (built-in: 100, at most 10,000)
 */
public record Policy(
    Optional<Duration> minTtl,
    Optional<Duration> maxTtl,
    Optional<Duration> defaultTtl,
    Optional<Duration> heartbeatInterval,
    String namePattern,
    Optional<Duration> gracePeriod,
    Optional<Duration> lockDelay,
    OptionalLong maxLeasesPerHolder,
    OptionalLong maxLeasesPerNamespace,
    OptionalInt historyLimit) {
  /**
   * Checks that every field is given.
   *
   * @param minTtl the smallest TTL allowed (built-in: 2 s, never below)
   * @param maxTtl the largest TTL allowed (built-in: 24 h, at most 366 days)
   * @param defaultTtl the TTL of an acquisition that gives none (built-in: 10 s, or the nearer
   *     bound)
   * @param heartbeatInterval the renewal interval suggested to clients (built-in: a third of the
   *     TTL); shorter than minTtl
   * @param namePattern an RE2 pattern the part of the name after {@code <namespace>/} must match
   *     (empty: any name)
   * @param gracePeriod how much longer than the TTL the leader waits before it expires a lease
   *     (built-in: none)
   * @param lockDelay how long a name stays unavailable after its lease expired or was revoked
   *     (built-in: none)
   * @param maxLeasesPerHolder how many leases one holder may hold in the namespace (built-in: no
   *     limit)
   * @param maxLeasesPerNamespace how many leases the namespace may hold (built-in: no limit)
   * @param historyLimit how many ended leases are kept per name (built-in: 100, at most 10,000)
   */
  public Policy {
    Objects.requireNonNull(minTtl, "minTtl");
    Objects.requireNonNull(maxTtl, "maxTtl");
    Objects.requireNonNull(defaultTtl, "defaultTtl");
    Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
    Objects.requireNonNull(namePattern, "namePattern");
    Objects.requireNonNull(gracePeriod, "gracePeriod");
    Objects.requireNonNull(lockDelay, "lockDelay");
    Objects.requireNonNull(maxLeasesPerHolder, "maxLeasesPerHolder");
    Objects.requireNonNull(maxLeasesPerNamespace, "maxLeasesPerNamespace");
    Objects.requireNonNull(historyLimit, "historyLimit");
  }

  /**
   * A policy with no field set: the built-in values everywhere.
   *
   * @return the policy
   */
  public static Policy builtIn() {
    return builder().build();
  }

  /**
   * A builder with no field set.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder starting from this policy's fields.
   *
   * @return a builder holding this policy's fields
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.minTtl = minTtl;
    b.maxTtl = maxTtl;
    b.defaultTtl = defaultTtl;
    b.heartbeatInterval = heartbeatInterval;
    b.namePattern = namePattern;
    b.gracePeriod = gracePeriod;
    b.lockDelay = lockDelay;
    b.maxLeasesPerHolder = maxLeasesPerHolder;
    b.maxLeasesPerNamespace = maxLeasesPerNamespace;
    b.historyLimit = historyLimit;
    return b;
  }

  /** Builds a {@link Policy}; the cluster checks the values when the policy is set. */
  public static final class Builder {
    private Optional<Duration> minTtl = Optional.empty();
    private Optional<Duration> maxTtl = Optional.empty();
    private Optional<Duration> defaultTtl = Optional.empty();
    private Optional<Duration> heartbeatInterval = Optional.empty();
    private String namePattern = "";
    private Optional<Duration> gracePeriod = Optional.empty();
    private Optional<Duration> lockDelay = Optional.empty();
    private OptionalLong maxLeasesPerHolder = OptionalLong.empty();
    private OptionalLong maxLeasesPerNamespace = OptionalLong.empty();
    private OptionalInt historyLimit = OptionalInt.empty();

    private Builder() {}

    /**
     * Sets {@link Policy#minTtl()}.
     *
     * @param ttl the smallest TTL allowed
     * @return this builder
     */
    public Builder minTtl(Duration ttl) {
      this.minTtl = Optional.of(ttl);
      return this;
    }

    /**
     * Sets {@link Policy#maxTtl()}.
     *
     * @param ttl the largest TTL allowed
     * @return this builder
     */
    public Builder maxTtl(Duration ttl) {
      this.maxTtl = Optional.of(ttl);
      return this;
    }

    /**
     * Sets {@link Policy#defaultTtl()}.
     *
     * @param ttl the TTL of an acquisition that gives none
     * @return this builder
     */
    public Builder defaultTtl(Duration ttl) {
      this.defaultTtl = Optional.of(ttl);
      return this;
    }

    /**
     * Sets {@link Policy#heartbeatInterval()}.
     *
     * @param interval the suggested renewal interval, shorter than the minimum TTL
     * @return this builder
     */
    public Builder heartbeatInterval(Duration interval) {
      this.heartbeatInterval = Optional.of(interval);
      return this;
    }

    /**
     * Sets {@link Policy#namePattern()} (empty: any name).
     *
     * @param pattern an RE2 pattern ({@code ""}: any name)
     * @return this builder
     */
    public Builder namePattern(String pattern) {
      this.namePattern = Objects.requireNonNull(pattern, "pattern");
      return this;
    }

    /**
     * Sets {@link Policy#gracePeriod()}.
     *
     * @param grace how much longer than the TTL the leader waits before expiring a lease
     * @return this builder
     */
    public Builder gracePeriod(Duration grace) {
      this.gracePeriod = Optional.of(grace);
      return this;
    }

    /**
     * Sets {@link Policy#lockDelay()}.
     *
     * @param delay how long a name stays unavailable after its lease expired or was revoked
     * @return this builder
     */
    public Builder lockDelay(Duration delay) {
      this.lockDelay = Optional.of(delay);
      return this;
    }

    /**
     * Sets {@link Policy#maxLeasesPerHolder()}.
     *
     * @param max the most leases one holder may hold in the namespace
     * @return this builder
     */
    public Builder maxLeasesPerHolder(long max) {
      this.maxLeasesPerHolder = OptionalLong.of(max);
      return this;
    }

    /**
     * Sets {@link Policy#maxLeasesPerNamespace()}.
     *
     * @param max the most leases the namespace may hold
     * @return this builder
     */
    public Builder maxLeasesPerNamespace(long max) {
      this.maxLeasesPerNamespace = OptionalLong.of(max);
      return this;
    }

    /**
     * Sets {@link Policy#historyLimit()}.
     *
     * @param limit the most ended leases kept per name
     * @return this builder
     */
    public Builder historyLimit(int limit) {
      this.historyLimit = OptionalInt.of(limit);
      return this;
    }

    /**
     * The policy with the fields set so far.
     *
     * @return the policy
     */
    public Policy build() {
      return new Policy(
          minTtl,
          maxTtl,
          defaultTtl,
          heartbeatInterval,
          namePattern,
          gracePeriod,
          lockDelay,
          maxLeasesPerHolder,
          maxLeasesPerNamespace,
          historyLimit);
    }
  }
}
