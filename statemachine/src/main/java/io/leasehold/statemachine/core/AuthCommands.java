package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AddRoleResponse;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.BootstrapAdmin;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.GrantRoleResponse;
import io.leasehold.proto.v1.IdentityGrants;
import io.leasehold.proto.v1.ListGrantsRequest;
import io.leasehold.proto.v1.ListGrantsResponse;
import io.leasehold.proto.v1.ListRolesRequest;
import io.leasehold.proto.v1.ListRolesResponse;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.RemoveRoleRequest;
import io.leasehold.proto.v1.RemoveRoleResponse;
import io.leasehold.proto.v1.RevokeRoleRequest;
import io.leasehold.proto.v1.RevokeRoleResponse;
import io.leasehold.proto.v1.StoredGrants;
import io.leasehold.proto.v1.StoredRole;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.ReadView;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The replicated roles and grants: applies the auth commands and keeps the {@link AccessView} the
 * API authorizes against, replaced as a whole after each change. Every command that would leave no
 * identity with an admin role over every name is refused, so the cluster never locks its operators
 * out.
 */
final class AuthCommands {
  static final int MAX_ROLE_NAME_CHARS = 64;
  static final int MAX_PREFIXES = 64;
  private static final Pattern ROLE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

  private final KvStore store;
  private volatile AccessView view = AccessView.EMPTY;

  AuthCommands(KvStore store) {
    this.store = store;
  }

  AccessView view() {
    return view;
  }

  void load() {
    SortedMap<String, List<String>> grants = new TreeMap<>();
    SortedMap<String, AuthRole> roles =
        store.read(
            v -> {
              v.scan(
                  Space.AUTH_GRANTS,
                  new byte[0],
                  new byte[0],
                  (key, value) -> {
                    grants.put(
                        new String(key, StandardCharsets.UTF_8),
                        List.copyOf(parseGrants(value).getRolesList()));
                    return true;
                  });
              return roles(v);
            });
    view = new AccessView(roles, grants);
  }

  AddRoleResponse addRole(Tx tx, AddRoleRequest r) {
    AuthRole asked = r.getRole();
    roleName("role.name", asked.getName());
    if (AccessView.BUILT_IN.containsKey(asked.getName())) {
      throw new InvalidArgumentException(
          "role.name", "\"" + asked.getName() + "\" is a built-in role and cannot be changed");
    }
    if (asked.getPermission() == Permission.PERMISSION_UNSPECIFIED
        || asked.getPermission() == Permission.UNRECOGNIZED) {
      throw new InvalidArgumentException(
          "role.permission", "must be READER, CLIENT or ADMIN, got " + asked.getPermissionValue());
    }
    if (asked.getPrefixesCount() > MAX_PREFIXES) {
      throw new InvalidArgumentException(
          "role.prefixes",
          "at most " + MAX_PREFIXES + " prefixes, got " + asked.getPrefixesCount());
    }
    TreeSet<String> prefixes = new TreeSet<>();
    for (int i = 0; i < asked.getPrefixesCount(); i++) {
      String p = asked.getPrefixes(i);
      if (p.isEmpty()) {
        throw new InvalidArgumentException(
            "role.prefixes[" + i + "]",
            "must not be empty (a role without prefixes covers every name)");
      }
      Validation.printable("role.prefixes[" + i + "]", p, Limits.MAX_NAME_BYTES);
      prefixes.add(p);
    }
    StoredRole stored =
        StoredRole.newBuilder()
            .setPermission(asked.getPermission())
            .addAllPrefixes(prefixes)
            .setRevision(tx.index)
            .build();
    AuthRole role = role(asked.getName(), stored);
    SortedMap<String, AuthRole> roles = new TreeMap<>(view.roles());
    boolean replaced = roles.put(role.getName(), role) != null;
    AccessView next = new AccessView(roles, new TreeMap<>(view.grants()));
    keepsAnAdmin(
        next,
        "role",
        "role "
            + role.getName()
            + " is the only admin role over every name that an identity holds");
    tx.extra.add(Change.put(Space.AUTH_ROLES, utf8(role.getName()), stored.toByteArray()));
    tx.afterCommit(() -> view = next);
    return AddRoleResponse.newBuilder()
        .setRole(role)
        .setReplaced(replaced)
        .setRevision(tx.index)
        .build();
  }

