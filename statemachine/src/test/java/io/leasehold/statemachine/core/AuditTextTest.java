package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.Policy;
import org.junit.jupiter.api.Test;

/**
 * The audit history reads alike whatever shape a record was stored in: actions in snake_case,
 * details as key=value pairs.
 */
class AuditTextTest {
  static AuditEntry read(String action, String outcome, String detail) {
    return AuditText.forReading(
        AuditEntry.newBuilder().setAction(action).setOutcome(outcome).setDetail(detail).build());
  }

  @Test
  void aRefusedCallIsNamedLikeTheAppliedOnesAndItsDetailNamesTheMethod() {
    AuditEntry e =
        read("SetPolicy", "denied: runner-1 has no admin role", "leasehold.v1.Admin/SetPolicy");
    assertEquals("set_policy", e.getAction());
    assertEquals("method=leasehold.v1.Admin/SetPolicy", e.getDetail());
    assertEquals("revoke", read("Revoke", "denied: no", "leasehold.v1.Admin/Revoke").getAction());
    assertEquals("transfer_leadership", read("TransferLeadership", "denied: no", "x").getAction());
    assertEquals(
        "remove_member", read("remove_member", "ok", "").getAction(), "snake_case stays as it is");
  }

  @Test
  void aPolicyStoredAsProtobufTextReadsAsKeyValuePairs() {
    Policy p =
        Policy.newBuilder()
            .setMinTtl(DurationTextTest.millis(5000))
            .setMaxTtl(DurationTextTest.millis(60_000))
            .setNamePattern("[a-z]+ job")
            .setLockDelay(DurationTextTest.millis(1500))
            .setMaxLeasesPerHolder(3)
            .build();
    String stored = Audits.shortText(p.toString()); // as apply stores it: one line of protobuf text
    assertEquals(
        "min_ttl=5s max_ttl=1m name_pattern=\"[a-z]+ job\" lock_delay=1.5s max_leases_per_holder=3",
        read("set_policy", "ok", stored).getDetail());
    assertEquals(
        "max_ttl=1m",
        read("set_policy", "ok", "max_ttl {   seconds: 60 }").getDetail(),
        "the record in the report");
    assertEquals(
        "min_ttl=5s max_ttl=1m name_pattern=\"abc",
        read(
                "set_policy",
                "ok",
                "min_ttl {   seconds: 5 } max_ttl {   seconds: 60 } name_pattern: \"abc")
            .getDetail(),
        "cut short: what is there, rewritten");
  }

  @Test
  void theOtherActionsDetailsReadAsKeyValuePairs() {
    assertEquals("reason=\"runaway job\"", read("ban", "ok", "runaway job").getDetail());
    assertEquals(
        "token=1280 reason=\"stuck for an hour\"",
        read("revoke", "ok", "token 1280; stuck for an hour").getDetail());
    assertEquals("token=1280", read("revoke", "ok", "token 1280;").getDetail());
    assertEquals("reason=stuck", read("revoke", "ok", "stuck").getDetail());
    assertEquals(
        "permission=CLIENT prefixes=mailbox/,lock/",
        read("add_role", "ok", "CLIENT on mailbox/, lock/").getDetail());
    assertEquals("permission=ADMIN", read("add_role", "ok", "ADMIN on every name").getDetail());
    assertEquals("role=runners", read("grant_role", "ok", "role runners").getDetail());
    assertEquals(
        "peer=127.0.0.1:7401 client=127.0.0.1:7400",
        read("add_member", "ok", "peer 127.0.0.1:7401, client 127.0.0.1:7400").getDetail());
    assertEquals(
        "peer=a:1 client=b:2",
        read("add_member", "ok", "peer=a:1 client=b:2").getDetail(),
        "already key=value");
    assertEquals("", read("take_snapshot", "ok", "").getDetail());
    assertEquals(
        "reason=\"say \\\"no\\\"\"", read("ban", "ok", "say \"no\"").getDetail(), "quotes escaped");
  }
}
