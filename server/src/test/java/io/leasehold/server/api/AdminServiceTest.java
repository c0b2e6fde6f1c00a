package io.leasehold.server.api;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.Requests.renew;
import static io.leasehold.server.Requests.seconds;
import static io.leasehold.server.Requests.staleGet;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import com.google.protobuf.util.Durations;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.BanResponse;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetPolicyResponse;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.LeaseState;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RevokeResponse;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.server.TestCluster;
import io.leasehold.statemachine.core.Counters;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Admin API end to end on a real three-node cluster: each policy field, each rejection reason
 * and each ending reason once over gRPC, calls sent to followers (writes forwarded to the leader)
 * and reads checked on every node. Every test uses its own namespace and holders; none touches the
 * default policy, which would reach into the others.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminServiceTest {
  TestCluster cluster;
  String a;
  AdminGrpc.AdminBlockingStub admin;
  LeasesGrpc.LeasesBlockingStub leases;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    cluster = TestCluster.start(3, dir);
    a = cluster.followers().get(0).id();
    admin = cluster.admin(a);
    leases = cluster.leases(a);
  }

  @AfterAll
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void setPolicy(String namespace, Policy.Builder policy) {
    admin.setPolicy(
        SetPolicyRequest.newBuilder().setNamespace(namespace).setPolicy(policy).build());
  }

  private static AcquireRequest acquireDefaultTtl(String name, String holder) {
    return AcquireRequest.newBuilder().setName(name).setHolder(holder).build();
  }

  private static Policy.Builder policy() {
    return Policy.newBuilder();
  }

  private AcquireResponse rejected(AcquireResponse r, RejectReason reason) {
    assertEquals(Outcome.REJECTED, r.getOutcome(), r::toString);
    assertEquals(reason, r.getRejection().getReason(), r::toString);
    return r;
  }

  private List<EndedLease> history(String id, HistoryRequest.Builder r) {
    return cluster.admin(id).history(r.build()).getLeasesList();
  }

  @Test
  void ttlBoundsDefaultTtlHeartbeatPatternAndGraceAreEnforcedOverGrpc() {
    setPolicy(
        "e2e-terms",
        policy()
            .setMinTtl(seconds(3))
            .setMaxTtl(seconds(60))
            .setDefaultTtl(seconds(20))
            .setHeartbeatInterval(seconds(1))
            .setNamePattern("job-[0-9]+")
            .setGracePeriod(seconds(1)));

    AcquireResponse tooShort =
        rejected(
            leases.acquire(acquire("e2e-terms/job-1", "alice", 2)), RejectReason.TTL_OUT_OF_RANGE);
    assertEquals(seconds(3), tooShort.getRejection().getMinTtl());
    assertEquals(seconds(60), tooShort.getRejection().getMaxTtl());
    rejected(
        leases.acquire(acquire("e2e-terms/job-1", "alice", 61)), RejectReason.TTL_OUT_OF_RANGE);
    AcquireResponse badName =
        rejected(
            leases.acquire(acquire("e2e-terms/cron", "alice", 10)), RejectReason.NAME_NOT_ALLOWED);
    assertEquals("job-[0-9]+", badName.getRejection().getNamePattern());

    AcquireResponse granted = leases.acquire(acquireDefaultTtl("e2e-terms/job-1", "alice"));
    assertEquals(Outcome.GRANTED, granted.getOutcome());
    assertEquals(seconds(20), granted.getLease().getTtl(), "the policy's default TTL");
    assertEquals(seconds(1), granted.getHeartbeatInterval());
    assertEquals(seconds(1), granted.getLease().getGracePeriod());
    RenewResponse renewed = leases.renew(renew("e2e-terms/job-1", granted.getLease().getToken()));
    assertEquals(Outcome.RENEWED, renewed.getResults(0).getOutcome());
    assertEquals(seconds(1), renewed.getHeartbeatInterval());

    for (String id : cluster.ids()) {
      var lease = cluster.leases(id).get(get("e2e-terms/job-1")).getLease();
      assertEquals(LeaseState.ACTIVE, lease.getState(), id);
      assertEquals(1, lease.getRenewCount(), id);
      assertEquals(seconds(1), lease.getHeartbeatInterval(), id);
      GetPolicyResponse p =
          cluster
              .admin(id)
              .getPolicy(GetPolicyRequest.newBuilder().setNamespace("e2e-terms").build());
      assertFalse(p.getInherited(), id);
      assertEquals(seconds(20), p.getEffective().getDefaultTtl(), id);
    }
    // STALE once the last renewal is older than two heartbeats (1 s here), seen on any node.
    await(
        "the unrenewed lease shows as stale",
        java.time.Duration.ofSeconds(10),
        () ->
            cluster
                    .leases(cluster.ids().get(2))
                    .get(staleGet("e2e-terms/job-1"))
                    .getLease()
                    .getState()
                == LeaseState.STALE);
  }

  @Test
  void quotasPerHolderAndPerNamespaceAreEnforcedOverGrpc() {
    setPolicy("e2e-quota", policy().setMaxLeasesPerHolder(1).setMaxLeasesPerNamespace(2));
    assertEquals(
        Outcome.GRANTED, leases.acquire(acquire("e2e-quota/a", "q-alice", 60)).getOutcome());
    assertEquals(
        1,
        rejected(leases.acquire(acquire("e2e-quota/b", "q-alice", 60)), RejectReason.HOLDER_QUOTA)
            .getRejection()
            .getLimit());
    assertEquals(Outcome.GRANTED, leases.acquire(acquire("e2e-quota/b", "q-bob", 60)).getOutcome());
    assertEquals(
        2,
        rejected(
                leases.acquire(acquire("e2e-quota/c", "q-carol", 60)), RejectReason.NAMESPACE_QUOTA)
            .getRejection()
            .getLimit());
    Counters.Snapshot c = cluster.awaitLeader().counters();
    assertTrue(
        c.rejected(RejectReason.HOLDER_QUOTA) >= 1 && c.rejected(RejectReason.NAMESPACE_QUOTA) >= 1,
        c::toString);
  }

  @Test
  void revokeEndsALeaseAndItsNameWaitsOutTheLockDelayOnEveryNode() {
    setPolicy("e2e-revoke", policy().setLockDelay(seconds(60)));
    AcquireResponse granted = leases.acquire(acquire("e2e-revoke/a", "r-alice", 60));
    RevokeResponse revoked =
        admin.revoke(RevokeRequest.newBuilder().setName("e2e-revoke/a").setReason("stuck").build());
    assertEquals(Outcome.REVOKED, revoked.getOutcome());
    assertEquals(granted.getLease().getToken(), revoked.getLease().getToken());
    assertEquals(
        Outcome.NOT_HELD,
        admin.revoke(RevokeRequest.newBuilder().setName("e2e-revoke/a").build()).getOutcome());
    for (String id : cluster.ids()) {
      AcquireResponse r =
          rejected(
              cluster.leases(id).acquire(acquire("e2e-revoke/a", "r-bob", 60)),
              RejectReason.LOCK_DELAY);
      long left = Durations.toMillis(r.getRejection().getRetryAfter());
      assertTrue(left > 0 && left <= 60_000, "retry_after " + left + " ms");
      EndedLease ended = history(id, HistoryRequest.newBuilder().setName("e2e-revoke/a")).get(0);
      assertEquals(Event.Reason.REASON_REVOKED, ended.getReason());
      assertEquals("stuck", ended.getMessage());
      assertEquals("r-alice", ended.getHolder());
    }
  }

  @Test
  void theLeaderLiftsALockDelayOnceItIsDueAndOnlyThen() {
    setPolicy("e2e-lift", policy().setLockDelay(seconds(2)));
    leases.acquire(acquire("e2e-lift/a", "l-alice", 60));
    assertEquals(
        Outcome.REVOKED,
        admin.revoke(RevokeRequest.newBuilder().setName("e2e-lift/a").build()).getOutcome());
    long revoked = System.nanoTime();
    rejected(leases.acquire(acquire("e2e-lift/a", "l-bob", 60)), RejectReason.LOCK_DELAY);
    // Lifted by the leader's LiftLockDelays: D after it applied the revocation, plus a tick and a
    // commit.
    AcquireResponse granted =
        TestCluster.eventually(
            "the lock-delay is lifted",
            java.time.Duration.ofSeconds(10),
            () -> {
              AcquireResponse r = leases.acquire(acquire("e2e-lift/a", "l-bob", 60));
              return r.getOutcome() == Outcome.GRANTED
                  ? java.util.Optional.of(r)
                  : java.util.Optional.empty();
            });
    long waited = (System.nanoTime() - revoked) / 1_000_000;
    assertTrue(
        waited >= 1_800 && waited <= 2_000 + 1_500,
        "lifted after " + waited + " ms; lock-delay 2 s");
    assertEquals("l-bob", granted.getLease().getHolder());
  }

  @Test
  void anUnrenewedLeaseExpiresAfterItsTtlPlusGraceAndThenWaitsOutTheLockDelay() {
    setPolicy("e2e-expire", policy().setGracePeriod(seconds(1)).setLockDelay(seconds(60)));
    long start = System.nanoTime();
    AcquireResponse granted = leases.acquire(acquire("e2e-expire/a", "x-alice", 2));
    assertEquals(Outcome.GRANTED, granted.getOutcome());
    LeasesGrpc.LeasesBlockingStub onLeader = cluster.leases(cluster.awaitLeader().id());
    await(
        "the lease expires",
        java.time.Duration.ofSeconds(15),
        () -> !onLeader.get(staleGet("e2e-expire/a")).getFound());
    long lived = System.nanoTime() - start;
    assertTrue(
        lived >= java.time.Duration.ofMillis(2900).toNanos(),
        "expired after " + lived / 1_000_000 + " ms; TTL 2 s + grace 1 s");
    rejected(leases.acquire(acquire("e2e-expire/a", "x-bob", 10)), RejectReason.LOCK_DELAY);
    for (String id : cluster.ids()) {
      await(
          "the expiry is in " + id + "'s history",
          java.time.Duration.ofSeconds(10),
          () -> !history(id, HistoryRequest.newBuilder().setHolder("x-alice")).isEmpty());
      assertEquals(
          Event.Reason.REASON_EXPIRED,
          history(id, HistoryRequest.newBuilder().setHolder("x-alice")).get(0).getReason());
    }
  }

  @Test
  void aBanEndsTheHoldersLeasesRefusesItAndTheLeaderLiftsATimedBan() {
    long token = 0;
    for (int i = 0; i < 3; i++) {
      token = leases.acquire(acquire("e2e-ban/" + i, "b-alice", 60)).getLease().getToken();
    }
    AcquireResponse kept = leases.acquire(acquire("e2e-ban/released", "b-alice2", 60));
    assertEquals(
        Outcome.RELEASED,
        leases.release(release("e2e-ban/released", kept.getLease().getToken())).getOutcome());

    BanResponse banned =
        admin.ban(
            BanRequest.newBuilder()
                .setHolder("b-alice")
                .setReason("abuse")
                .setDuration(seconds(3))
                .build());
    assertEquals(3, banned.getBan().getLeasesEnded());
    assertTrue(banned.getBan().hasUntil());
    AcquireResponse refused =
        rejected(leases.acquire(acquire("e2e-ban/new", "b-alice", 60)), RejectReason.BANNED);
    assertTrue(refused.getRejection().hasRetryAfter());
    assertEquals(
        Outcome.NOT_HELD, leases.renew(renew("e2e-ban/2", token)).getResults(0).getOutcome());
    for (String id : cluster.ids()) {
      assertFalse(cluster.leases(id).get(get("e2e-ban/0")).getFound(), id);
      List<EndedLease> byHolder = history(id, HistoryRequest.newBuilder().setHolder("b-alice"));
      assertEquals(3, byHolder.size(), id);
      assertTrue(
          byHolder.stream()
              .allMatch(
                  e ->
                      e.getReason() == Event.Reason.REASON_BANNED
                          && e.getMessage().equals("abuse")),
          id);
      assertEquals(
          Event.Reason.REASON_RELEASED,
          history(id, HistoryRequest.newBuilder().setName("e2e-ban/released")).get(0).getReason());
      assertTrue(
          cluster.admin(id).listBans(ListBansRequest.getDefaultInstance()).getBansList().stream()
              .anyMatch(b -> b.getHolder().equals("b-alice")),
          id);
    }
    // The leader lifts the timed ban once due, on every node.
    await(
        "the timed ban is lifted everywhere",
        java.time.Duration.ofSeconds(20),
        () ->
            cluster.ids().stream()
                .allMatch(
                    id ->
                        cluster
                            .admin(id)
                            .listBans(ListBansRequest.newBuilder().setStale(true).build())
                            .getBansList()
                            .stream()
                            .noneMatch(b -> b.getHolder().equals("b-alice"))));
    assertEquals(
        Outcome.GRANTED, leases.acquire(acquire("e2e-ban/new", "b-alice", 60)).getOutcome());
    assertTrue(
        admin
                .unban(io.leasehold.proto.v1.UnbanRequest.newBuilder().setHolder("b-alice").build())
                .getWasBanned()
            == false);
  }

  @Test
  void watchersSeeRevocationsAndBansAsRevokedWithTheirReasonAndPolicyChangesWhenTheyAskForThem() {
    long from =
        admin
            .setPolicy(
                SetPolicyRequest.newBuilder()
                    .setNamespace("e2e-watch")
                    .setPolicy(policy().setMaxTtl(seconds(600)))
                    .build())
            .getRevision();
    leases.acquire(acquire("e2e-watch/a", "w-alice", 60));
    leases.acquire(acquire("e2e-watch/b", "w-bob", 60));
    admin.revoke(RevokeRequest.newBuilder().setName("e2e-watch/a").setReason("drain").build());
    admin.ban(BanRequest.newBuilder().setHolder("w-bob").setReason("abuse").build());
    admin.unban(io.leasehold.proto.v1.UnbanRequest.newBuilder().setHolder("w-bob").build());

    List<Event> everything = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Event> byDefault = new java.util.concurrent.CopyOnWriteArrayList<>();
    io.grpc.Context.CancellableContext watching = io.grpc.Context.current().withCancellation();
    try {
      watching.run(
          () -> {
            io.leasehold.proto.v1.WatchRequest.Builder w =
                io.leasehold.proto.v1.WatchRequest.newBuilder()
                    .setPrefix("e2e-watch/")
                    .setStartRevision(from);
            LeasesGrpc.newStub(cluster.channel(cluster.ids().get(2)))
                .watch(
                    w.clone()
                        .addTypes(Event.Type.REVOKED)
                        .addTypes(Event.Type.POLICY_CHANGED)
                        .build(),
                    collect(everything));
            LeasesGrpc.newStub(cluster.channel(cluster.ids().get(1)))
                .watch(w.build(), collect(byDefault));
          });
      await(
          "both watchers caught up",
          java.time.Duration.ofSeconds(20),
          () -> everything.size() >= 3 && byDefault.size() >= 4);
    } finally {
      watching.cancel(null);
    }
    assertEquals(
        List.of(Event.Type.POLICY_CHANGED, Event.Type.REVOKED, Event.Type.REVOKED),
        everything.stream().map(Event::getType).toList());
    assertEquals("e2e-watch/", everything.get(0).getName());
    assertEquals(
        List.of(Event.Reason.REASON_REVOKED, Event.Reason.REASON_BANNED),
        everything.subList(1, 3).stream().map(Event::getReason).toList());
    assertEquals(
        List.of("drain", "abuse"),
        everything.subList(1, 3).stream().map(Event::getMessage).toList());
    assertTrue(
        byDefault.stream().noneMatch(e -> e.getType() == Event.Type.POLICY_CHANGED),
        "only when asked for");
    assertEquals(4, byDefault.size(), "two grants, a revocation and a ban: " + byDefault);
  }

  private static io.grpc.stub.StreamObserver<io.leasehold.proto.v1.WatchResponse> collect(
      List<Event> into) {
    return new io.grpc.stub.StreamObserver<>() {
      @Override
      public void onNext(io.leasehold.proto.v1.WatchResponse value) {
        into.addAll(value.getEventsList());
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    };
  }

  // ---- bad input ----

  @Test
  void badPoliciesAreInvalidNamingTheFieldAndLeaveTheStoredPolicyAlone() {
    setPolicy("e2e-bad", policy().setMaxTtl(seconds(60)).setNamePattern("[a-z]+"));
    GetPolicyResponse before =
        admin.getPolicy(GetPolicyRequest.newBuilder().setNamespace("e2e-bad").build());
    Object[][] cases = {
      {"e2e-bad", policy().setNamePattern("job-(["), "policy.name_pattern"},
      {"e2e-bad", policy().setNamePattern("((a{1000}){1000}){1000}"), "policy.name_pattern"},
      {"e2e-bad", policy().setMinTtl(seconds(90)).setMaxTtl(seconds(30)), "policy.min_ttl"},
      {
        "e2e-bad",
        policy().setGracePeriod(Duration.newBuilder().setSeconds(-1)),
        "policy.grace_period"
      },
      {"e2e-bad", policy().setLockDelay(Duration.newBuilder().setSeconds(-3)), "policy.lock_delay"},
      {"e2e-bad", policy().setMinTtl(Duration.newBuilder().setSeconds(-3)), "policy.min_ttl"},
      {"e2e-bad", policy().setMaxLeasesPerHolder(0), "policy.max_leases_per_holder"},
      {"e2e-bad", policy().setMaxLeasesPerNamespace(0), "policy.max_leases_per_namespace"},
      {"e2e-bad/x", policy(), "namespace"},
    };
    for (Object[] c : cases) {
      SetPolicyRequest bad =
          SetPolicyRequest.newBuilder()
              .setNamespace((String) c[0])
              .setPolicy((Policy.Builder) c[1])
              .build();
      assertInvalid((String) c[2], () -> admin.setPolicy(bad));
    }
    assertInvalid(
        "namespace",
        () ->
            admin.deletePolicy(
                io.leasehold.proto.v1.DeletePolicyRequest.newBuilder()
                    .setNamespace("a/b")
                    .build()));
    for (String id : cluster.ids()) {
      GetPolicyResponse after =
          cluster
              .admin(id)
              .getPolicy(GetPolicyRequest.newBuilder().setNamespace("e2e-bad").build());
      assertEquals(
          before.getPolicy(), after.getPolicy(), "the stored policy is unchanged on " + id);
    }
    rejected(leases.acquire(acquire("e2e-bad/x1", "z", 10)), RejectReason.NAME_NOT_ALLOWED);
  }

  @Test
  void otherBadAdminInputIsInvalidNamingTheField() {
    assertInvalid(
        "until",
        () ->
            admin.ban(
                BanRequest.newBuilder()
                    .setHolder("z")
                    .setUntil(com.google.protobuf.Timestamp.newBuilder().setSeconds(1_000_000_000L))
                    .build()));
    assertInvalid("holder", () -> admin.ban(BanRequest.getDefaultInstance()));
    assertInvalid("name", () -> admin.history(HistoryRequest.getDefaultInstance()));
    assertInvalid(
        "token",
        () -> admin.revoke(RevokeRequest.newBuilder().setName("lock/x").setToken(-1).build()));
    assertInvalid(
        "token",
        () ->
            admin.revoke(
                RevokeRequest.newBuilder().setName("lock/x").setToken(1_000_000_000L).build()));
    assertTrue(
        admin.listBans(ListBansRequest.getDefaultInstance()).getBansList().stream()
            .noneMatch(b -> b.getHolder().equals("z")));
  }

  private static void assertInvalid(String field, Runnable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::run);
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
    assertTrue(
        e.getStatus().getDescription().startsWith(field + ":"),
        "the message names the field " + field + ": " + e.getStatus().getDescription());
  }
}
