package io.leasehold.client;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An entry of the routing table: a live lease that carries an address.
 *
 * @param name the leased name, e.g. {@code mailbox/$admin@proxy-01} or {@code partition/42}
 * @param holder who holds it
 * @param address where to send traffic for it
 * @param token the lease's fencing token (pass it along so the target can refuse a stale owner)
 * @param partition {@code crc32(name) % 256}
 * @param metadata the lease's metadata
 * @param status the lease's status, if it has one
 */
public record Route(
    String name,
    String holder,
    String address,
    long token,
    int partition,
    Map<String, String> metadata,
    Optional<String> status) {
  /**
   * Checks the fields and copies the metadata.
   *
   * @param name the leased name, e.g. {@code mailbox/$admin@proxy-01} or {@code partition/42}
   * @param holder who holds it
   * @param address where to send traffic for it
   * @param token the lease's fencing token (pass it along so the target can refuse a stale owner)
   * @param partition {@code crc32(name) % 256}
   * @param metadata the lease's metadata
   * @param status the lease's status, if it has one
   */
  public Route {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(address, "address");
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    Objects.requireNonNull(status, "status");
  }
}
