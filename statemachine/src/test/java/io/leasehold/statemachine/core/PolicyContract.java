package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.deletePolicy;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.micros;
import static io.leasehold.statemachine.core.Cmds.policy;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetPolicyResponse;
import io.leasehold.proto.v1.InvalidCommand;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.Rejection;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replicated policy, on every store: each field of a namespace's policy, each rejection it causes
 * on Acquire and on renewal, how a namespace's policy stands to the default, and bad policies
 * refused with the stored policy left alone.
 */
public abstract class PolicyContract extends CoreFixture {

  // ---- TTL bounds and default ----

  @Test
  void ttlOutsideTheNamespaceBoundsIsRejectedWithTheBoundsNotClamped() throws IOException {
    assertTrue(
        apply(1, T0, setPolicy("lock", policy().setMinTtl(secs(5)).setMaxTtl(secs(60))))
            .reply()
            .hasSetPolicy());
    long index = 1;
    for (Duration ttl :
        new Duration[] {secs(4), micros(5 * SECOND - 1), micros(60 * SECOND + 1), secs(3600)}) {
      Rejection r = rejected(apply(++index, T0, acquire("lock/a", "alice", ttl)));
      assertEquals(RejectReason.TTL_OUT_OF_RANGE, r.getReason(), () -> "ttl " + ttl);
      assertEquals(secs(5), r.getMinTtl());
      assertEquals(secs(60), r.getMaxTtl());
      assertFalse(r.getMessage().isEmpty());
    }
    assertTrue(leases().isEmpty(), "nothing was granted, and nothing clamped");
    assertEquals(
        secs(5),
        granted(apply(++index, T0, acquire("lock/min", "alice", secs(5)))).getLease().getTtl());
    assertEquals(
        secs(60),
        granted(apply(++index, T0, acquire("lock/max", "alice", secs(60)))).getLease().getTtl());
    // Another namespace keeps the built-in bounds.
    assertEquals(
        secs(3),
        granted(apply(++index, T0, acquire("svc/a", "alice", secs(3)))).getLease().getTtl());
  }

