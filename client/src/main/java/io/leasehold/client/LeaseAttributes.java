package io.leasehold.client;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What turns a lease into a registry entry or a route: an endpoint {@code address}, string {@code
 * metadata} and a {@code status} such as SERVING or DRAINING. All optional; an empty string is the
 * same as absent.
 *
 * @param address where the holder can be reached ({@code host:port} or a URL)
 * @param metadata free-form key/value pairs; never null, unmodifiable
 * @param status e.g. {@code SERVING}, {@code DRAINING}
 */
public record LeaseAttributes(
    Optional<String> address, Map<String, String> metadata, Optional<String> status) {
  /** No address, no metadata, no status. */
  public static final LeaseAttributes NONE =
      new LeaseAttributes(Optional.empty(), Map.of(), Optional.empty());

  /**
   * Checks the fields and copies the metadata.
   *
   * @param address where the holder can be reached ({@code host:port} or a URL)
   * @param metadata free-form key/value pairs; never null, unmodifiable
   * @param status e.g. {@code SERVING}, {@code DRAINING}
   */
  public LeaseAttributes {
    address = Objects.requireNonNull(address, "address").filter(a -> !a.isEmpty());
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    status = Objects.requireNonNull(status, "status").filter(s -> !s.isEmpty());
  }

  /**
   * Attributes with only an address.
   *
   * @param address the address ({@code host:port} or a URL; {@code ""}: none)
   * @return the attributes
   */
  public static LeaseAttributes ofAddress(String address) {
    return NONE.withAddress(address);
  }

  /**
   * These attributes with {@code address}.
   *
   * @param address the address ({@code host:port} or a URL; {@code ""}: none)
   * @return the attributes with the change
   */
  public LeaseAttributes withAddress(String address) {
    return new LeaseAttributes(
        Optional.of(Objects.requireNonNull(address, "address")), metadata, status);
  }

  /**
   * These attributes with {@code status}.
   *
   * @param status the status, e.g. SERVING or DRAINING
   * @return the attributes with the change
   */
  public LeaseAttributes withStatus(String status) {
    return new LeaseAttributes(
        address, metadata, Optional.of(Objects.requireNonNull(status, "status")));
  }

  /**
   * These attributes with the metadata replaced.
   *
   * @param metadata the new metadata, replacing all of it
   * @return the attributes with the change
   */
  public LeaseAttributes withMetadata(Map<String, String> metadata) {
    return new LeaseAttributes(address, metadata, status);
  }

  /**
   * These attributes with one more metadata entry (replacing one with the same key).
   *
   * @param key the metadata key
   * @param value its value
   * @return the attributes with the change
   */
  public LeaseAttributes withMetadata(String key, String value) {
    Map<String, String> m = new HashMap<>(metadata);
    m.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
    return new LeaseAttributes(address, m, status);
  }
}
