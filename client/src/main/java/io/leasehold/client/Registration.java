package io.leasehold.client;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A service instance this client registered ({@link LeaseholdClient#register}): the lease {@code
 * service/<service>/<instance>}, renewed by the client's keep-alive loop. Closing it deregisters
 * the instance. Thread-safe.
 */
public interface Registration extends AutoCloseable {
  /** The status of an instance that takes traffic. */
  String SERVING = "SERVING";

  /** The status of an instance that finishes its work and takes no new traffic. */
  String DRAINING = "DRAINING";

  /**
   * The registered service.
   *
   * @return the service's name
   */
  String service();

  /**
   * The registered instance.
   *
   * @return the instance, unique within the service
   */
  String instance();

  /**
   * The instance's address.
   *
   * @return where the instance serves ({@code host:port} or a URL)
   */
  String address();

  /**
   * The instance's metadata.
   *
   * @return the metadata
   */
  Map<String, String> metadata();

  /**
   * The status last set (SERVING, DRAINING …).
   *
   * @return the instance's status, e.g. SERVING or DRAINING
   */
  String status();

  /**
   * The fencing token of the current registration lease (changes if it re-registers).
   *
   * @return the fencing token
   */
  long token();

  /**
   * The current registration lease.
   *
   * @return the current registration lease (a new one after each re-registration)
   */
  Lease lease();

  /**
   * Where the registration stands.
   *
   * @return the current state
   */
  RegistrationState state();

  /**
   * Changes the instance's status, e.g. to {@link #DRAINING} before shutting down so resolvers stop
   * sending new work. If the lease was lost meanwhile, a re-registration uses this status.
   *
   * @param status the new status, e.g. DRAINING
   * @return completes when the cluster has stored it
   */
  CompletableFuture<Void> setStatus(String status);

  /**
   * Deregisters the instance (releases its lease) and stops renewing it.
   *
   * @return completes when the cluster has answered
   * @throws IllegalStateException if it was already deregistered
   */
  CompletableFuture<Void> deregister();

  /**
   * Deregisters if still registered, waiting (bounded) for the cluster; never throws. Idempotent.
   */
  @Override
  void close();

  /**
   * Adds a listener for state changes.
   *
   * @param listener told of each state change, in order
   */
  void addListener(RegistrationListener listener);

  /**
   * Removes a listener; whether it was there.
   *
   * @param listener the listener to remove
   * @return whether it had been added
   */
  boolean removeListener(RegistrationListener listener);
}
