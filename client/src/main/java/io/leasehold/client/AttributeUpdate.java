package io.leasehold.client;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A change to a held lease's attributes: only the parts that are present change, the others stay as
 * they are (the token never changes). An empty string clears the address or the status.
 *
 * <pre>{@code
 * lease.update(AttributeUpdate.status("DRAINING"));
 * lease.update(AttributeUpdate.address("10.0.0.7:8443").andStatus("SERVING"));
 * lease.update(AttributeUpdate.replaceAll(LeaseAttributes.NONE));   // clear everything
 * }</pre>
 *
 * @param address the new address, if it changes
 * @param metadata the new metadata (replacing all of it), if it changes
 * @param status the new status, if it changes
 */
public record AttributeUpdate(
    Optional<String> address, Optional<Map<String, String>> metadata, Optional<String> status) {
  /**
   * Checks that every part is given (absent: left as it is).
   *
   * @param address the new address, if it changes
   * @param metadata the new metadata (replacing all of it), if it changes
   * @param status the new status, if it changes
   */
  public AttributeUpdate {
    Objects.requireNonNull(address, "address");
    metadata = Objects.requireNonNull(metadata, "metadata").map(Map::copyOf);
    Objects.requireNonNull(status, "status");
    if (address.isEmpty() && metadata.isEmpty() && status.isEmpty()) {
      throw new IllegalArgumentException(
          "an attribute update must change the address, the metadata or the status");
    }
  }

  /**
   * Replaces address, metadata and status with {@code attributes} (absent parts are cleared).
   *
   * @param attributes the attributes to store; an absent address or status is cleared
   * @return the update
   */
  public static AttributeUpdate replaceAll(LeaseAttributes attributes) {
    return new AttributeUpdate(
        Optional.of(attributes.address().orElse("")),
        Optional.of(attributes.metadata()),
        Optional.of(attributes.status().orElse("")));
  }

  /**
   * Changes only the address ({@code ""} clears it).
   *
   * @param address the address ({@code host:port} or a URL; {@code ""}: none)
   * @return the update
   */
  public static AttributeUpdate address(String address) {
    return new AttributeUpdate(Optional.of(address), Optional.empty(), Optional.empty());
  }

  /**
   * Changes only the status ({@code ""} clears it).
   *
   * @param status the status, e.g. SERVING or DRAINING
   * @return the update
   */
  public static AttributeUpdate status(String status) {
    return new AttributeUpdate(Optional.empty(), Optional.empty(), Optional.of(status));
  }

  /**
   * Replaces only the metadata.
   *
   * @param metadata the new metadata, replacing all of it
   * @return the update
   */
  public static AttributeUpdate metadata(Map<String, String> metadata) {
    return new AttributeUpdate(Optional.empty(), Optional.of(metadata), Optional.empty());
  }

  /**
   * This update, also setting the address ({@code ""} clears it).
   *
   * @param address the address ({@code host:port} or a URL; {@code ""}: none)
   * @return the update
   */
  public AttributeUpdate andAddress(String address) {
    return new AttributeUpdate(Optional.of(address), metadata, status);
  }

  /**
   * This update, also setting the status ({@code ""} clears it).
   *
   * @param status the status, e.g. SERVING or DRAINING
   * @return the update
   */
  public AttributeUpdate andStatus(String status) {
    return new AttributeUpdate(address, metadata, Optional.of(status));
  }

  /**
   * This update, also replacing the metadata.
   *
   * @param metadata the new metadata, replacing all of it
   * @return the update
   */
  public AttributeUpdate andMetadata(Map<String, String> metadata) {
    return new AttributeUpdate(address, Optional.of(metadata), status);
  }
}
