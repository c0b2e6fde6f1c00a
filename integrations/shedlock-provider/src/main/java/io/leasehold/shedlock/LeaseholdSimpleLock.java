package io.leasehold.shedlock;

import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/** One ShedLock lock on a held lease; extending hands the same lease to a new lock object. */
final class LeaseholdSimpleLock extends AbstractSimpleLock {
  private final HeldLease held;
  private final LeaseholdLockProvider provider;

  LeaseholdSimpleLock(
      LockConfiguration configuration, HeldLease held, LeaseholdLockProvider provider) {
    super(configuration);
    this.held = held;
    this.provider = provider;
  }

  @Override
  protected void doUnlock() {
    held.unlock(
        lockConfiguration.getLockAtLeastUntil(), rest -> provider.handOverFor(held.lease(), rest));
  }

  @Override
  protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
    if (!held.extendTo(newConfiguration.getLockAtMostUntil())) {
      return Optional.empty();
    }
    return Optional.of(new LeaseholdSimpleLock(newConfiguration, held, provider));
  }

  @Override
  public String toString() {
    return "LeaseholdSimpleLock[" + held.lease().name() + ", token " + held.lease().token() + "]";
  }
}
