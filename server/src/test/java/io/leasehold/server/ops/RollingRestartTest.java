package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarting every node of a three-node cluster in turn, the way an upgrade does, loses no lease
 * and keeps acquisitions possible except for the leader elections it causes.
 */
class RollingRestartTest {
  private static final int HELD = 20;

  /** The longest an acquisition may stay impossible: an election or two, on a loaded machine. */
  private static final Duration MAX_OUTAGE = Duration.ofSeconds(12);

  @TempDir Path dir;
  TestCluster cluster;

  final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stop() {
    channels.forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void rollingRestartOfEveryNodeLosesNoLeaseAndKeepsAcquisitionsAvailable() throws Exception {
    cluster = TestCluster.start(3, dir);
    List<String> ids = cluster.ids();
    Map<String, Long> held = new HashMap<>();
    for (int i = 0; i < HELD; i++) {
      AcquireResponse r =
          cluster.leases(ids.get(i % 3)).acquire(acquire("lock/held-" + i, "runner-" + i, 10));
      assertEquals(Outcome.GRANTED, r.getOutcome());
      held.put("lock/held-" + i, r.getLease().getToken());
    }
    // Channels of the test's own: the cluster's are closed with their node, these reconnect to it.
    List<LeasesGrpc.LeasesBlockingStub> stubs = new ArrayList<>();
    for (String id : ids) {
      ManagedChannel ch =
          ManagedChannelBuilder.forTarget(cluster.peer(id).clientAddress()).usePlaintext().build();
      channels.add(ch);
      stubs.add(LeasesGrpc.newBlockingStub(ch));
    }
    RenewRequest.Builder renewAll = RenewRequest.newBuilder();
    held.forEach(
        (name, token) -> renewAll.addItems(RenewItem.newBuilder().setName(name).setToken(token)));
    RenewRequest renewal = renewAll.build();

    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<String> lost = new ConcurrentLinkedQueue<>();
    AtomicLong renewals = new AtomicLong();
    AtomicLong acquisitions = new AtomicLong();
    AtomicLong lastAcquired = new AtomicLong(System.nanoTime());
    AtomicLong longestOutage = new AtomicLong();
    Thread renewer =
        new Thread(
            () -> {
              int next = 0;
              while (!stop.get()) {
                long started = System.nanoTime();
                try {
                  RenewResponse r =
                      stubs.get(next).withDeadlineAfter(3, TimeUnit.SECONDS).renew(renewal);
                  r.getResultsList().stream()
                      .filter(x -> x.getOutcome() != Outcome.RENEWED)
                      .forEach(x -> lost.add(x.toString()));
                  renewals.incrementAndGet();
                } catch (StatusRuntimeException e) {
                  next =
                      (next + 1)
                          % stubs.size(); // that node is down or has no leader yet: ask another
                }
                sleepUntil(started + TimeUnit.SECONDS.toNanos(1));
              }
            },
            "renewer");
    Thread acquirer =
        new Thread(
            () -> {
              int next = 0;
              while (!stop.get()) {
                long started = System.nanoTime();
                try {
                  AcquireResponse r =
                      stubs
                          .get(next)
                          .withDeadlineAfter(3, TimeUnit.SECONDS)
                          .acquire(acquire("lock/probe-" + acquisitions.get(), "prober", 2));
                  if (r.getOutcome() == Outcome.GRANTED) {
                    long now = System.nanoTime();
                    longestOutage.accumulateAndGet(now - lastAcquired.getAndSet(now), Math::max);
                    acquisitions.incrementAndGet();
                  }
                } catch (StatusRuntimeException e) {
                  next = (next + 1) % stubs.size();
                }
                sleepUntil(started + TimeUnit.MILLISECONDS.toNanos(100));
              }
            },
            "acquirer");
    renewer.start();
    acquirer.start();
    try {
      for (String id : ids) {
        cluster.stopNode(id);
        cluster.awaitLeader();
        cluster.startNode(id);
        cluster.awaitConverged();
        long renewedBefore = renewals.get();
        TestCluster.await(
            "a renewal after " + id + " came back",
            Duration.ofSeconds(20),
            () -> renewals.get() > renewedBefore + 1);
      }
    } finally {
      stop.set(true);
      renewer.join(10_000);
      acquirer.join(10_000);
    }
    assertTrue(lost.isEmpty(), "renewals that found no lease: " + lost);
    assertTrue(acquisitions.get() > 20, "acquisitions went on: " + acquisitions.get());
    assertTrue(
        longestOutage.get() < MAX_OUTAGE.toNanos(),
        "acquisitions were impossible for "
            + TimeUnit.NANOSECONDS.toMillis(longestOutage.get())
            + " ms at most");
    for (LeaseholdNode n : cluster.running()) {
      for (Map.Entry<String, Long> e : held.entrySet()) {
        var r = cluster.leases(n.id()).get(get(e.getKey()));
        assertTrue(r.getFound(), e.getKey() + " is still held, seen from " + n.id());
        assertEquals(e.getValue(), r.getLease().getToken());
      }
    }
  }

  private static void sleepUntil(long deadlineNanos) {
    long wait = deadlineNanos - System.nanoTime();
    if (wait > 0) {
      try {
        TimeUnit.NANOSECONDS.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
