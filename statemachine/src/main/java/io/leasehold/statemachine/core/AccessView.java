package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.Permission;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The roles and grants as of one applied entry: immutable, so the API's threads read it without
 * locks while the apply thread builds the next one. What an identity may do is the union of its
 * roles: a permission (each includes those below it) over every name or over name prefixes.
 */
public final class AccessView {
  public static final String READER = "reader";
  public static final String CLIENT = "client";
  public static final String ADMIN = "admin";

  /** The roles that always exist, over every name, and cannot be changed or removed. */
  static final SortedMap<String, AuthRole> BUILT_IN = builtIn();

  static final AccessView EMPTY = new AccessView(BUILT_IN, new TreeMap<>());

  private final SortedMap<String, AuthRole> roles;
  private final SortedMap<String, List<String>> grants;

  AccessView(SortedMap<String, AuthRole> roles, SortedMap<String, List<String>> grants) {
    this.roles = Collections.unmodifiableSortedMap(roles);
    this.grants = Collections.unmodifiableSortedMap(grants);
  }

  private static SortedMap<String, AuthRole> builtIn() {
    SortedMap<String, AuthRole> m = new TreeMap<>();
    m.put(
        READER,
        AuthRole.newBuilder()
            .setName(READER)
            .setPermission(Permission.READER)
            .setBuiltIn(true)
            .build());
    m.put(
        CLIENT,
        AuthRole.newBuilder()
            .setName(CLIENT)
            .setPermission(Permission.CLIENT)
            .setBuiltIn(true)
            .build());
    m.put(
        ADMIN,
        AuthRole.newBuilder()
            .setName(ADMIN)
            .setPermission(Permission.ADMIN)
            .setBuiltIn(true)
            .build());
    return m;
  }

  /** Every role, the built-in ones included, by name. */
  public SortedMap<String, AuthRole> roles() {
    return roles;
  }

  /** Each identity holding a role, with its role names (sorted). */
  public SortedMap<String, List<String>> grants() {
    return grants;
  }

  /** Whether some identity holds an admin role over every name: the cluster can be administered. */
  public boolean hasUnrestrictedAdmin() {
    for (Map.Entry<String, List<String>> g : grants.entrySet()) {
      if (g.getValue().stream().map(roles::get).anyMatch(AccessView::unrestrictedAdmin)) {
        return true;
      }
    }
    return false;
  }

  static boolean unrestrictedAdmin(AuthRole r) {
    return r != null && r.getPermission() == Permission.ADMIN && r.getPrefixesCount() == 0;
  }

  /**
   * What {@code identity} may do. {@code initialAdmin}, if not empty, is an admin over every name
   * as long as no identity holds such a role: the bootstrap, before its grant is applied.
   */
  public Access access(String identity, String initialAdmin) {
    List<AuthRole> held = new ArrayList<>();
    for (String name : grants.getOrDefault(identity, List.of())) {
      AuthRole r = roles.get(name);
      if (r != null) {
        held.add(r);
      }
    }
    if (!initialAdmin.isEmpty() && identity.equals(initialAdmin) && !hasUnrestrictedAdmin()) {
      held.add(BUILT_IN.get(ADMIN));
    }
    return new Access(identity, List.copyOf(held));
  }

  /** One identity's roles, and the questions the authorization point asks of them. */
  public record Access(String identity, List<AuthRole> roles) {
    /** May act with {@code permission} on the lease {@code name}. */
    public boolean onName(Permission permission, String name) {
      return roles.stream()
          .anyMatch(
              r ->
                  covers(r, permission)
                      && (r.getPrefixesCount() == 0
                          || r.getPrefixesList().stream().anyMatch(name::startsWith)));
    }

    /** May act with {@code permission} on every name that starts with {@code prefix}. */
    public boolean onPrefix(Permission permission, String prefix) {
      return onName(permission, prefix);
    }

    /** May act with {@code permission} over every name: what cluster-wide actions need. */
    public boolean onEverything(Permission permission) {
      return roles.stream().anyMatch(r -> covers(r, permission) && r.getPrefixesCount() == 0);
    }

    /** Holds {@code permission} over some names at least. */
    public boolean onSome(Permission permission) {
      return roles.stream().anyMatch(r -> covers(r, permission));
    }

    private static boolean covers(AuthRole r, Permission wanted) {
      return r.getPermissionValue() >= wanted.getNumber();
    }
  }
}
