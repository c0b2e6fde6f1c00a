package io.leasehold.jepsen.workload;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.recipes.Election;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.Validity;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Election: candidates campaign for one election through the SDK's election recipe; the leader
 * writes to the fenced register with its token while {@code isLeader()}, sometimes pauses between
 * that check and the write (a GC pause), then resigns or is killed (closes without resigning, so
 * its leadership ends at its session's expiry). Each term is recorded as a client-side validity
 * interval on the election's name, for the election checker.
 */
public final class ElectionWorkload implements Workload {
  public static final String NAME = "election/jepsen";
  static final Duration SESSION_TTL = Duration.ofSeconds(3);
  private final int candidates;
  private final Threads threads = new Threads();

  public ElectionWorkload(int candidates) {
    this.candidates = candidates;
  }

  @Override
  public String name() {
    return "election";
  }

  @Override
  public void start(WorkloadContext ctx) {
    FencedRegister register = new FencedRegister(ctx.recorder());
    for (int i = 0; i < candidates; i++) {
      int process = 500 + i;
      threads.spawn("candidate-" + i, () -> loop(ctx, register, process));
    }
  }

  private void loop(WorkloadContext ctx, FencedRegister register, int process) {
    Recorder rec = ctx.recorder();
    int generation = 0;
    String holder = "candidate-" + process + "-" + generation;
    LeaseholdClient client = ctx.client(holder, b -> b.sessionTtl(SESSION_TTL));
    try {
      while (threads.running()) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        Election election = client.election(NAME);
        Op inv = rec.invoke(process, "acquire", NAME, Optional.of(holder), OptionalLong.empty());
        Lease lease;
        try {
          lease = election.campaign(holder).get(30, TimeUnit.SECONDS);
          rec.complete(
              inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "GRANTED");
        } catch (ExecutionException | TimeoutException e) {
          rec.complete(
              inv,
              Op.Type.INFO,
              Optional.of(holder),
              OptionalLong.empty(),
              FencedLockWorkload.cause(e));
          election.resign();
          continue;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        long from = System.nanoTime();
        long until = from;
        long leadUntil = from + TimeUnit.MILLISECONDS.toNanos(500 + rnd.nextInt(3000));
        while (threads.running() && System.nanoTime() - leadUntil < 0 && election.isLeader()) {
          long remaining = lease.remaining().toNanos();
          if (remaining <= 0) {
            break;
          }
          until = Math.max(until, System.nanoTime() + remaining);
          if (rnd.nextInt(40) == 0) {
            Pacing.sleep(
                Duration.ofMillis(
                    rnd.nextInt(4000))); // a "GC pause" between the check and the write
          }
          register.write(NAME, holder, lease.token());
          Pacing.sleep(Duration.ofMillis(40 + rnd.nextInt(60)));
        }
        rec.validity(
            new Validity(holder, NAME, lease.token(), from, Math.min(until, System.nanoTime())));
        if (rnd.nextInt(4) == 0) {
          // Killed: no resignation; the leadership ends when the session expires.
          Op crash = rec.invoke(process, "crash", NAME, Optional.of(holder), OptionalLong.empty());
          client.close();
          rec.complete(crash, Op.Type.OK, Optional.of(holder), OptionalLong.empty(), "");
          holder = "candidate-" + process + "-" + ++generation;
          client = ctx.client(holder, b -> b.sessionTtl(SESSION_TTL));
          continue;
        }
        Op resign =
            rec.invoke(
                process, "sdk-release", NAME, Optional.of(holder), OptionalLong.of(lease.token()));
        try {
          election.resign().get(10, TimeUnit.SECONDS);
          rec.complete(resign, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "");
        } catch (ExecutionException | TimeoutException e) {
          rec.complete(
              resign,
              Op.Type.INFO,
              Optional.of(holder),
              OptionalLong.of(lease.token()),
              FencedLockWorkload.cause(e));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    } finally {
      client.close();
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
