package io.leasehold.client;

import java.util.Objects;
import java.util.Optional;

/**
 * A member of the Raft configuration.
 *
 * @param id the member's id
 * @param peerAddress its Raft address
 * @param clientAddress its gRPC API address, when known
 */
public record ClusterMember(String id, String peerAddress, Optional<String> clientAddress) {
  /**
   * Checks that every field is given.
   *
   * @param id the member's id
   * @param peerAddress its Raft address
   * @param clientAddress its gRPC API address, when known
   */
  public ClusterMember {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(peerAddress, "peerAddress");
    Objects.requireNonNull(clientAddress, "clientAddress");
  }
}
