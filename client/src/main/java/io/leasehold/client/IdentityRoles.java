package io.leasehold.client;

import java.util.List;

/**
 * An identity and the names of the roles granted to it.
 *
 * @param identity the identity
 * @param roles the names of its roles
 */
public record IdentityRoles(String identity, List<String> roles) {
  /**
   * Copies the roles.
   *
   * @param identity the identity
   * @param roles the names of its roles
   */
  public IdentityRoles {
    roles = List.copyOf(roles);
  }
}
