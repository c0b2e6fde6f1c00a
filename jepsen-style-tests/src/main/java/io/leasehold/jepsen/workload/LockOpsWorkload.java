package io.leasehold.jepsen.workload;

import com.google.protobuf.Duration;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.run.Pacing;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
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
      LeasesGrpc.LeasesBlockingStub stub = LeasesGrpc.newBlockingStub(ctx.cluster().channel(node)).withDeadlineAfter(4, TimeUnit.SECONDS);
      int dice = rnd.nextInt(10);
      if (dice < 4) {
        Op inv = rec.invoke(process, "acquire", name, Optional.of(holder), OptionalLong.empty());
        try {
          AcquireResponse r = stub.acquire(AcquireRequest.newBuilder().setName(name).setHolder(holder)
              .setTtl(Duration.newBuilder().setSeconds(2 + rnd.nextInt(2))).build());
          if (r.getOutcome() == Outcome.GRANTED) {
            lastToken.put(name, r.getLease().getToken());
            rec.complete(inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(r.getLease().getToken()), "GRANTED");
          } else if (r.getOutcome() == Outcome.CONFLICT) {
            rec.complete(inv, Op.Type.OK, Optional.of(r.getConflict().getHolder()), OptionalLong.of(r.getConflict().getToken()), "CONFLICT");
          } else {
            rec.complete(inv, Op.Type.OK, Optional.empty(), OptionalLong.empty(), r.getOutcome().name());
          }
        } catch (RuntimeException e) {
          rec.complete(inv, RawCalls.classify(e), Optional.of(holder), OptionalLong.empty(), RawCalls.describe(e));
        }
      } else if (dice < 7) {
        long token = lastToken.getOrDefault(name, 1L);
        Op inv = rec.invoke(process, "release", name, Optional.of(holder), OptionalLong.of(token));
        try {
          ReleaseResponse r = stub.release(ReleaseRequest.newBuilder().setName(name).setToken(token).build());
          rec.complete(inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(token), r.getOutcome().name());
        } catch (RuntimeException e) {
          rec.complete(inv, RawCalls.classify(e), Optional.of(holder), OptionalLong.of(token), RawCalls.describe(e));
        }
      } else {
        Op inv = rec.invoke(process, "get", name, Optional.empty(), OptionalLong.empty());
        try {
          GetResponse r = stub.get(GetRequest.newBuilder().setName(name).build());
          if (r.getFound()) {
            rec.complete(inv, Op.Type.OK, Optional.of(r.getLease().getHolder()), OptionalLong.of(r.getLease().getToken()), "FOUND");
          } else {
            rec.complete(inv, Op.Type.OK, Optional.empty(), OptionalLong.empty(), "NONE");
          }
        } catch (RuntimeException e) {
          rec.complete(inv, RawCalls.classify(e), Optional.empty(), OptionalLong.empty(), RawCalls.describe(e));
        }
      }
      Pacing.sleep(java.time.Duration.ofMillis(60 + rnd.nextInt(120)));
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
