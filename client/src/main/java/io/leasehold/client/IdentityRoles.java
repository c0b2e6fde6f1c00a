package io.leasehold.client;

import java.util.List;

/** An identity and the names of the roles granted to it. */
public record IdentityRoles(String identity, List<String> roles) {
  /** Checks the fields and copies the roles. */
  public IdentityRoles {
    roles = List.copyOf(roles);
  }
}
