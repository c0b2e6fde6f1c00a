package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static io.leasehold.statemachine.core.Cmds.update;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.AuditRequest;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.BootstrapAdmin;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.ListRolesRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.RemoveRoleRequest;
import io.leasehold.proto.v1.RevokeRoleRequest;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The replicated roles and grants, the holder checks a caller brings, and the audit history, as the
 * core applies them: what every replica decides alike.
 */
class AuthCoreTest extends CoreFixture {
  private long index;

  @Override
  protected KvStore newStore(Path tempDir) {
    return new InMemoryStore();
  }

  private ApplyResult next(LogCommand.Builder c) throws IOException {
    return apply(++index, T0 + index, c);
  }

  private ApplyResult as(String caller, LogCommand.Builder c) throws IOException {
    return next(c.setCaller(caller));
  }

  private void authFormat() throws IOException {
    next(
        LogCommand.newBuilder()
            .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.AUTH)));
    assertEquals(LogFormat.AUTH, core.logFormat());
  }

  private static LogCommand.Builder addRole(String name, Permission p, String... prefixes) {
    return LogCommand.newBuilder()
        .setAddRole(
            AddRoleRequest.newBuilder()
                .setRole(
                    AuthRole.newBuilder()
                        .setName(name)
                        .setPermission(p)
                        .addAllPrefixes(List.of(prefixes))));
  }

  private static LogCommand.Builder grant(String identity, String role) {
    return LogCommand.newBuilder()
        .setGrantRole(GrantRoleRequest.newBuilder().setIdentity(identity).setRole(role));
  }

  private static LogCommand.Builder revokeRole(String identity, String role) {
    return LogCommand.newBuilder()
        .setRevokeRole(RevokeRoleRequest.newBuilder().setIdentity(identity).setRole(role));
  }

  private static LogCommand.Builder bootstrap(String identity) {
    return LogCommand.newBuilder()
        .setBootstrapAdmin(BootstrapAdmin.newBuilder().setIdentity(identity));
  }

  @Test
  void authCommandsBeforeFormat3ChangeNothing() throws IOException {
    LogReply r = next(grant("alice", "admin")).reply();
    assertTrue(r.hasInvalid(), r::toString);
    assertTrue(r.getInvalid().getMessage().contains("log format 3"), r::toString);
    assertTrue(core.access().grants().isEmpty());
  }

  @Test
  void aCallerBeforeFormat3IsIgnoredAsOlderCodeIgnoresIt() throws IOException {
    // Format 2 replicas that predate the caller field apply the entry without it: so must this one.
    next(
        LogCommand.newBuilder()
            .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.BATCHES)));
    long token = granted(next(acquire("lock/a", "bob", secs(30)))).getLease().getToken();
    assertEquals(
        Outcome.RELEASED, as("alice", release("lock/a", token)).reply().getRelease().getOutcome());
  }

  @Test
  void withACallerOnlyTheHolderRenewsReleasesOrUpdatesItsLease() throws IOException {
    authFormat();
    long token = granted(as("bob", acquire("lock/a", "bob", secs(30)))).getLease().getToken();

    LogReply renewed = as("alice", renew("lock/a", token)).reply();
    assertEquals(7, renewed.getRefused().getCode(), renewed::toString);
    assertTrue(
        renewed.getRefused().getMessage().contains("held by bob, not by the caller alice"),
        renewed::toString);
    assertEquals(7, as("alice", release("lock/a", token)).reply().getRefused().getCode());
    assertEquals(7, as("alice", update("lock/a", token, A1)).reply().getRefused().getCode());
    assertEquals(
        7,
        as("alice", acquire("lock/b", "bob", secs(30))).reply().getRefused().getCode(),
        "acquire as another");
    assertEquals(0, held("lock/a").getRenewCount(), "nothing changed");
    assertFalse(record("lock/b").isPresent());

    assertEquals(
        Outcome.RENEWED,
        as("bob", renew("lock/a", token)).reply().getRenew().getResults(0).getOutcome());
    assertEquals(
        Outcome.RELEASED, as("bob", release("lock/a", token)).reply().getRelease().getOutcome());
  }

  @Test
  void theInitialAdminIsGrantedOnceAndTheLastAdminCannotBeRemoved() throws IOException {
    authFormat();
    assertFalse(core.access().hasUnrestrictedAdmin());
    assertFalse(next(bootstrap("root")).reply().getBootstrapAdmin().getAlreadyGranted());
    assertTrue(core.access().hasUnrestrictedAdmin());
    assertTrue(
        next(bootstrap("someone-else")).reply().getBootstrapAdmin().getAlreadyGranted(),
        "only while no admin exists");
    assertFalse(core.access().grants().containsKey("someone-else"));

    LogReply last = as("root", revokeRole("root", "admin")).reply();
    assertEquals(9, last.getRefused().getCode(), last::toString);
    assertTrue(core.access().access("root", "").onEverything(Permission.ADMIN));

    // A custom role that turns the only admin's role into a restricted one is refused too.
    as("root", grant("ops", "admin"));
    assertTrue(
        as("root", revokeRole("root", "admin")).reply().getRevokeRole().getWasGranted(),
        "another admin is left");
    assertEquals(9, as("ops", revokeRole("ops", "admin")).reply().getRefused().getCode());
  }

  @Test
  void customRolesLimitAPermissionToPrefixes() throws IOException {
    authFormat();
    next(bootstrap("root"));
    as("root", addRole("mailbox-client", Permission.CLIENT, "mailbox/"));
    as("root", grant("alice", "mailbox-client"));
    as("root", grant("carol", "reader"));
    AccessView.Access alice = core.access().access("alice", "");
    assertTrue(alice.onName(Permission.CLIENT, "mailbox/7"));
    assertTrue(alice.onPrefix(Permission.READER, "mailbox/"), "client includes reader");
    assertFalse(alice.onName(Permission.CLIENT, "lock/x"));
    assertFalse(alice.onPrefix(Permission.READER, ""), "not over every name");
    assertFalse(alice.onPrefix(Permission.READER, "mail"), "a wider prefix is not narrowed");
    assertFalse(alice.onEverything(Permission.CLIENT));
    AccessView.Access carol = core.access().access("carol", "");
    assertTrue(carol.onPrefix(Permission.READER, ""));
    assertFalse(carol.onName(Permission.CLIENT, "lock/x"));
    assertTrue(core.access().access("nobody", "").roles().isEmpty());

    LogReply removal =
        as(
                "root",
                LogCommand.newBuilder()
                    .setRemoveRole(RemoveRoleRequest.newBuilder().setName("mailbox-client")))
            .reply();
    assertEquals(9, removal.getRefused().getCode(), "refused while granted: " + removal);
    LogReply builtIn = as("root", addRole("admin", Permission.READER)).reply();
    assertTrue(builtIn.hasInvalid(), builtIn::toString);
    LogReply unknown = as("root", grant("dave", "no-such-role")).reply();
    assertEquals(9, unknown.getRefused().getCode(), unknown::toString);
    LogReply badPermission = as("root", addRole("x", Permission.PERMISSION_UNSPECIFIED)).reply();
    assertEquals("role.permission", badPermission.getInvalid().getField());

    // Roles and grants survive a reload from the store (a restart, a snapshot installed).
    core.reload();
    assertTrue(core.access().access("alice", "").onName(Permission.CLIENT, "mailbox/7"));
    assertEquals(
        List.of("admin", "client", "mailbox-client", "reader"),
        query(ReadQuery.newBuilder().setListRoles(ListRolesRequest.getDefaultInstance()), T0)
            .getListRoles()
            .getRolesList()
            .stream()
            .map(AuthRole::getName)
            .toList());
  }

  @Test
  void rolesAreCheckedAgainAtTheEntrysPlaceInTheLog() throws IOException {
    authFormat();
    // Before any admin exists no role can have been granted: entries with a caller pass.
    granted(as("alice", acquire("lock/early", "alice", secs(30))));
    next(bootstrap("root"));
    as("root", grant("alice", "client"));
    long token = granted(as("alice", acquire("lock/a", "alice", secs(30)))).getLease().getToken();
    as("root", revokeRole("alice", "client"));
    // An entry a lagging node accepted before it applied the revocation is refused where it
    // applies.
    LogReply late = as("alice", renew("lock/a", token)).reply();
    assertEquals(7, late.getRefused().getCode(), late::toString);
    assertTrue(
        late.getRefused().getMessage().contains("at this entry's place in the log"),
        late::toString);
    assertEquals(
        7, as("alice", acquire("lock/b", "alice", secs(30))).reply().getRefused().getCode());
    assertEquals(
        7,
        as("alice", setPolicy("lock", io.leasehold.proto.v1.Policy.newBuilder()))
            .reply()
            .getRefused()
            .getCode());
    assertEquals(7, as("alice", grant("alice", "admin")).reply().getRefused().getCode());
    assertFalse(record("lock/b").isPresent());
    // A role over a prefix covers only names under it.
    as("root", addRole("mailbox-client", Permission.CLIENT, "mailbox/"));
    as("root", grant("alice", "mailbox-client"));
    granted(as("alice", acquire("mailbox/1", "alice", secs(30))));
    assertEquals(
        7, as("alice", acquire("lock/c", "alice", secs(30))).reply().getRefused().getCode());
    // The node's own commands carry no caller and are not checked.
    assertTrue(
        next(LogCommand.newBuilder()
                .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.AUTH)))
            .reply()
            .hasSetLogFormat());
  }

  @Test
  void theAuditHistoryRecordsAdminAndAuthActionsWithTheirOutcome() throws IOException {
    authFormat();
    next(bootstrap("root"));
    as("root", setPolicy("lock", io.leasehold.proto.v1.Policy.newBuilder().setMaxTtl(secs(60))));
    as("root", revokeRole("root", "admin")); // refused: the last admin
    as("root", acquire("lock/a", "root", secs(30))); // not an admin action
    List<AuditEntry> audit =
        query(ReadQuery.newBuilder().setAudit(AuditRequest.getDefaultInstance()), T0)
            .getAudit()
            .getEntriesList();
    assertEquals(
        List.of("revoke_role", "set_policy", "bootstrap_admin"),
        audit.stream().map(AuditEntry::getAction).toList());
    assertTrue(audit.get(0).getOutcome().startsWith("refused: "), audit.get(0)::toString);
    assertEquals("root", audit.get(0).getIdentity());
    assertEquals("ok", audit.get(1).getOutcome());
    assertEquals("lock", audit.get(1).getTarget());
    assertEquals(index - 1, audit.get(0).getRevision());
  }
}
