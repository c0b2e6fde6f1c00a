package io.leasehold.spring.integration;

import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * A Spring Integration lock registry whose locks are Leasehold leases: {@link #obtain} hands out
 * one {@link LeaseholdLock} per key, locking the lease {@code <prefix><key>} (by default {@code
 * spring-lock/<key>}) for the client's holder identity.
 *
 * <p>As Spring's own registries: locks are reentrant for the owning thread (the last {@code
 * unlock()} releases the lease); {@code unlock()} by a thread that does not hold the lock throws
 * {@link IllegalStateException}; a lock whose lease was lost while held (expired, revoked, the
 * client cut off past the TTL) throws {@link java.util.ConcurrentModificationException} from its
 * last {@code unlock()}, after freeing the lock locally. Unlike a store-backed registry, a held
 * lock does not expire while its process runs: the client keeps the lease alive, and the TTL only
 * bounds how long the name stays taken after the process stops (crash, partition, long pause).
 *
 * <p>Two registries exclude each other for the same key whether they share a client or not; within
 * one registry, threads take turns on the local lock first, so only one of them at a time asks the
 * cluster.
 */
public final class LeaseholdLockRegistry implements ExpirableLockRegistry<LeaseholdLock> {
  /** The prefix put before keys unless {@link Builder#prefix} says otherwise. */
  public static final String DEFAULT_PREFIX = "spring-lock/";

  private final LeaseholdClient client;
  private final String prefix;
  private final Optional<Duration> ttl;

  // Guarded by itself.
  private final Map<String, LeaseholdLock> locks = new HashMap<>();

  private LeaseholdLockRegistry(Builder b) {
    this.client = b.client;
    this.prefix = b.prefix;
    this.ttl = b.ttl;
  }

  /**
   * A registry with the default prefix ({@value #DEFAULT_PREFIX}) whose leases live with the
   * client's session.
   *
   * @param client the client whose holder identity holds the locks; it stays the caller's to close
   */
  public LeaseholdLockRegistry(LeaseholdClient client) {
    this(builder(client));
  }

  /**
   * A builder for a registry on {@code client}.
   *
   * @param client the client whose holder identity holds the locks; it stays the caller's to close
   * @return the builder
   */
  public static Builder builder(LeaseholdClient client) {
    return new Builder(client);
  }

  /**
   * The lock for {@code lockKey}: the same object for the same key until it is expired from the
   * registry while unlocked ({@link #expireUnusedOlderThan}).
   *
   * @param lockKey a {@link String}, the rest of the lease name after the prefix
   * @return the lock
   * @throws IllegalArgumentException if the key is not a string
   */
  @Override
  public LeaseholdLock obtain(Object lockKey) {
    if (!(lockKey instanceof String key)) {
      throw new IllegalArgumentException(
          "lockKey: must be a String, got "
              + (lockKey == null ? "null" : lockKey.getClass().getName()));
    }
    synchronized (locks) {
      LeaseholdLock lock =
          locks.computeIfAbsent(key, k -> new LeaseholdLock(client, k, prefix + k, this::options));
      lock.touch();
      return lock;
    }
  }

  /**
   * Forgets the locks obtained more than {@code age} milliseconds ago that no thread of this
   * process holds; a later {@link #obtain} makes a new one.
   *
   * @param age the time since the lock was last obtained or locked, in milliseconds
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    long now = System.currentTimeMillis();
    synchronized (locks) {
      locks
          .values()
          .removeIf(lock -> now - lock.lastUsed() >= age && !lock.isAcquiredInThisProcess());
    }
  }

  /**
   * The lease name a key maps to.
   *
   * @param lockKey the key
   * @return {@code prefix + lockKey}
   */
  public String leaseName(String lockKey) {
    return prefix + Objects.requireNonNull(lockKey, "lockKey");
  }

  /** The lease options of an acquisition: {@code ttl} if given, else the registry's. */
  private LeaseOptions options(Optional<Duration> ttlOfCall) {
    Optional<Duration> chosen = ttlOfCall.or(() -> ttl);
    return chosen.map(LeaseOptions.defaults()::withTtl).orElseGet(LeaseOptions::defaults);
  }

  @Override
  public String toString() {
    return "LeaseholdLockRegistry[" + prefix + "*, holder " + client.holder() + "]";
  }

  /** Options of a {@link LeaseholdLockRegistry}. */
  public static final class Builder {
    private final LeaseholdClient client;
    private String prefix = DEFAULT_PREFIX;
    private Optional<Duration> ttl = Optional.empty();

    private Builder(LeaseholdClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * What is put before each key to make its lease name: a namespace and a slash, and optionally
     * the start of the rest (e.g. {@code orders/lock-}).
     *
     * @param prefix the prefix; it must contain a '/' after a non-empty namespace
     * @return this builder
     */
    public Builder prefix(String prefix) {
      Objects.requireNonNull(prefix, "prefix");
      if (prefix.indexOf('/') <= 0) {
        throw new IllegalArgumentException(
            "prefix: must start with a namespace and a slash, e.g. spring-lock/, got \""
                + prefix
                + "\"");
      }
      this.prefix = prefix;
      return this;
    }

    /**
     * Gives every lease this TTL of its own (within the namespace's bounds) instead of the client's
     * session: how long the name stays taken after this process stops renewing it.
     *
     * @param ttl the TTL
     * @return this builder
     */
    public Builder ttl(Duration ttl) {
      Objects.requireNonNull(ttl, "ttl");
      if (ttl.isNegative() || ttl.isZero()) {
        throw new IllegalArgumentException("ttl: must be positive, got " + ttl);
      }
      this.ttl = Optional.of(ttl);
      return this;
    }

    /**
     * The registry.
     *
     * @return a new registry
     */
    public LeaseholdLockRegistry build() {
      return new LeaseholdLockRegistry(this);
    }
  }
}