  RemoveRoleResponse removeRole(Tx tx, RemoveRoleRequest r) {
    roleName("name", r.getName());
    if (AccessView.BUILT_IN.containsKey(r.getName())) {
      throw new InvalidArgumentException(
          "name", "\"" + r.getName() + "\" is a built-in role and cannot be removed");
    }
    boolean existed = view.roles().containsKey(r.getName());
    if (existed) {
      List<String> holders =
          view.grants().entrySet().stream()
              .filter(g -> g.getValue().contains(r.getName()))
              .map(Map.Entry::getKey)
              .toList();
      if (!holders.isEmpty()) {
        throw new RefusedException(
            RefusedException.Kind.FAILED_PRECONDITION,
            "name",
            "role "
                + r.getName()
                + " is granted to "
                + holders.size()
                + " identit"
                + (holders.size() == 1 ? "y" : "ies")
                + " ("
                + String.join(", ", holders.subList(0, Math.min(5, holders.size())))
                + (holders.size() > 5 ? ", …" : "")
                + "); revoke it first");
      }
      SortedMap<String, AuthRole> roles = new TreeMap<>(view.roles());
      roles.remove(r.getName());
      AccessView next = new AccessView(roles, new TreeMap<>(view.grants()));
      tx.extra.add(Change.delete(Space.AUTH_ROLES, utf8(r.getName())));
      tx.afterCommit(() -> view = next);
    }
    return RemoveRoleResponse.newBuilder().setExisted(existed).setRevision(tx.index).build();
  }

  GrantRoleResponse grantRole(Tx tx, GrantRoleRequest r) {
    Validation.holder("identity", r.getIdentity());
    roleName("role", r.getRole());
    if (!view.roles().containsKey(r.getRole())) {
      throw new RefusedException(
          RefusedException.Kind.FAILED_PRECONDITION,
          "role",
          "no role named " + r.getRole() + "; add it first");
    }
    return grant(tx, r.getIdentity(), r.getRole());
  }

  private GrantRoleResponse grant(Tx tx, String identity, String role) {
    List<String> held = view.grants().getOrDefault(identity, List.of());
    if (held.contains(role)) {
      return GrantRoleResponse.newBuilder().setAlreadyGranted(true).setRevision(tx.index).build();
    }
    TreeSet<String> now = new TreeSet<>(held);
    now.add(role);
    putGrants(tx, identity, now);
    return GrantRoleResponse.newBuilder().setRevision(tx.index).build();
  }

  RevokeRoleResponse revokeRole(Tx tx, RevokeRoleRequest r) {
    Validation.holder("identity", r.getIdentity());
    roleName("role", r.getRole());
    List<String> held = view.grants().getOrDefault(r.getIdentity(), List.of());
    if (!held.contains(r.getRole())) {
      return RevokeRoleResponse.newBuilder().setRevision(tx.index).build();
    }
    TreeSet<String> now = new TreeSet<>(held);
    now.remove(r.getRole());
    SortedMap<String, List<String>> grants = new TreeMap<>(view.grants());
    if (now.isEmpty()) {
      grants.remove(r.getIdentity());
    } else {
      grants.put(r.getIdentity(), List.copyOf(now));
    }
    keepsAnAdmin(
        new AccessView(new TreeMap<>(view.roles()), grants),
        "role",
        r.getIdentity()
            + " is the last identity with an admin role over every name; grant one to another identity first");
    putGrants(tx, r.getIdentity(), now);
    return RevokeRoleResponse.newBuilder().setWasGranted(true).setRevision(tx.index).build();
  }

  /**
   * Grants the initial admin the admin role, unless some identity already holds an admin role over
   * every name.
   */
  GrantRoleResponse bootstrapAdmin(Tx tx, BootstrapAdmin c) {
    Validation.holder("identity", c.getIdentity());
    if (view.hasUnrestrictedAdmin()) {
      return GrantRoleResponse.newBuilder().setAlreadyGranted(true).setRevision(tx.index).build();
    }
    return grant(tx, c.getIdentity(), AccessView.ADMIN);
  }

