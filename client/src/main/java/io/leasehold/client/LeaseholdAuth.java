package io.leasehold.client;

import io.leasehold.client.internal.AuthCalls;
import io.leasehold.client.internal.ClientCore;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Identities, roles and the audit history ({@link LeaseholdClient#auth()}). Roles and grants are
 * replicated; the cluster refuses a change that would leave no identity with an admin role over
 * every name. Everything but {@link #whoAmI()} needs such an admin role when authentication is on.
 */
public final class LeaseholdAuth {
  private final AuthCalls calls;

  LeaseholdAuth(ClientCore core) {
    this.calls = new AuthCalls(core);
  }

  /**
   * Who the cluster takes this client to be, and the roles it holds.
   *
   * @return completes with the caller's identity and roles
   */
  public CompletableFuture<CallerIdentity> whoAmI() {
    return calls.whoAmI();
  }

  /**
   * Creates role {@code name}, or replaces it: {@code permission} over the names starting with one
   * of {@code prefixes} (none: every name). Completes with the role as stored.
   *
   * @param name the role's name
   * @param permission what the role allows
   * @param prefixes the names it covers, each a prefix (empty list: every name)
   * @return completes with the role as stored
   */
  public CompletableFuture<AuthRole> addRole(
      String name, Permission permission, List<String> prefixes) {
    return calls.addRole(name, permission, prefixes);
  }

  /**
   * Removes role {@code name}; completes with whether it existed. Refused while an identity holds
   * it.
   *
   * @param name the role's name
   * @return completes with whether it existed
   */
  public CompletableFuture<Boolean> removeRole(String name) {
    return calls.removeRole(name);
  }

  /**
   * Every role, the built-in ones included, by name.
   *
   * @return completes with the roles
   */
  public CompletableFuture<List<AuthRole>> roles() {
    return calls.roles();
  }

  /**
   * Grants {@code role} to {@code identity}; completes with whether it was granted before.
   *
   * @param identity the identity to grant the role to
   * @param role the role's name
   * @return completes with whether it was granted before
   */
  public CompletableFuture<Boolean> grant(String identity, String role) {
    return calls.grant(identity, role);
  }

  /**
   * Takes {@code role} from {@code identity}; completes with whether it held it. Refused when it
   * would leave no identity with an admin role over every name.
   *
   * @param identity the identity to take the role from
   * @param role the role's name
   * @return completes with whether the identity held the role
   */
  public CompletableFuture<Boolean> revoke(String identity, String role) {
    return calls.revoke(identity, role);
  }

  /**
   * Every identity that holds a role, with its roles, by identity.
   *
   * @return completes with the identities and their roles
   */
  public CompletableFuture<List<IdentityRoles>> grants() {
    return calls.grants();
  }

  /**
   * The roles of {@code identity} (empty: of every identity).
   *
   * @param identity whose roles to list ({@code ""}: every identity's)
   * @return completes with the identities and their roles
   */
  public CompletableFuture<List<IdentityRoles>> grants(String identity) {
    return calls.grants(identity);
  }

  /**
   * The audit history, newest first: at most {@code limit} records (0: all that is kept), of {@code
   * identity}'s actions only unless it is empty.
   *
   * @param limit the most entries to return (0: all that are kept)
   * @param identity whose actions to list ({@code ""}: everyone's)
   * @return completes with the audit records, newest first
   */
  public CompletableFuture<List<AuditRecord>> audit(int limit, String identity) {
    return calls.audit(limit, identity);
  }
}
