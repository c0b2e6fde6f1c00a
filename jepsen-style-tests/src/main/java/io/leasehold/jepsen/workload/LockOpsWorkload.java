package io.leasehold.jepsen.workload;

import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.run.Pacing;
import io.leasehold.proto.v1.LeasesGrpc;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Lock operations for the linearizability checker: processes send raw Acquire, Release and Get
 * calls (no SDK retries or renewals: one call, one operation) to random nodes, on a few names.
 * Leases have the minimum TTL and are never renewed, so they also expire under the clients' feet.
 */
public final class LockOpsWorkload implements Workload {
  public static final String PREFIX = "lock/lin-";
  private final int processes;
  private final int names;
  private final Threads threads = new Threads();

  public LockOpsWorkload(int processes, int names) {
    this.processes = processes;
    this.names = names;
  }

  @Override
  public String name() {
    return "lock-ops";
  }

  @Override
  public void start(WorkloadContext ctx) {
    for (int i = 0; i < processes; i++) {
      int process = i;
      threads.spawn("lock-ops-" + i, () -> loop(ctx, process));
    }
  }

  private void loop(WorkloadContext ctx, int process) {
    Recorder rec = ctx.recorder();
    String holder = "lin-" + process;
    Map<String, Long> lastToken = new HashMap<>();
    while (threads.running()) {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      String name = PREFIX + rnd.nextInt(names);
      int node = rnd.nextInt(ctx.cluster().size());
      // As its holder: with TLS, the channel presents the certificate whose CN is the holder.
      LeasesGrpc.LeasesBlockingStub stub =
          LeasesGrpc.newBlockingStub(ctx.cluster().channel(node, holder))
              .withDeadlineAfter(4, TimeUnit.SECONDS);
      int dice = rnd.nextInt(10);
      if (dice < 4) {
        RawCalls.acquire(rec, process, stub, name, holder, 2 + rnd.nextInt(2))
            .ifPresent(t -> lastToken.put(name, t));
      } else if (dice < 7) {
        RawCalls.release(rec, process, stub, name, holder, lastToken.getOrDefault(name, 1L));
      } else {
        RawCalls.get(rec, process, stub, name);
      }
      Pacing.sleep(Duration.ofMillis(60 + rnd.nextInt(120)));
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
