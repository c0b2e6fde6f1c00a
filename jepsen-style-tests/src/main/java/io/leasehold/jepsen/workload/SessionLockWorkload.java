package io.leasehold.jepsen.workload;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.Validity;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sessions: each SDK client keeps one session and attaches the leases it acquires to it (no TTL of
 * their own), one to three names at a time from a small pool, and writes to the fenced register
 * with each lease's token while its handle is valid. Now and then a client pauses between its
 * validity check and its write (a GC pause), or is killed (closes without releasing): its session
 * then expires and takes every attached lease with it, and it comes back as a new holder with a new
 * session. Each holding is recorded as a client-side validity interval, as the fenced lock's are,
 * so the fencing and exclusion checkers judge sessions' leases too.
 */
public final class SessionLockWorkload implements Workload {
  public static final String PREFIX = "lock/session-";
  static final Duration SESSION_TTL = Duration.ofSeconds(3);
  private final int clients;
  private final int names;
  private final Threads threads = new Threads();

  public SessionLockWorkload(int clients, int names) {
    this.clients = clients;
    this.names = names;
  }

  @Override
  public String name() {
    return "session-lock";
  }

  @Override
  public void start(WorkloadContext ctx) {
    FencedRegister register = new FencedRegister(ctx.recorder());
    for (int i = 0; i < clients; i++) {
      int process = 300 + i;
      threads.spawn("session-" + i, () -> loop(ctx, register, process));
    }
  }

  private record Held(Lease lease, long from, long[] until) {}

  private void loop(WorkloadContext ctx, FencedRegister register, int process) {
    Recorder rec = ctx.recorder();
    int generation = 0;
    String holder = "session-" + process + "-" + generation;
    LeaseholdClient client = ctx.client(holder, b -> b.sessionTtl(SESSION_TTL));
    try {
      while (threads.running()) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        List<Held> held = new ArrayList<>();
        int want = 1 + rnd.nextInt(3);
        for (int k = 0; k < want && threads.running(); k++) {
          String name = PREFIX + rnd.nextInt(names);
          if (held.stream().anyMatch(h -> h.lease().name().equals(name))) {
            continue;
          }
          Op inv = rec.invoke(process, "acquire", name, Optional.of(holder), OptionalLong.empty());
          try {
            Lease lease =
                client
                    .acquire(
                        name,
                        LeaseOptions.defaults()
                            .withWait(Duration.ofMillis(300 + rnd.nextInt(1500))))
                    .get(10, TimeUnit.SECONDS);
            long from = System.nanoTime();
            rec.complete(
                inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "GRANTED");
            held.add(new Held(lease, from, new long[] {from}));
          } catch (ExecutionException | TimeoutException e) {
            rec.complete(
                inv,
                Op.Type.INFO,
                Optional.of(holder),
                OptionalLong.empty(),
                FencedLockWorkload.cause(e));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        long holdUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200 + rnd.nextInt(3000));
        while (threads.running() && System.nanoTime() - holdUntil < 0 && !held.isEmpty()) {
          Held h = held.get(rnd.nextInt(held.size()));
          if (!h.lease().isValid()) {
            break;
          }
          long remaining = h.lease().remaining().toNanos();
          long now = System.nanoTime();
          if (remaining <= 0) {
            break;
          }
          h.until()[0] = Math.max(h.until()[0], now + remaining);
          if (rnd.nextInt(40) == 0) {
            Pacing.sleep(
                Duration.ofMillis(
                    rnd.nextInt(4000))); // a "GC pause" between the check and the write
          }
          register.write(h.lease().name(), holder, h.lease().token());
          Pacing.sleep(Duration.ofMillis(40 + rnd.nextInt(60)));
        }
        long end = System.nanoTime();
        for (Held h : held) {
          rec.validity(
              new Validity(
                  holder,
                  h.lease().name(),
                  h.lease().token(),
                  h.from(),
                  Math.min(h.until()[0], end)));
        }
        if (rnd.nextInt(6) == 0) {
          // Killed: the session is no longer kept alive; it expires with every lease attached.
          Op crash =
              rec.invoke(process, "crash", "session", Optional.of(holder), OptionalLong.empty());
          client.close();
          rec.complete(crash, Op.Type.OK, Optional.of(holder), OptionalLong.empty(), "");
          holder = "session-" + process + "-" + ++generation;
          client = ctx.client(holder, b -> b.sessionTtl(SESSION_TTL));
          continue;
        }
        for (Held h : held) {
          Op rel =
              rec.invoke(
                  process,
                  "sdk-release",
                  h.lease().name(),
                  Optional.of(holder),
                  OptionalLong.of(h.lease().token()));
          try {
            h.lease().release().get(10, TimeUnit.SECONDS);
            rec.complete(
                rel, Op.Type.OK, Optional.of(holder), OptionalLong.of(h.lease().token()), "");
          } catch (ExecutionException | TimeoutException | IllegalStateException e) {
            rec.complete(
                rel,
                Op.Type.INFO,
                Optional.of(holder),
                OptionalLong.of(h.lease().token()),
                FencedLockWorkload.cause(e));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
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
