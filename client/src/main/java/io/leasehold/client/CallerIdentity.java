package io.leasehold.client;

import java.util.List;

/**
 * Who the cluster takes this client to be ({@link LeaseholdAuth#whoAmI()}).
 *
 * @param identity the authenticated identity; empty when the node has authentication off
 * @param authenticatedBy {@code certificate}, {@code token}, or empty when authentication is off
 * @param authenticationEnabled whether the node authenticates requests
 * @param roles the roles the identity holds
 */
public record CallerIdentity(
    String identity, String authenticatedBy, boolean authenticationEnabled, List<AuthRole> roles) {
  /**
   * Checks the fields and copies the roles.
   *
   * @param identity the authenticated identity; empty when the node has authentication off
   * @param authenticatedBy {@code certificate}, {@code token}, or empty when authentication is off
   * @param authenticationEnabled whether the node authenticates requests
   * @param roles the roles the identity holds
   */
  public CallerIdentity {
    roles = List.copyOf(roles);
  }
}