  @Test
  void defaultTtlOfThePolicyIsUsedWhenTheRequestGivesNone() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setDefaultTtl(secs(30))));
    assertEquals(secs(30), granted(apply(2, T0, acquire("lock/a", "alice"))).getLease().getTtl());
    // Unset, the default is 10 s, or the nearer bound when 10 s lies outside them.
    apply(3, T0, setPolicy("slow", policy().setMinTtl(secs(20))));
    assertEquals(secs(20), granted(apply(4, T0, acquire("slow/a", "alice"))).getLease().getTtl());
    apply(5, T0, setPolicy("fast", policy().setMaxTtl(secs(4))));
    assertEquals(secs(4), granted(apply(6, T0, acquire("fast/a", "alice"))).getLease().getTtl());
    assertEquals(secs(10), granted(apply(7, T0, acquire("other/a", "alice"))).getLease().getTtl());
  }

  // ---- heartbeat ----

  @Test
  void heartbeatIntervalOfThePolicyIsReturnedInEveryGrantAndRenewal() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setHeartbeatInterval(secs(1))));
    var a = granted(apply(2, T0, acquire("lock/a", "alice", secs(30))));
    assertEquals(secs(1), a.getHeartbeatInterval());
    assertEquals(secs(1), a.getLease().getHeartbeatInterval());
    var b = granted(apply(3, T0, acquire("svc/b", "alice", secs(30))));
    assertEquals(secs(10), b.getHeartbeatInterval(), "without a policy: a third of the TTL");

    RenewResponse r =
        apply(4, T0 + SECOND, renew(item("lock/a", 2), item("svc/b", 3))).reply().getRenew();
    assertEquals(secs(1), r.getResults(0).getHeartbeatInterval());
    assertEquals(secs(10), r.getResults(1).getHeartbeatInterval());
    assertEquals(
        secs(1),
        r.getHeartbeatInterval(),
        "the reply's interval is the shortest of the renewed leases'");
    // The holder asking again is a renewal too.
    assertEquals(
        secs(1), granted(apply(5, T0 + SECOND, acquire("lock/a", "alice"))).getHeartbeatInterval());
  }

  // ---- name pattern ----

  @Test
  void namePatternMustMatchTheWholeRestOfTheName() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setNamePattern("job-[0-9]+")));
    granted(apply(2, T0, acquire("lock/job-12", "alice")));
    long index = 2;
    for (String name : new String[] {"lock/job-12x", "lock/xjob-1", "lock/job-", "lock/JOB-1"}) {
      Rejection r = rejected(apply(++index, T0, acquire(name, "alice")));
      assertEquals(RejectReason.NAME_NOT_ALLOWED, r.getReason(), name);
      assertEquals("job-[0-9]+", r.getNamePattern());
    }
    // The pattern sees everything after the first slash, deeper paths included.
    apply(++index, T0, setPolicy("service", policy().setNamePattern("[a-z]+/i-[0-9a-f]+")));
    granted(apply(++index, T0, acquire("service/pay/i-7f3a", "alice")));
    assertEquals(
        RejectReason.NAME_NOT_ALLOWED,
        rejected(apply(++index, T0, acquire("service/pay", "alice"))).getReason());
  }

  @Test
  void renewalOfANameTheNewPatternNoLongerAllowsIsRejected() throws IOException {
    granted(apply(1, T0, acquire("lock/legacy", "alice", secs(30))));
    apply(2, T0, setPolicy("lock", policy().setNamePattern("job-[0-9]+")));
    RenewResult r = apply(3, T0 + SECOND, renew("lock/legacy", 1)).reply().getRenew().getResults(0);
    assertEquals(Outcome.REJECTED, r.getOutcome());
    assertEquals(RejectReason.NAME_NOT_ALLOWED, r.getRejection().getReason());
    assertEquals(
        0,
        held("lock/legacy").getRenewCount(),
        "not renewed: it expires unless the policy changes");
  }

  // ---- grace ----

  @Test
  void gracePeriodIsRecordedWithTheLeaseAtGrantAndRenewal() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setGracePeriod(secs(3))));
    var a = granted(apply(2, T0, acquire("lock/a", "alice", secs(10))));
    assertEquals(secs(3), a.getLease().getGracePeriod());
    assertEquals(
        3 * SECOND, held("lock/a").getGraceMicros(), "the leader's ticker adds it to the deadline");
    assertEquals(
        Cmds.at(T0 + 10 * SECOND),
        a.getLease().getExpiresAt(),
        "expires_at is the client's deadline: the TTL alone");
    apply(3, T0, setPolicy("lock", policy().setGracePeriod(secs(7))));
    assertEquals(
        3 * SECOND, held("lock/a").getGraceMicros(), "a lease keeps its terms until it renews");
    var renewed = apply(4, T0 + SECOND, renew("lock/a", 2)).reply().getRenew().getResults(0);
    assertEquals(7 * SECOND, held("lock/a").getGraceMicros());
    assertEquals(Cmds.at(T0 + 11 * SECOND), renewed.getExpiresAt());
    assertEquals(
        Cmds.at(T0 + 18 * SECOND),
        renewed.getDeadline(),
        "the renewal's reply: when the leader acts, TTL + grace");
    assertEquals(
        Cmds.at(T0 + 18 * SECOND),
        get("lock/a", 0).getLease().getDeadline(),
        "a read's estimate: expires_at + grace");
    apply(5, T0, deletePolicy("lock"));
    apply(6, T0 + 2 * SECOND, renew("lock/a", 2));
    assertEquals(0, held("lock/a").getGraceMicros());
    assertFalse(view("lock/a").hasGracePeriod());
  }

  // ---- quotas ----

  @Test
  void holderQuotaRejectsALeaseBeyondItInTheNamespace() throws IOException {
    apply(1, T0, setPolicy("", policy().setMaxLeasesPerHolder(2)));
    granted(apply(2, T0, acquire("lock/a", "alice")));
    granted(apply(3, T0, acquire("lock/b", "alice")));
    Rejection r = rejected(apply(4, T0, acquire("lock/c", "alice")));
    assertEquals(RejectReason.HOLDER_QUOTA, r.getReason());
    assertEquals(2, r.getLimit());
    assertTrue(r.getMessage().contains("namespace \"lock\""), r::getMessage);
    granted(apply(5, T0, acquire("lock/c", "bob")));
    // The quota counts the holder's leases in the name's namespace; other namespaces count apart.
    granted(apply(6, T0, acquire("svc/a", "alice")));
    // Asking again for a lease it holds is a renewal, not a new lease.
    assertEquals(2, granted(apply(7, T0, acquire("lock/a", "alice"))).getLease().getToken());
    apply(8, T0, release("lock/a", 2));
    granted(apply(9, T0, acquire("lock/d", "alice")));
  }

  @Test
  void namespaceQuotaRejectsALeaseBeyondIt() throws IOException {
    apply(1, T0, setPolicy("partition", policy().setMaxLeasesPerNamespace(2)));
    granted(apply(2, T0, acquire("partition/1", "alice")));
    granted(apply(3, T0, acquire("partition/2", "bob")));
    Rejection r = rejected(apply(4, T0, acquire("partition/3", "carol")));
    assertEquals(RejectReason.NAMESPACE_QUOTA, r.getReason());
    assertEquals(2, r.getLimit());
    granted(apply(5, T0, acquire("lock/3", "carol")));
  }

  @Test
  void aLoweredQuotaRefusesRenewalsOfTheNewestLeasesBeyondIt() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(30))));
    granted(apply(2, T0, acquire("lock/b", "alice", secs(30))));
    granted(apply(3, T0, acquire("lock/c", "alice", secs(30))));
    apply(4, T0, setPolicy("lock", policy().setMaxLeasesPerHolder(2)));
    RenewResponse r =
        apply(5, T0 + SECOND, renew(item("lock/c", 3), item("lock/a", 1), item("lock/b", 2)))
            .reply()
            .getRenew();
    assertEquals(Outcome.REJECTED, r.getResults(0).getOutcome());
    assertEquals(RejectReason.HOLDER_QUOTA, r.getResults(0).getRejection().getReason());
    assertEquals(Outcome.RENEWED, r.getResults(1).getOutcome(), "the oldest grants keep renewing");
    assertEquals(Outcome.RENEWED, r.getResults(2).getOutcome());
  }

  // ---- a policy change and existing leases ----

  @Test
  void existingLeasesKeepTheirTtlUntilRenewalWhichIsCheckedAgainstTheNewPolicy()
      throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10))));
    apply(2, T0, setPolicy("lock", policy().setMinTtl(secs(20))));
    assertEquals(10 * SECOND, held("lock/a").getTtlMicros(), "the policy does not touch a lease");
    RenewResult r = apply(3, T0 + SECOND, renew("lock/a", 1)).reply().getRenew().getResults(0);
    assertEquals(Outcome.REJECTED, r.getOutcome());
    assertEquals(RejectReason.TTL_OUT_OF_RANGE, r.getRejection().getReason());
    assertEquals(secs(20), r.getRejection().getMinTtl());
    // The holder asks again with a TTL inside the bounds: the same lease, renewed, on the new
    // terms.
    var again = granted(apply(4, T0 + SECOND, acquire("lock/a", "alice", secs(20))));
    assertEquals(1, again.getLease().getToken());
    assertEquals(secs(20), again.getLease().getTtl());
    assertEquals(
        Outcome.RENEWED,
        apply(5, T0 + 2 * SECOND, renew("lock/a", 1))
            .reply()
            .getRenew()
            .getResults(0)
            .getOutcome());
  }

  // ---- namespace policy and the default ----

  @Test
  void aNamespacePolicyReplacesTheDefaultAsAWhole() throws IOException {
    apply(1, T0, setPolicy("", policy().setMaxTtl(secs(60)).setMaxLeasesPerHolder(1)));
    apply(2, T0, setPolicy("lock", policy().setMinTtl(secs(3))));
    // In "lock" the built-in values stand in for what its policy leaves unset, not the default's.
    granted(apply(3, T0, acquire("lock/a", "alice", secs(7200))));
    granted(apply(4, T0, acquire("lock/b", "alice", secs(7200))));
    assertEquals(
        RejectReason.TTL_OUT_OF_RANGE,
        rejected(apply(5, T0, acquire("svc/a", "bob", secs(7200)))).getReason());
    granted(apply(6, T0, acquire("svc/a", "bob", secs(60))));
    assertEquals(
        RejectReason.HOLDER_QUOTA,
        rejected(apply(7, T0, acquire("svc/b", "bob", secs(60)))).getReason());
    // Deleting the namespace's policy brings the default back there.
    apply(8, T0, deletePolicy("lock"));
    assertEquals(
        RejectReason.TTL_OUT_OF_RANGE,
        rejected(apply(9, T0, acquire("lock/c", "carol", secs(7200)))).getReason());
  }

  @Test
  void getPolicyReportsTheOwnPolicyTheEffectiveOneAndWhetherItIsInherited() throws IOException {
    GetPolicyResponse none = getPolicy("lock");
    assertTrue(none.getInherited());
    assertFalse(none.hasPolicy());
    assertEquals(secs(2), none.getEffective().getMinTtl());
    assertEquals(secs(24 * 3600), none.getEffective().getMaxTtl());
    assertEquals(secs(10), none.getEffective().getDefaultTtl());
    assertEquals(100, none.getEffective().getHistoryLimit());

    apply(1, T0, setPolicy("", policy().setLockDelay(secs(5))));
    apply(2, T0 + SECOND, setPolicy("lock", policy().setMaxTtl(secs(60)).setNamePattern("[a-z]+")));
    GetPolicyResponse own = getPolicy("lock");
    assertFalse(own.getInherited());
    assertEquals(
        Policy.newBuilder().setMaxTtl(secs(60)).setNamePattern("[a-z]+").build(),
        own.getPolicy().getPolicy(),
        "as set");
    assertEquals(2, own.getPolicy().getRevision());
    assertEquals(Cmds.at(T0 + SECOND), own.getPolicy().getUpdatedAt());
    assertEquals(secs(60), own.getEffective().getMaxTtl());
    assertEquals(secs(10), own.getEffective().getDefaultTtl());
    assertEquals(
        Duration.getDefaultInstance(),
        own.getEffective().getLockDelay(),
        "the default's lock-delay does not leak in");
    GetPolicyResponse inherited = getPolicy("svc");
    assertTrue(inherited.getInherited());
    assertEquals(secs(5), inherited.getEffective().getLockDelay());
    assertEquals(2, getPolicy("lock").getRevision());

    var all =
        core.query(
                ReadQuery.newBuilder()
                    .setListPolicies(ListPoliciesRequest.getDefaultInstance())
                    .build(),
                0)
            .getListPolicies();
    assertEquals(
        List.of("", "lock"), all.getPoliciesList().stream().map(p -> p.getNamespace()).toList());
  }

  @Test
  void settingOrDeletingAPolicyEmitsPolicyChangedKeptInTheHistory() throws IOException {
    ApplyResult set = apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(5))));
    assertEquals(List.of("POLICY_CHANGED@1:lock/"), describe(set.events()));
    Event e = Events.toApi(set.events().get(0));
    assertEquals(Event.Type.POLICY_CHANGED, e.getType());
    assertFalse(e.hasLease());
    assertEquals(
        List.of("POLICY_CHANGED@2:"), describe(apply(2, T0, setPolicy("", policy())).events()));
    assertEquals(
        List.of("POLICY_CHANGED@3:lock/"), describe(apply(3, T0, deletePolicy("lock")).events()));
    ApplyResult noop = apply(4, T0, deletePolicy("lock"));
    assertFalse(noop.reply().getDeletePolicy().getExisted());
    assertTrue(noop.events().isEmpty(), "deleting a policy that is not there changes nothing");
    assertEquals(e, history(1).get(0), "history and live delivery give the same event");
    assertEquals(3, history(1).size());
  }

  @Test
  void policiesAreReloadedFromTheStore() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setNamePattern("job-[0-9]+").setMaxTtl(secs(60))));
    apply(2, T0, setPolicy("", policy().setMaxLeasesPerHolder(1)));
    core = new LeaseCore(store);
    assertEquals(
        RejectReason.NAME_NOT_ALLOWED,
        rejected(apply(3, T0, acquire("lock/x", "alice", secs(30)))).getReason());
    assertEquals(
        RejectReason.TTL_OUT_OF_RANGE,
        rejected(apply(4, T0, acquire("lock/job-1", "alice", secs(61)))).getReason());
    granted(apply(5, T0, acquire("svc/a", "alice")));
    assertEquals(
        RejectReason.HOLDER_QUOTA, rejected(apply(6, T0, acquire("svc/b", "alice"))).getReason());
  }

  // ---- bad policies ----

  static Stream<Arguments> badPolicies() {
    return Stream.of(
        Arguments.of("lock", policy().setNamePattern("job-(["), "policy.name_pattern"),
        Arguments.of(
            "lock", policy().setNamePattern("((a{1000}){1000}){1000}"), "policy.name_pattern"),
        Arguments.of("lock", policy().setNamePattern("x".repeat(257)), "policy.name_pattern"),
        Arguments.of("lock", policy().setMinTtl(secs(60)).setMaxTtl(secs(30)), "policy.min_ttl"),
        Arguments.of("lock", policy().setMinTtl(secs(1)), "policy.min_ttl"),
        Arguments.of("lock", policy().setMaxTtl(secs(1)), "policy.max_ttl"),
        Arguments.of("lock", policy().setDefaultTtl(secs(100_000)), "policy.default_ttl"),
        Arguments.of("lock", policy().setGracePeriod(secs(-1)), "policy.grace_period"),
        Arguments.of("lock", policy().setLockDelay(secs(-5)), "policy.lock_delay"),
        Arguments.of("lock", policy().setMinTtl(secs(-5)), "policy.min_ttl"),
        Arguments.of("lock", policy().setHeartbeatInterval(secs(-1)), "policy.heartbeat_interval"),
        Arguments.of("lock", policy().setHeartbeatInterval(secs(2)), "policy.heartbeat_interval"),
        Arguments.of("lock", policy().setLockDelay(secs(400L * 24 * 3600)), "policy.lock_delay"),
        Arguments.of("lock", policy().setMaxLeasesPerHolder(0), "policy.max_leases_per_holder"),
        Arguments.of(
            "lock", policy().setMaxLeasesPerNamespace(0), "policy.max_leases_per_namespace"),
        Arguments.of(
            "lock", policy().setMaxLeasesPerNamespace(-3), "policy.max_leases_per_namespace"),
        Arguments.of("lock", policy().setHistoryLimit(0), "policy.history_limit"),
        Arguments.of("lock/jobs", policy(), "namespace"),
        Arguments.of("lo\u0000ck", policy(), "namespace"));
  }

  @ParameterizedTest
  @MethodSource("badPolicies")
  void aBadPolicyIsInvalidNamingItsFieldAndTheStoredPolicyStays(
      String namespace, Policy.Builder bad, String field) throws IOException {
    apply(1, T0, setPolicy("lock", policy().setMaxTtl(secs(60)).setLockDelay(secs(3))));
    GetPolicyResponse stored = getPolicy("lock");

    ApplyResult r = apply(2, T0, setPolicy(namespace, bad));
    InvalidCommand invalid = invalid(r);
    assertEquals(field, invalid.getField(), invalid::getMessage);
    assertTrue(invalid.getMessage().startsWith(field + ":"), invalid::getMessage);
    assertTrue(r.events().isEmpty());
    assertEquals(
        stored.toBuilder().clearRevision().build(),
        getPolicy("lock").toBuilder().clearRevision().build());
    // The policy in force is still the stored one.
    assertEquals(
        RejectReason.TTL_OUT_OF_RANGE,
        rejected(apply(3, T0, acquire("lock/a", "alice", secs(61)))).getReason());
  }

  @Test
  void anInvalidSetPolicyChangesNoByteOfTheState() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setMaxTtl(secs(60))));
    byte[] before = dumpWithoutPosition();
    invalid(apply(2, T0, setPolicy("lock", policy().setNamePattern("("))));
    invalid(apply(3, T0, setPolicy("lock", policy().setMinTtl(secs(90)).setMaxTtl(secs(60)))));
    invalid(apply(4, T0, deletePolicy("lo/ck")));
    assertArrayEquals(before, dumpWithoutPosition());
  }

  // ---- helpers ----

  private GetPolicyResponse getPolicy(String namespace) {
    return core.query(
            ReadQuery.newBuilder()
                .setGetPolicy(GetPolicyRequest.newBuilder().setNamespace(namespace))
                .build(),
            0)
        .getGetPolicy();
  }

  /** Every space but the applied position, which every entry moves. */
  private byte[] dumpWithoutPosition() {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    store.read(
        view -> {
          for (io.leasehold.statemachine.store.Space s :
              io.leasehold.statemachine.store.Space.values()) {
            view.scan(
                s,
                new byte[0],
                new byte[0],
                (k, v) -> {
                  if (!java.util.Arrays.equals(
                      k, io.leasehold.statemachine.store.AppliedPosition.META_KEY)) {
                    out.writeBytes(k);
                    out.writeBytes(v);
                  }
                  return true;
                });
          }
          return null;
        });
    return out.toByteArray();
  }
}
