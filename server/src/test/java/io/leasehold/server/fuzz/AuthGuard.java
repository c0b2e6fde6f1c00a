package io.leasehold.server.fuzz;

import com.google.protobuf.Message;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.RevokeRoleRequest;
import java.util.Set;

/**
 * Keeps the variant's identities what the variant says they are: no fuzzed request changes their
 * grants, so what each may call ({@link FuzzVariant.Identity#mayCall}) holds for the whole run and
 * the replay. A GrantRole or RevokeRole naming one of them is sent for an outsider instead (the
 * identity with "-outsider" appended, which no channel of the run presents).
 *
 * <p>Nothing else needs changing: the variant's identities hold built-in roles only, and the server
 * refuses any AddRole or RemoveRole of a built-in role (INVALID_ARGUMENT); those requests are sent
 * as generated, and a built-in role the server did change would show in the state compared ({@link
 * ClusterState}) and in the calls the identities are refused afterwards.
 */
final class AuthGuard {
  private AuthGuard() {}

  static final String OUTSIDER_SUFFIX = "-outsider";

  /** The request as it may be sent, for a run whose identities are {@code identities}. */
  static Message guard(Message request, Set<String> identities) {
    if (request instanceof GrantRoleRequest g && identities.contains(g.getIdentity())) {
      return g.toBuilder().setIdentity(g.getIdentity() + OUTSIDER_SUFFIX).build();
    }
    if (request instanceof RevokeRoleRequest r && identities.contains(r.getIdentity())) {
      return r.toBuilder().setIdentity(r.getIdentity() + OUTSIDER_SUFFIX).build();
    }
    return request;
  }
}
