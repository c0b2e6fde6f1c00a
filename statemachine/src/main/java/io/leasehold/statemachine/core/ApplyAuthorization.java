package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.RenewItem;
import java.util.Locale;

/**
 * The roles checked again where a command is applied, at its place in the log: a grant revoked
 * before the entry applies no longer lets it through, even if the node that accepted the call had
 * not yet applied the revocation when it checked. Every replica decides alike (the roles are
 * replicated state). Before any identity holds an admin role over every name, no role can have been
 * granted, and only the node's initial admin passed the API: nothing is checked then.
 */
final class ApplyAuthorization {
  private ApplyAuthorization() {}

  static void check(AccessView view, String caller, LogCommand c) {
    if (caller.isEmpty() || !view.hasUnrestrictedAdmin()) {
      return;
    }
    AccessView.Access access = view.access(caller, "");
    switch (c.getCommandCase()) {
      case ACQUIRE -> name(access, Permission.CLIENT, "name", c.getAcquire().getName());
      case ACQUIRE_MANY -> {
        for (int i = 0; i < c.getAcquireMany().getItemsCount(); i++) {
          name(
              access,
              Permission.CLIENT,
              "items[" + i + "].name",
              c.getAcquireMany().getItems(i).getName());
        }
      }
      case RENEW -> {
        for (int i = 0; i < c.getRenew().getItemsCount(); i++) {
          RenewItem item = c.getRenew().getItems(i);
          name(access, Permission.CLIENT, "items[" + i + "].name", item.getName());
        }
      }
      case RELEASE -> name(access, Permission.CLIENT, "name", c.getRelease().getName());
      case TRANSFER -> name(access, Permission.CLIENT, "name", c.getTransfer().getName());
      case UPDATE -> name(access, Permission.CLIENT, "name", c.getUpdate().getName());
      case REVOKE -> name(access, Permission.ADMIN, "name", c.getRevoke().getName());
      case SET_POLICY -> namespace(access, c.getSetPolicy().getNamespace());
      case DELETE_POLICY -> namespace(access, c.getDeletePolicy().getNamespace());
      case BAN, UNBAN, ADD_ROLE, REMOVE_ROLE, GRANT_ROLE, REVOKE_ROLE -> everything(access);
      default -> {} // the node's own commands, and audit records of calls the API already decided
    }
  }

  /** Whether the identity may act on a name as an admin (always, before any admin role exists). */
  static boolean admin(AccessView view, String identity, String name) {
    return !view.hasUnrestrictedAdmin() || view.access(identity, "").onName(Permission.ADMIN, name);
  }

  /**
   * Whether the identity may act on every name as an admin (always, before any admin role exists).
   */
  static boolean adminOverEverything(AccessView view, String identity) {
    return !view.hasUnrestrictedAdmin() || view.access(identity, "").onEverything(Permission.ADMIN);
  }

  private static void name(AccessView.Access access, Permission p, String field, String name) {
    if (!access.onName(p, name)) {
      throw denied(
          field,
          access.identity()
              + " holds no "
              + role(p)
              + " role over "
              + name
              + " at this entry's place in the log");
    }
  }

  private static void namespace(AccessView.Access access, String namespace) {
    if (namespace.isEmpty()) {
      everything(access);
    } else if (!access.onPrefix(Permission.ADMIN, namespace + "/")) {
      throw denied(
          "namespace",
          access.identity()
              + " holds no admin role over "
              + namespace
              + "/ at this entry's place in the log");
    }
  }

  private static void everything(AccessView.Access access) {
    if (!access.onEverything(Permission.ADMIN)) {
      throw denied(
          "command",
          access.identity()
              + " holds no admin role over every name at this entry's place in the log");
    }
  }

  private static String role(Permission p) {
    return p.name().toLowerCase(Locale.ROOT);
  }

  private static RefusedException denied(String field, String message) {
    return new RefusedException(RefusedException.Kind.PERMISSION_DENIED, field, message);
  }
}
