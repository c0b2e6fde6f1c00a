package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.Requests.renew;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Prometheus endpoint of a node: the named series are there and move with what the node
 * applies.
 */
class MetricsTest {
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\\{[^}]*\\})?) (\\S+)$", Pattern.MULTILINE);

  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static Map<String, Double> scrape(LeaseholdNode node) {
    try {
      HttpResponse<String> r = TestCluster.httpGet(node, "/metrics");
      assertEquals(200, r.statusCode());
      Map<String, Double> samples = new HashMap<>();
      Matcher m = SAMPLE.matcher(r.body());
      while (m.find()) {
        samples.put(m.group(1), Double.parseDouble(m.group(2)));
      }
      return samples;
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  static double value(Map<String, Double> samples, String series) {
    Double v = samples.get(series);
    if (v == null) {
      throw new AssertionError(
          "no series " + series + " in " + new java.util.TreeSet<>(samples.keySet()));
    }
    return v;
  }

  @Test
  void seriesAreExposedAndMoveWithEveryWayALeaseBeginsAndEndsLateHeartbeatsRejectionsAndWatchers()
      throws Exception {
    cluster = TestCluster.start(1, dir, b -> b.metricsPort(0));
    LeaseholdNode node = cluster.awaitLeader();
    Map<String, Double> before = scrape(node);
    for (String series :
        new String[] {
          "leasehold_leases_acquired_total",
          "leasehold_leases_renewed_total",
          "leasehold_leases_released_total",
          "leasehold_leases_expired_total",
          "leasehold_leases_revoked_total",
          "leasehold_leases_banned_total",
          "leasehold_late_heartbeats_total",
          "leasehold_lease_rejections_total{reason=\"TTL_OUT_OF_RANGE\"}",
          "leasehold_lease_rejections_total{reason=\"BANNED\"}",
          "leasehold_leases_live",
          "leasehold_watchers",
          "leasehold_watch_groups",
          "leasehold_watch_messages_total",
          "leasehold_watch_shared_messages_total",
          "leasehold_apply_seconds_count",
          "leasehold_apply_seconds_bucket{le=\"0.001\"}",
          "leasehold_raft_role{role=\"leader\"}",
          "leasehold_raft_term",
          "leasehold_raft_commit_index",
          "leasehold_raft_applied_index",
          "leasehold_raft_members",
          "leasehold_raft_leader_changes_total",
          "leasehold_raft_append_requests_received_total",
          "leasehold_raft_append_received_bytes_total",
          "leasehold_raft_log_flushes_total",
          "leasehold_health_serving",
          "jvm_memory_used_bytes{area=\"heap\"}",
          "jvm_threads_current"
        }) {
      value(before, series);
    }
    assertEquals(1.0, value(before, "leasehold_raft_role{role=\"leader\"}"));
    assertEquals(0.0, value(before, "leasehold_raft_role{role=\"follower\"}"));
    assertEquals(1.0, value(before, "leasehold_raft_members"));

    LeasesGrpc.LeasesBlockingStub leases = cluster.leases(node.id());
    AcquireResponse short1 = leases.acquire(acquire("lock/short", "runner-1", 2));
    assertEquals(Outcome.GRANTED, short1.getOutcome());
    AcquireResponse long2 = leases.acquire(acquire("lock/long", "runner-2", 600));
    assertEquals(Outcome.GRANTED, long2.getOutcome());
    assertEquals(
        RejectReason.TTL_OUT_OF_RANGE,
        leases.acquire(acquire("lock/too-short", "runner-3", 1)).getRejection().getReason());
    Map<String, Double> held = scrape(node);
    assertEquals(
        value(before, "leasehold_leases_acquired_total") + 2,
        value(held, "leasehold_leases_acquired_total"));
    assertEquals(2.0, value(held, "leasehold_leases_live"));
    assertEquals(
        value(before, "leasehold_lease_rejections_total{reason=\"TTL_OUT_OF_RANGE\"}") + 1,
        value(held, "leasehold_lease_rejections_total{reason=\"TTL_OUT_OF_RANGE\"}"));
    assertTrue(
        value(held, "leasehold_apply_seconds_count")
            > value(before, "leasehold_apply_seconds_count"));
    assertTrue(
        value(held, "leasehold_raft_applied_index")
            > value(before, "leasehold_raft_applied_index"));
    assertTrue(
        value(held, "leasehold_raft_commit_index") >= value(held, "leasehold_raft_applied_index"));
    assertTrue(
        value(held, "leasehold_raft_log_flushes_total")
            > value(before, "leasehold_raft_log_flushes_total"),
        "the writes were flushed to the Raft log");
    assertEquals(
        0.0,
        value(held, "leasehold_raft_append_received_bytes_total"),
        "a lone node receives no appends");

    await(
        "lock/short expires and the counters show it",
        Duration.ofSeconds(20),
        () -> {
          Map<String, Double> now = scrape(node);
          return value(now, "leasehold_leases_expired_total")
                  == value(before, "leasehold_leases_expired_total") + 1
              && value(now, "leasehold_leases_live") == 1.0;
        });
    assertEquals(
        Outcome.NOT_HELD,
        leases.renew(renew("lock/short", short1.getLease().getToken())).getResults(0).getOutcome());
    assertEquals(
        value(before, "leasehold_late_heartbeats_total") + 1,
        value(scrape(node), "leasehold_late_heartbeats_total"));

    var watch = LeasesGrpc.newStub(cluster.channel(node.id()));
    io.grpc.Context.CancellableContext ctx = io.grpc.Context.current().withCancellation();
    ctx.run(
        () ->
            watch.watch(
                WatchRequest.newBuilder().setPrefix("lock/").build(),
                new StreamObserver<WatchResponse>() {
                  @Override
                  public void onNext(WatchResponse value) {}

                  @Override
                  public void onError(Throwable t) {}

                  @Override
                  public void onCompleted() {}
                }));
    await(
        "the watcher is counted",
        Duration.ofSeconds(10),
        () -> value(scrape(node), "leasehold_watchers") == 1.0);
    assertEquals(1.0, value(scrape(node), "leasehold_watch_groups"));
    double messages = value(scrape(node), "leasehold_watch_messages_total");
    AcquireResponse watched = leases.acquire(acquire("lock/watched", "runner-9", 60));
    await(
        "the watcher's message is counted",
        Duration.ofSeconds(10),
        () -> value(scrape(node), "leasehold_watch_messages_total") >= messages + 1);
    assertEquals(
        Outcome.RELEASED,
        leases.release(release("lock/watched", watched.getLease().getToken())).getOutcome());
    ctx.cancel(null);
    await(
        "the watcher is gone",
        Duration.ofSeconds(10),
        () -> value(scrape(node), "leasehold_watchers") == 0.0);

    // Renewals, releases, revocations and bans each move their own counter (a ban counts every
    // lease it ends), and the live gauge comes back down.
    Map<String, Double> mid = scrape(node);
    assertEquals(
        Outcome.RENEWED,
        leases.renew(renew("lock/long", long2.getLease().getToken())).getResults(0).getOutcome());
    AcquireResponse toRelease = leases.acquire(acquire("lock/released", "runner-4", 60));
    assertEquals(
        Outcome.RELEASED,
        leases.release(release("lock/released", toRelease.getLease().getToken())).getOutcome());
    assertEquals(
        Outcome.GRANTED, leases.acquire(acquire("lock/revoked", "runner-5", 60)).getOutcome());
    AdminGrpc.AdminBlockingStub admin = cluster.admin(node.id());
    assertEquals(
        Outcome.REVOKED,
        admin
            .revoke(RevokeRequest.newBuilder().setName("lock/revoked").setReason("test").build())
            .getOutcome());
    assertEquals(
        Outcome.GRANTED, leases.acquire(acquire("lock/banned-a", "runner-6", 60)).getOutcome());
    assertEquals(
        Outcome.GRANTED, leases.acquire(acquire("lock/banned-b", "runner-6", 60)).getOutcome());
    assertEquals(
        2,
        admin
            .ban(BanRequest.newBuilder().setHolder("runner-6").setReason("test").build())
            .getBan()
            .getLeasesEnded());
    await(
        "renewed, released, revoked and banned counters move",
        Duration.ofSeconds(10),
        () -> {
          Map<String, Double> now = scrape(node);
          return value(now, "leasehold_leases_renewed_total")
                  == value(mid, "leasehold_leases_renewed_total") + 1
              && value(now, "leasehold_leases_released_total")
                  == value(mid, "leasehold_leases_released_total") + 1
              && value(now, "leasehold_leases_revoked_total")
                  == value(mid, "leasehold_leases_revoked_total") + 1
              && value(now, "leasehold_leases_banned_total")
                  == value(mid, "leasehold_leases_banned_total") + 2
              && value(now, "leasehold_leases_acquired_total")
                  == value(mid, "leasehold_leases_acquired_total") + 4
              && value(now, "leasehold_leases_live") == 1.0;
        });
    assertEquals(
        value(mid, "leasehold_leases_expired_total"),
        value(scrape(node), "leasehold_leases_expired_total"),
        "a release, a revocation or a ban is not an expiry");

    assertEquals(200, TestCluster.httpGet(node, "/healthz").statusCode());
  }
}
