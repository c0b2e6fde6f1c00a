package io.leasehold.client;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A live instance of a service, as {@link LeaseholdClient#resolve} returns it: the lease {@code
 * service/<service>/<instance>} and its attributes.
 *
 * @param service the service's name
 * @param instance the instance
 * @param address where it serves
 * @param metadata its metadata
 * @param status its status, e.g. SERVING or DRAINING
 * @param token the fencing token of its registration
 * @param holder who registered it
 * @param expiresAt the estimated expiry of its registration lease (leader-stamped)
 */
public record ServiceInstance(
    String service,
    String instance,
    String address,
    Map<String, String> metadata,
    Optional<String> status,
    long token,
    String holder,
    Instant expiresAt) {
  /**
   * Checks the fields and copies the metadata.
   *
   * @param service the service's name
   * @param instance the instance
   * @param address where it serves
   * @param metadata its metadata
   * @param status its status, e.g. SERVING or DRAINING
   * @param token the fencing token of its registration
   * @param holder who registered it
   * @param expiresAt the estimated expiry of its registration lease (leader-stamped)
   */
  public ServiceInstance {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(instance, "instance");
    Objects.requireNonNull(address, "address");
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(expiresAt, "expiresAt");
  }
}
