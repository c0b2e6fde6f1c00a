package io.leasehold.shedlock;

import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejected;
import io.leasehold.client.Rejection;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link ExtensibleLockProvider} whose locks are Leasehold leases, held by the client's
 * holder identity under {@code <prefix><lock name>} (by default {@code shedlock/<name>}).
 *
 * <ul>
 *   <li><b>lockAtMostFor</b>: the lease gets it as its TTL (raised to the namespace's minimum TTL,
 *       lowered to its maximum) and is kept alive by the client; the provider releases it when
 *       lockAtMostFor has passed, so the name is free then even if the task still runs. If the
 *       process dies, the lease ends with its TTL.
 *   <li><b>lockAtLeastFor</b>: {@code unlock()} before {@code lockedAt + lockAtLeastFor} does not
 *       free the name. When the time left is within the namespace's TTL bounds, the lease is
 *       transferred in one replicated step to the holder {@link Builder#atLeastHolder} with that
 *       TTL and nobody renews it, so the cluster frees the name at that time even if this process
 *       dies; otherwise this client keeps the lease and releases it then.
 *   <li>{@link SimpleLock#extend} moves the end of the lock; the lease keeps the TTL it was granted
 *       with.
 * </ul>
 *
 * <p>The namespace's policy applies: its TTL bounds as above, learned from the first refusal; a
 * lock-delay after an expiry keeps the name taken that much longer (a lease handed over for
 * lockAtLeastFor ends by expiring); a ban or a name pattern makes {@link #lock} throw {@link
 * LockException}. No policy is needed: lockAtMostFor below the cluster's 2 s floor is enforced by
 * the provider's own release.
 *
 * <p>The provider is thread-safe; one per client is enough. {@link #close()} stops its timer
 * thread; close it before the client.
 */
public final class LeaseholdLockProvider implements ExtensibleLockProvider, AutoCloseable {
  /** The prefix put before lock names unless {@link Builder#prefix} says otherwise. */
  public static final String DEFAULT_PREFIX = "shedlock/";

  private static final Logger LOG = LoggerFactory.getLogger(LeaseholdLockProvider.class);

  private final LeaseholdClient client;
  private final String prefix;
  private final String atLeastHolder;
  private final ScheduledExecutorService timers;
  private final ConcurrentMap<String, TtlBounds> bounds = new ConcurrentHashMap<>();

  /**
   * The last lock taken per lock name; an entry whose lock ended is dropped when next asked for.
   */
  private final ConcurrentMap<String, HeldLease> locks = new ConcurrentHashMap<>();

  private LeaseholdLockProvider(Builder b) {
    this.client = b.client;
    this.prefix = b.prefix;
    this.atLeastHolder =
        b.atLeastHolder != null ? b.atLeastHolder : b.client.holder() + "/lock-at-least";
    this.timers =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-shedlock-timer");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * A provider with the default prefix ({@value #DEFAULT_PREFIX}).
   *
   * @param client the client whose holder identity holds the locks; it stays the caller's to close
   */
  public LeaseholdLockProvider(LeaseholdClient client) {
    this(builder(client));
  }

  /**
   * A builder for a provider on {@code client}.
   *
   * @param client the client whose holder identity holds the locks; it stays the caller's to close
   * @return the builder
   */
  public static Builder builder(LeaseholdClient client) {
    return new Builder(client);
  }

  /**
   * One attempt at the lock: a lease on {@link #leaseName(String)} if the name is free.
   *
   * @param configuration the lock's name, lockAtMostFor and lockAtLeastFor
   * @return the lock, or empty if someone holds the name (or it is in a lock-delay)
   * @throws LockException if the cluster could not be asked or its policy refuses the name
   * @throws IllegalStateException if the provider was closed
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    if (timers.isShutdown()) {
      throw new IllegalStateException("the lock provider was closed");
    }
    String name = leaseName(configuration.getName());
    String namespace = namespaceOf(name);
    AcquireResult result =
        tryAcquire(name, boundsOf(namespace).clamp(configuration.getLockAtMostFor()));
    if (result instanceof Rejected rejected
        && rejected.rejection().reason() == RejectReason.TTL_OUT_OF_RANGE) {
      TtlBounds learned = learn(namespace, rejected.rejection());
      result = tryAcquire(name, learned.clamp(configuration.getLockAtMostFor()));
    }
    if (result instanceof Granted granted) {
      HeldLease held = new HeldLease(granted.lease(), timers, configuration.getLockAtMostUntil());
      locks.put(configuration.getName(), held);
      return Optional.of(new LeaseholdSimpleLock(configuration, held, this));
    }
    if (result instanceof Conflict) {
      return Optional.empty();
    }
    Rejection rejection = ((Rejected) result).rejection();
    if (rejection.reason() == RejectReason.LOCK_DELAY) {
      return Optional.empty(); // free, but not yet: its last lease expired moments ago
    }
    throw new LockException(
        "lock "
            + configuration.getName()
            + ": refused by the cluster ("
            + rejection.reason()
            + "): "
            + rejection.message());
  }

  /**
   * The fencing token of the lock {@code lockName} while this provider holds it: taken, not yet
   * unlocked, lockAtMostFor not passed, and its lease valid on the client's clock. A job run under
   * the lock passes it with every write, so that the store can refuse a job that went on after its
   * lock ended (ShedLock never stops a running job):
   *
   * <pre>{@code
   * @Scheduled(cron = "0 0 * * * *")
   * @SchedulerLock(name = "hourly-report", lockAtMostFor = "15m")
   * void hourlyReport() {
   *   long token = lockProvider.token("hourly-report").orElseThrow();
   *   reports.write(report, token);  // the store refuses tokens older than one it has seen
   * }
   * }</pre>
   *
   * @param lockName the ShedLock lock name
   * @return the token, or empty if this provider does not hold the lock now
   */
  public OptionalLong token(String lockName) {
    HeldLease held = locks.get(Objects.requireNonNull(lockName, "lockName"));
    if (held == null) {
      return OptionalLong.empty();
    }
    OptionalLong token = held.tokenWhileLocked();
    if (token.isEmpty()) {
      locks.remove(lockName, held);
    }
    return token;
  }

  /**
   * The lease name a lock name maps to.
   *
   * @param lockName the ShedLock lock name
   * @return {@code prefix + lockName}
   */
  public String leaseName(String lockName) {
    return prefix + Objects.requireNonNull(lockName, "lockName");
  }

  /**
   * The holder that a lease is handed to for the rest of lockAtLeastFor.
   *
   * @return the holder identity, never one a live client uses
   */
  public String atLeastHolder() {
    return atLeastHolder;
  }

  /** Stops the timer thread. Locks still held are released by the client's close. */
  @Override
  public void close() {
    timers.shutdownNow();
  }

  /**
   * Hands the lease to {@link #atLeastHolder} with {@code rest} as its TTL; false if the namespace
   * does not allow that TTL or the cluster refused. The handle is then released, which only tells
   * the client the lease is no longer its own (the cluster answers that its token is not held).
   */
  CompletableFuture<Boolean> handOverFor(Lease lease, Duration rest) {
    String namespace = namespaceOf(lease.name());
    if (!boundsOf(namespace).allows(rest)) {
      return CompletableFuture.completedFuture(false);
    }
    return client
        .transfer(lease.name(), lease.token(), atLeastHolder, Optional.of(rest))
        .thenCompose(
            moved -> {
              if (moved.isEmpty()) {
                return CompletableFuture.completedFuture(false);
              }
              return lease.release().handle((v, e) -> true);
            })
        .exceptionally(
            e -> {
              Throwable cause = HeldLease.cause(e);
              if (cause instanceof AcquireRejectedException refused
                  && refused.rejection().reason() == RejectReason.TTL_OUT_OF_RANGE) {
                learn(namespace, refused.rejection());
              }
              LOG.debug(
                  "lock {}: not handed over for lockAtLeastFor ({}); held by this client instead",
                  lease.name(),
                  cause.toString());
              return false;
            });
  }

  private AcquireResult tryAcquire(String name, Duration ttl) {
    try {
      return client.tryAcquire(name, LeaseOptions.defaults().withTtl(ttl)).join();
    } catch (CompletionException e) {
      throw new LockException(
          "lock " + name + ": " + HeldLease.cause(e).getMessage(), HeldLease.cause(e));
    }
  }

  private TtlBounds boundsOf(String namespace) {
    return bounds.getOrDefault(namespace, TtlBounds.BUILT_IN);
  }

  private TtlBounds learn(String namespace, Rejection rejection) {
    return bounds.merge(
        namespace,
        TtlBounds.BUILT_IN.learnedFrom(rejection),
        (old, learned) -> old.learnedFrom(rejection));
  }

  private static String namespaceOf(String leaseName) {
    return leaseName.substring(0, leaseName.indexOf('/'));
  }

  @Override
  public String toString() {
    return "LeaseholdLockProvider[" + prefix + "*, holder " + client.holder() + "]";
  }

  /** Options of a {@link LeaseholdLockProvider}. */
  public static final class Builder {
    private final LeaseholdClient client;
    private String prefix = DEFAULT_PREFIX;
    private String atLeastHolder;

    private Builder(LeaseholdClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * What is put before each lock name to make its lease name: a namespace and a slash, and
     * optionally the start of the rest (e.g. {@code jobs/shedlock-}).
     *
     * @param prefix the prefix; it must contain a '/' after a non-empty namespace
     * @return this builder
     */
    public Builder prefix(String prefix) {
      Objects.requireNonNull(prefix, "prefix");
      if (prefix.indexOf('/') <= 0) {
        throw new IllegalArgumentException(
            "prefix: must start with a namespace and a slash, e.g. shedlock/, got \""
                + prefix
                + "\"");
      }
      this.prefix = prefix;
      return this;
    }

    /**
     * The holder a lease is handed to for what remains of lockAtLeastFor after {@code unlock()}. No
     * live client may use it. Default: the client's holder followed by {@code /lock-at-least}.
     *
     * @param holder the holder identity
     * @return this builder
     */
    public Builder atLeastHolder(String holder) {
      Objects.requireNonNull(holder, "holder");
      if (holder.isEmpty() || holder.equals(client.holder())) {
        throw new IllegalArgumentException(
            "atLeastHolder: must be non-empty and not the client's own holder");
      }
      this.atLeastHolder = holder;
      return this;
    }

    /**
     * The provider.
     *
     * @return a new provider
     */
    public LeaseholdLockProvider build() {
      return new LeaseholdLockProvider(this);
    }
  }
}
