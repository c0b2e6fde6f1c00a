package io.leasehold.client;

/**
 * Work done under a lease ({@link LeaseholdClient#withLease}): it runs only while the lease is held
 * and is interrupted if the lease is lost, so it should respond to interruption (blocking I/O,
 * {@code Thread.sleep}, or checking {@link Thread#isInterrupted()} in loops).
 *
 * @param <T> what the work returns
 */
@FunctionalInterface
public interface LeaseAction<T> {
  /**
   * Does the work while {@code lease} is held; interrupted if it is lost.
   *
   * @param lease the lease held while the work runs
   * @return what the work produced
   * @throws Exception whatever the work throws, handed to the caller
   */
  T run(Lease lease) throws Exception;
}
