package io.leasehold.client;

import java.util.List;

/**
 * A role: a permission over lease names.
 *
 * @param name the role's name
 * @param permission what it allows
 * @param prefixes the names it covers, each a prefix; empty: every name (cluster-wide actions need
 *     that)
 * @param builtIn whether it is one of the built-in roles {@code reader}, {@code client} and {@code
 *     admin}, which cover every name and never change
 * @param revision the entry that last set it; 0 for built-in roles
 */
public record AuthRole(
    String name, Permission permission, List<String> prefixes, boolean builtIn, long revision) {
  /**
   * Checks the fields and copies the prefixes.
   *
   * @param name the role's name
   * @param permission what it allows
   * @param prefixes the names it covers, each a prefix; empty: every name (cluster-wide actions
   *     need that)
   * @param builtIn whether it is one of the built-in roles {@code reader}, {@code client} and
   *     {@code admin}, which cover every name and never change
   * @param revision the entry that last set it; 0 for built-in roles
   */
  public AuthRole {
    prefixes = List.copyOf(prefixes);
  }
}
