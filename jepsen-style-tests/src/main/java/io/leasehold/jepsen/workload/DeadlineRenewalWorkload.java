package io.leasehold.jepsen.workload;

import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.run.Pacing;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResult;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Renewals that race the leader's expiry: each process takes its own name with the shortest TTL,
 * then renews it right around its deadline — a little before, or up to a tick after — so some
 * renewals are still in the log when the leader's ticker proposes the lease's Expire. The Expire
 * guard (same token, no renewal since the ticker looked) must then make that Expire a no-op. A
 * renewed lease is read twice (at once, and after the racing Expire has surely been applied), and
 * the renewal checker demands that it is still there while its renewed TTL runs.
 */
public final class DeadlineRenewalWorkload implements Workload {
  public static final String PREFIX = "lock/edge-";
  static final Duration TTL = Duration.ofSeconds(2);

  /** The renewal goes out this long before the deadline the client estimates … */
  static final long EARLIEST_MS = -40;

  /** … up to this long after it: the leader's ticker runs every 100 ms by default. */
  static final long LATEST_MS = 120;

  private final int processes;
  private final Threads threads = new Threads();

  public DeadlineRenewalWorkload(int processes) {
    this.processes = processes;
  }

  @Override
  public String name() {
    return "deadline-renewal";
  }

  @Override
  public void start(WorkloadContext ctx) {
    for (int i = 0; i < processes; i++) {
      int index = i;
      threads.spawn("deadline-renewal-" + i, () -> loop(ctx, 300 + index, index));
    }
  }

  private void loop(WorkloadContext ctx, int process, int index) {
    Recorder rec = ctx.recorder();
    String name = PREFIX + index;
    String holder = "edge-" + index;
    while (threads.running()) {
      OptionalLong token =
          RawCalls.acquire(rec, process, stub(ctx, holder), name, holder, TTL.toSeconds());
      if (token.isPresent()) {
        long granted = System.nanoTime();
        long offsetMs = ThreadLocalRandom.current().nextLong(EARLIEST_MS, LATEST_MS + 1);
        Pacing.sleep(
            Duration.ofNanos(granted + TTL.toNanos() + offsetMs * 1_000_000 - System.nanoTime()));
        if (renew(ctx, rec, process, name, holder, token.getAsLong())) {
          long renewed = System.nanoTime();
          RawCalls.get(rec, process, stub(ctx, holder), name);
          // Well within the renewed TTL, and long after any Expire that raced the renewal.
          Pacing.sleep(Duration.ofNanos(renewed + 400_000_000L - System.nanoTime()));
          RawCalls.get(rec, process, stub(ctx, holder), name);
          RawCalls.release(rec, process, stub(ctx, holder), name, holder, token.getAsLong());
        }
      } else {
        Pacing.sleep(Duration.ofMillis(200));
      }
    }
  }

  /** A stub of a random node, as {@code holder} (with TLS, its certificate's CN is the holder). */
  private static LeasesGrpc.LeasesBlockingStub stub(WorkloadContext ctx, String holder) {
    int node = ThreadLocalRandom.current().nextInt(ctx.cluster().size());
    return LeasesGrpc.newBlockingStub(ctx.cluster().channel(node, holder))
        .withDeadlineAfter(4, TimeUnit.SECONDS);
  }

  /**
   * Whether the renewal was acknowledged; its completion says the TTL the server renewed it for.
   */
  private static boolean renew(
      WorkloadContext ctx, Recorder rec, int process, String name, String holder, long token) {
    Op inv = rec.invoke(process, "renew", name, Optional.of(holder), OptionalLong.of(token));
    try {
      RenewResult r =
          stub(ctx, holder)
              .renew(
                  RenewRequest.newBuilder()
                      .addItems(RenewItem.newBuilder().setName(name).setToken(token))
                      .build())
              .getResults(0);
      if (r.getOutcome() == Outcome.RENEWED) {
        long ttlMs = r.getTtl().getSeconds() * 1000 + r.getTtl().getNanos() / 1_000_000;
        rec.complete(
            inv,
            Op.Type.OK,
            Optional.of(holder),
            OptionalLong.of(token),
            "RENEWED ttl=" + ttlMs + "ms");
        return true;
      }
      rec.complete(
          inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(token), r.getOutcome().name());
    } catch (RuntimeException e) {
      rec.complete(
          inv,
          RawCalls.classify(e),
          Optional.of(holder),
          OptionalLong.of(token),
          RawCalls.describe(e));
    }
    return false;
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