  private void putGrants(Tx tx, String identity, TreeSet<String> roles) {
    SortedMap<String, List<String>> grants = new TreeMap<>(view.grants());
    if (roles.isEmpty()) {
      grants.remove(identity);
      tx.extra.add(Change.delete(Space.AUTH_GRANTS, utf8(identity)));
    } else {
      grants.put(identity, List.copyOf(roles));
      tx.extra.add(
          Change.put(
              Space.AUTH_GRANTS,
              utf8(identity),
              StoredGrants.newBuilder().addAllRoles(roles).build().toByteArray()));
    }
    AccessView next = new AccessView(new TreeMap<>(view.roles()), grants);
    tx.afterCommit(() -> view = next);
  }

  /** Refuses a change that leaves no admin over every name, if there was one before it. */
  private void keepsAnAdmin(AccessView next, String field, String message) {
    if (view.hasUnrestrictedAdmin() && !next.hasUnrestrictedAdmin()) {
      throw new RefusedException(RefusedException.Kind.FAILED_PRECONDITION, field, message);
    }
  }

  // ---- reads, from one consistent store view (so safe on any thread) ----

  ListRolesResponse listRoles(ListRolesRequest r) {
    return store.read(
        v ->
            ListRolesResponse.newBuilder()
                .addAllRoles(roles(v).values())
                .setRevision(v.applied().index())
                .build());
  }

  ListGrantsResponse listGrants(ListGrantsRequest r) {
    if (!r.getIdentity().isEmpty()) {
      Validation.holder("identity", r.getIdentity());
    }
    return store.read(
        v -> {
          ListGrantsResponse.Builder b =
              ListGrantsResponse.newBuilder().setRevision(v.applied().index());
          if (!r.getIdentity().isEmpty()) {
            v.get(Space.AUTH_GRANTS, utf8(r.getIdentity()))
                .ifPresent(
                    value ->
                        b.addGrants(
                            IdentityGrants.newBuilder()
                                .setIdentity(r.getIdentity())
                                .addAllRoles(parseGrants(value).getRolesList())));
            return b.build();
          }
          v.scan(
              Space.AUTH_GRANTS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                b.addGrants(
                    IdentityGrants.newBuilder()
                        .setIdentity(new String(key, StandardCharsets.UTF_8))
                        .addAllRoles(parseGrants(value).getRolesList()));
                return true;
              });
          return b.build();
        });
  }

  /** Every role in {@code v}, the built-in ones included, by name. */
  private static SortedMap<String, AuthRole> roles(ReadView v) {
    SortedMap<String, AuthRole> roles = new TreeMap<>(AccessView.BUILT_IN);
    v.scan(
        Space.AUTH_ROLES,
        new byte[0],
        new byte[0],
        (key, value) -> {
          String name = new String(key, StandardCharsets.UTF_8);
          roles.put(name, role(name, parseRole(value)));
          return true;
        });
    return roles;
  }

  static void roleName(String field, String name) {
    if (name.isEmpty()) {
      throw new InvalidArgumentException(field, "must not be empty");
    }
    if (name.length() > MAX_ROLE_NAME_CHARS || !ROLE_NAME.matcher(name).matches()) {
      throw new InvalidArgumentException(
          field,
          "must be 1-"
              + MAX_ROLE_NAME_CHARS
              + " characters of letters, digits, '.', '_' and '-', starting with a letter or digit");
    }
  }

  private static AuthRole role(String name, StoredRole stored) {
    return AuthRole.newBuilder()
        .setName(name)
        .setPermission(stored.getPermission())
        .addAllPrefixes(stored.getPrefixesList())
        .setRevision(stored.getRevision())
        .build();
  }

  private static StoredRole parseRole(byte[] bytes) {
    try {
      return StoredRole.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt role record", e);
    }
  }

  private static StoredGrants parseGrants(byte[] bytes) {
    try {
      return StoredGrants.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt grants record", e);
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
