package io.leasehold.client;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A service instance this client registered ({@link LeaseholdClient#register}): the lease
 * {@code service/<service>/<instance>}, renewed by the client's keep-alive loop. Closing it
 * deregisters the instance. Thread-safe.
 */
public interface Registration extends AutoCloseable {
  /** The status of an instance that takes traffic. */
  String SERVING = "SERVING";
  /** The status of an instance that finishes its work and takes no new traffic. */
  String DRAINING = "DRAINING";

  /** The registered service. */
  String service();

  /** The registered instance. */
  String instance();

  /** The instance's address. */
  String address();

  /** The instance's metadata. */
  Map<String, String> metadata();

  /** The status last set (SERVING, DRAINING …). */
  String status();

  /** The fencing token of the current registration lease (changes if it re-registers). */
  long token();

  /** The current registration lease. */
  Lease lease();

  /** Where the registration stands. */
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

  /** Adds a listener for state changes. */
  void addListener(RegistrationListener listener);

  /** Removes a listener; whether it was there. */
  boolean removeListener(RegistrationListener listener);
}
