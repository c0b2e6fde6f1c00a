package io.leasehold.client;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A service instance this client registered ({@link LeaseholdClient#register}): the lease
 * {@code service/<service>/<instance>}, renewed by the client's keep-alive loop. Closing it
 * deregisters the instance. Thread-safe.
 */
public interface Registration extends AutoCloseable {
  String SERVING = "SERVING";
  String DRAINING = "DRAINING";

  String service();

  String instance();

  String address();

  Map<String, String> metadata();

  /** The status last set (SERVING, DRAINING …). */
  String status();

  /** The fencing token of the current registration lease (changes if it re-registers). */
  long token();

  /** The current registration lease. */
  Lease lease();

  RegistrationState state();

  /**
   * Changes the instance's status, e.g. to {@link #DRAINING} before shutting down so resolvers
   * stop sending new work. If the lease was lost meanwhile, a re-registration uses this status.
   */
  CompletableFuture<Void> setStatus(String status);

  /**
   * Deregisters the instance (releases its lease) and stops renewing it.
   *
   * @throws IllegalStateException if it was already deregistered
   */
  CompletableFuture<Void> deregister();

  /** Deregisters if still registered, waiting (bounded) for the cluster; never throws. Idempotent. */
  @Override
  void close();

  void addListener(RegistrationListener listener);

  boolean removeListener(RegistrationListener listener);
}
