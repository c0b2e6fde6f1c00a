package io.leasehold.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.statemachine.core.AccessView;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Rules checked on requests directly, without a cluster. */
class AccessRulesTest {
  private static final AuthRole READER =
      AuthRole.newBuilder()
          .setName("reader")
          .setPermission(Permission.READER)
          .setBuiltIn(true)
          .build();
  private static final AuthRole CLIENT =
      AuthRole.newBuilder()
          .setName("client")
          .setPermission(Permission.CLIENT)
          .setBuiltIn(true)
          .build();

  /**
   * Found by the API fuzz test: a Renew without items named no lease, so it passed for an identity
   * with no role at all.
   */
  @Test
  void aRequestThatNamesNothingStillNeedsThePermission() {
    AccessRules.Rule renew =
        AccessRules.of(LeasesGrpc.getRenewMethod().getFullMethodName()).orElseThrow();
    RenewRequest empty = RenewRequest.getDefaultInstance();
    Optional<String> none =
        AccessRules.denial(renew, empty, new AccessView.Access("h4", List.of()));
    assertTrue(none.isPresent(), "an identity without roles may not renew");
    assertEquals("h4 has no client role", none.get());
    assertTrue(
        AccessRules.denial(renew, empty, new AccessView.Access("h3", List.of(READER))).isPresent(),
        "a reader may not renew");
    assertEquals(
        Optional.empty(),
        AccessRules.denial(renew, empty, new AccessView.Access("h2", List.of(CLIENT))),
        "a client's empty Renew goes on to the handler, which says what is wrong with it");
  }
}
