package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.ban;
import static io.leasehold.statemachine.core.Cmds.policy;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static io.leasehold.statemachine.core.Cmds.unban;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.CopyGlobal;
import io.leasehold.proto.v1.CopyGlobalResponse;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.RejectReason;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The global state and its copies (log format 6, docs/design/multi-raft.md, "Global state"): the
 * meta group versions its policies, bans and roles by the last entry that changed them; a lease
 * group takes the meta group's whole global state as a copy, keeps only the newest, and ends a
 * newly banned holder's leases in its own entry.
 */
abstract class GlobalCopyContract extends LeaseGroupFixture {
  private static LogCommand.Builder copy(CopyGlobal state) {
    return LogCommand.newBuilder().setCopyGlobal(state);
  }

  /** The meta group's state as a node sends it, applied in the lease group. */
  private CopyGlobalResponse copyToGroup() throws IOException {
    LogReply reply = toGroup(copy(core.globalState()));
    assertTrue(reply.hasCopyGlobal(), reply::toString);
    return reply.getCopyGlobal();
  }

  @Test
  void theMetaGroupVersionsItsGlobalStateByTheLastEntryThatChangedIt() throws IOException {
    assertEquals(0, core.globalVersion(), "nothing before format 6");
    apply(1, T0, format());
    assertEquals(1, core.globalVersion(), "the state held when format 6 begins is a version");
    apply(2, T0, setPolicy("lock", policy().setMaxTtl(secs(30))));
    assertEquals(2, core.globalVersion());
    apply(3, T0, acquire("lock/a", "alice"));
    invalid(apply(4, T0, setPolicy("a/b", policy())));
    assertEquals(2, core.globalVersion(), "a lease and an invalid command change nothing global");
    apply(5, T0, ban("mallory", "abuse"));
    assertEquals(5, core.globalVersion());
    assertEquals(5, core.globalState().getVersion());
    assertEquals(5, new LeaseCore(store).globalVersion(), "kept on reload");
  }

  @Test
  void aLeaseGroupAppliesTheCopiedPoliciesAndRoles() throws IOException {
    apply(1, T0, format());
    apply(2, T0, setPolicy("lock", policy().setMinTtl(secs(5)).setMaxTtl(secs(60))));
    apply(
        3,
        T0,
        LogCommand.newBuilder()
            .setAddRole(
                AddRoleRequest.newBuilder()
                    .setRole(
                        AuthRole.newBuilder()
                            .setName("locker")
                            .setPermission(Permission.CLIENT)
                            .addPrefixes("lock/"))));
    apply(
        4,
        T0,
        LogCommand.newBuilder()
            .setGrantRole(GrantRoleRequest.newBuilder().setIdentity("worker").setRole("locker")));

    LogReply before = toGroup(acquire("lock/a", "alice", secs(600)));
    assertEquals(Outcome.GRANTED, before.getAcquire().getOutcome(), "no policy copied yet");

    CopyGlobalResponse copied = copyToGroup();
    assertTrue(copied.getApplied());
    assertEquals(4, copied.getVersion());
    assertEquals(4, group.globalVersion());
    LogReply refused = toGroup(acquire("lock/b", "alice", secs(600)));
    assertEquals(Outcome.REJECTED, refused.getAcquire().getOutcome(), refused::toString);
    assertEquals(RejectReason.TTL_OUT_OF_RANGE, refused.getAcquire().getRejection().getReason());
    assertEquals(List.of("locker"), group.access().grants().get("worker"));
    assertTrue(group.access().roles().containsKey("locker"));

    LeaseCore reloaded = new LeaseCore(groupStore, 1);
    assertEquals(4, reloaded.globalVersion(), "the copy survives a reload");
    assertEquals(List.of("locker"), reloaded.access().grants().get("worker"));
  }

  @Test
  void aCopiedBanEndsTheHoldersLeasesInTheGroupAndAnUnbanLiftsIt() throws IOException {
    apply(1, T0, format());
    long token = toGroup(acquire("lock/a", "mallory")).getAcquire().getLease().getToken();
    assertTrue(token > 0);
    apply(2, T0, ban("mallory", "abuse"));

    CopyGlobalResponse copied = copyToGroup();
    assertEquals(1, copied.getBansAdded());
    assertEquals(1, copied.getLeasesEnded());
    assertFalse(group.query(getOf("lock/a"), T0).getGet().getFound(), "lease ended");
    LogReply refused = toGroup(acquire("lock/b", "mallory"));
    assertEquals(RejectReason.BANNED, refused.getAcquire().getRejection().getReason());

    apply(3, T0, unban("mallory"));
    CopyGlobalResponse lifted = copyToGroup();
    assertEquals(0, lifted.getBansAdded());
    assertEquals(Outcome.GRANTED, toGroup(acquire("lock/b", "mallory")).getAcquire().getOutcome());
  }

  @Test
  void anOlderOrRepeatedCopyChangesNothing() throws IOException {
    apply(1, T0, format());
    CopyGlobal first = core.globalState();
    apply(2, T0, ban("mallory", "abuse"));
    CopyGlobal second = core.globalState();

    assertTrue(toGroup(copy(second)).getCopyGlobal().getApplied());
    CopyGlobalResponse late = toGroup(copy(first)).getCopyGlobal();
    assertFalse(late.getApplied(), "an older copy comes late");
    assertEquals(2, late.getVersion());
    assertFalse(toGroup(copy(second)).getCopyGlobal().getApplied(), "sent twice");
    assertEquals(
        RejectReason.BANNED,
        toGroup(acquire("lock/x", "mallory")).getAcquire().getRejection().getReason(),
        "the ban the newer copy carried still holds");
  }

  @Test
  void globalCommandsBelongToTheMetaGroupAndCopiesToLeaseGroups() throws IOException {
    apply(1, T0, format());
    assertEquals("command", toGroup(setPolicy("lock", policy())).getInvalid().getField());
    assertEquals("command", toGroup(ban("mallory", "abuse")).getInvalid().getField());
    assertEquals("copy_global", invalid(apply(2, T0, copy(core.globalState()))).getField());
    assertEquals(
        "copy_global.version",
        toGroup(copy(CopyGlobal.newBuilder().build())).getInvalid().getField());
    assertEquals(
        "copy_global.policies",
        toGroup(
                copy(
                    CopyGlobal.newBuilder()
                        .setVersion(9)
                        .putPolicies("a/b", io.leasehold.proto.v1.StoredPolicy.getDefaultInstance())
                        .build()))
            .getInvalid()
            .getField());
    assertEquals(0, group.globalVersion(), "refused copies change nothing");
  }

  private static io.leasehold.proto.v1.ReadQuery getOf(String name) {
    return io.leasehold.proto.v1.ReadQuery.newBuilder()
        .setGet(io.leasehold.proto.v1.GetRequest.newBuilder().setName(name))
        .build();
  }
}
