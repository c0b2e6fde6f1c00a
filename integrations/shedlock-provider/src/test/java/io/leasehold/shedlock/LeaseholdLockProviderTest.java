package io.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Policy;
import io.leasehold.testkit.LeaseholdExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the provider adds to ShedLock's suite: lease TTLs, policy, and the name never free too
 * early.
 */
class LeaseholdLockProviderTest {
  @RegisterExtension static final LeaseholdExtension leasehold = LeaseholdExtension.cluster(3);
  static LeaseholdClient client;
  static LeaseholdLockProvider provider;

  @BeforeAll
  static void start() {
    client = leasehold.client();
    provider = new LeaseholdLockProvider(client);
  }

  @AfterAll
  static void stop() {
    provider.close();
  }

  @Test
  void theLeaseTtlIsLockAtMostForRaisedToTheClusterFloor() {
    SimpleLock longer =
        lock(provider, "ttl-long", Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
    assertThat(lease("ttl-long").orElseThrow().ttl()).isEqualTo(Duration.ofSeconds(30));
    assertThat(lease("ttl-long").orElseThrow().holder()).isEqualTo(client.holder());
    longer.unlock();

    SimpleLock shorter =
        lock(provider, "ttl-short", Duration.ofSeconds(1), Duration.ZERO).orElseThrow();
    assertThat(lease("ttl-short").orElseThrow().ttl()).isEqualTo(Duration.ofSeconds(2));
    shorter.unlock();
  }

  @Test
  void theTokenOfAHeldLockIsItsLeasesUntilUnlockOrLockAtMostFor() {
    SimpleLock lock = lock(provider, "fenced", Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
    long token = lease("fenced").orElseThrow().token();
    assertThat(provider.token("fenced")).hasValue(token);
    assertThat(provider.token("not-taken")).isEmpty();
    lock.unlock();
    assertThat(provider.token("fenced")).isEmpty();

    SimpleLock brief =
        lock(provider, "fenced", Duration.ofMillis(800), Duration.ZERO).orElseThrow();
    assertThat(provider.token("fenced").orElseThrow()).isGreaterThan(token);
    await("the token gone once lockAtMostFor passed")
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptions()
        .until(() -> provider.token("fenced").isEmpty());
    brief.unlock();
  }

  @Test
  void lockAtMostForFreesTheNameWhileTheTaskStillRuns() {
    LockConfiguration config = config("at-most", Duration.ofMillis(600), Duration.ZERO);
    SimpleLock lock = provider.lock(config).orElseThrow();
    Instant freedAt = awaitFree("at-most");
    assertThat(freedAt).isAfterOrEqualTo(config.getLockAtMostUntil());

    try (LeaseholdClient other = leasehold.cluster().clientBuilder().build();
        LeaseholdLockProvider second = new LeaseholdLockProvider(other)) {
      SimpleLock taken =
          lock(second, "at-most", Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
      lock.unlock(); // too late: frees nothing of the next holder's
      assertThat(lease("at-most").orElseThrow().holder()).isEqualTo(other.holder());
      taken.unlock();
    }
  }

  @Test
  void lockAtLeastForShorterThanTheMinimumTtlIsHeldByTheClientUntilItEnds() {
    LockConfiguration config =
        config("at-least-short", Duration.ofSeconds(10), Duration.ofMillis(1500));
    provider.lock(config).orElseThrow().unlock();
    assertThat(lease("at-least-short").orElseThrow().holder()).isEqualTo(client.holder());
    assertThat(provider.lock(config("at-least-short", Duration.ofSeconds(10), Duration.ZERO)))
        .isEmpty();

    assertThat(awaitFree("at-least-short")).isAfterOrEqualTo(config.getLockAtLeastUntil());
  }

  @Test
  void lockAtLeastForIsKeptByTheClusterEvenAfterTheClientIsGone() {
    LeaseholdClient gone = leasehold.cluster().clientBuilder().build();
    LeaseholdLockProvider goneProvider = new LeaseholdLockProvider(gone);
    LockConfiguration config =
        config("at-least-long", Duration.ofSeconds(20), Duration.ofSeconds(4));
    goneProvider.lock(config).orElseThrow().unlock();

    LeaseInfo handedOver = lease("at-least-long").orElseThrow();
    assertThat(handedOver.holder()).isEqualTo(goneProvider.atLeastHolder());
    assertThat(handedOver.ttl()).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(4));
    goneProvider.close();
    gone.close();

    Instant acquiredAt =
        await("lock at-least-long free again")
            .atMost(Duration.ofSeconds(20))
            .ignoreExceptions()
            .until(
                () -> {
                  Optional<SimpleLock> lock =
                      lock(provider, "at-least-long", Duration.ofSeconds(30), Duration.ZERO);
                  Instant now = ClockProvider.now();
                  lock.ifPresent(SimpleLock::unlock);
                  return lock.map(l -> now);
                },
                Optional::isPresent)
            .orElseThrow();
    assertThat(acquiredAt).isAfterOrEqualTo(config.getLockAtLeastUntil());
  }

  @Test
  void theNamespaceMinimumTtlIsLearnedFromTheFirstRefusal() {
    client
        .admin()
        .setPolicy("strict", Policy.builder().minTtl(Duration.ofSeconds(5)).build())
        .join();
    try (LeaseholdLockProvider strict =
        LeaseholdLockProvider.builder(client).prefix("strict/").build()) {
      SimpleLock lock = lock(strict, "job", Duration.ofSeconds(1), Duration.ZERO).orElseThrow();
      assertThat(client.get("strict/job").join().orElseThrow().ttl())
          .isEqualTo(Duration.ofSeconds(5));
      lock.unlock();
    }
  }

  @Test
  void aNameThePolicyRefusesThrowsLockException() {
    client.admin().setPolicy("lowercase", Policy.builder().namePattern("[a-z-]+").build()).join();
    try (LeaseholdLockProvider strict =
        LeaseholdLockProvider.builder(client).prefix("lowercase/").build()) {
      assertThatThrownBy(() -> lock(strict, "Not_Allowed", Duration.ofSeconds(10), Duration.ZERO))
          .isInstanceOf(LockException.class)
          .hasMessageContaining("NAME_NOT_ALLOWED");
      assertThat(lock(strict, "allowed", Duration.ofSeconds(10), Duration.ZERO))
          .isPresent()
          .get()
          .satisfies(SimpleLock::unlock);
    }
  }

  @Test
  void aPrefixWithoutANamespaceIsRefused() {
    assertThatThrownBy(() -> LeaseholdLockProvider.builder(client).prefix("shedlock-"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LeaseholdLockProvider.builder(client).prefix("/jobs"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(
            LeaseholdLockProvider.builder(client)
                .prefix("jobs/shedlock-")
                .build()
                .leaseName("nightly"))
        .isEqualTo("jobs/shedlock-nightly");
  }

  private static Optional<SimpleLock> lock(
      LeaseholdLockProvider p, String name, Duration atMost, Duration atLeast) {
    return p.lock(config(name, atMost, atLeast));
  }

  private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
  }

  private static Optional<LeaseInfo> lease(String lockName) {
    return client.get(provider.leaseName(lockName)).join();
  }

  /** When the cluster was first seen without the lock's lease (polled, with a deadline). */
  private static Instant awaitFree(String lockName) {
    return await("lock " + lockName + " free")
        .atMost(Duration.ofSeconds(15))
        .ignoreExceptions()
        .until(
            () ->
                lease(lockName).isEmpty()
                    ? Optional.of(ClockProvider.now())
                    : Optional.<Instant>empty(),
            Optional::isPresent)
        .orElseThrow();
  }
}
