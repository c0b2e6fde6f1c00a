package io.leasehold.jepsen.workload;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
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
import java.util.function.Function;

/**
 * Fenced lock: SDK clients contend for a few names; while a client believes it holds one ({@link
 * Lease#isValid()}), it writes to the fenced register and the unfenced log with its token. Now and
 * then a client stalls between its validity check and its write (a GC pause), or "crashes" (closes
 * without releasing, leaving the lease to expire) and comes back as a new holder. Each holding is
 * recorded as a client-side validity interval.
 */
public final class FencedLockWorkload implements Workload {
  public static final String PREFIX = "lock/fenced-";
  static final Duration TTL = Duration.ofSeconds(3);
  private final int clients;
  private final int names;
  private final Threads threads = new Threads();

  public FencedLockWorkload(int clients, int names) {
    this.clients = clients;
    this.names = names;
  }

  @Override
  public String name() {
    return "fenced-lock";
  }

  @Override
  public void start(WorkloadContext ctx) {
    start(ctx.recorder(), ctx::client);
  }

  /**
   * Starts the clients against any cluster, such as one in containers.
   *
   * @param recorder where the history goes
   * @param clientFor an SDK client of the cluster for a holder, one that does not release its
   *     leases on close (closing is how a client "crashes")
   */
  public void start(Recorder recorder, Function<String, LeaseholdClient> clientFor) {
    FencedRegister register = new FencedRegister(recorder);
    for (int i = 0; i < clients; i++) {
      int process = 100 + i;
      threads.spawn("fenced-" + i, () -> loop(recorder, clientFor, register, process));
    }
  }

  private void loop(
      Recorder rec,
      Function<String, LeaseholdClient> clientFor,
      FencedRegister register,
      int process) {
    int generation = 0;
    String holder = "fenced-" + process + "-" + generation;
    LeaseholdClient client = clientFor.apply(holder);
    try {
      while (threads.running()) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        String name = PREFIX + rnd.nextInt(names);
        Op inv = rec.invoke(process, "acquire", name, Optional.of(holder), OptionalLong.empty());
        Lease lease;
        try {
          lease =
              client
                  .acquire(
                      name,
                      LeaseOptions.defaults()
                          .withTtl(TTL)
                          .withWait(Duration.ofMillis(500 + rnd.nextInt(3000))))
                  .get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
          // A timed-out wait may have been granted and given back: unknown, not failed.
          rec.complete(inv, Op.Type.INFO, Optional.of(holder), OptionalLong.empty(), cause(e));
          Pacing.sleep(Duration.ofMillis(50));
          continue;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        long from = System.nanoTime();
        rec.complete(
            inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "GRANTED");
        long until = from;
        long holdUntil = from + TimeUnit.MILLISECONDS.toNanos(200 + rnd.nextInt(2500));
        while (threads.running() && System.nanoTime() - holdUntil < 0) {
          if (!lease.isValid()) {
            break;
          }
          long remaining = lease.remaining().toNanos();
          long now = System.nanoTime();
          if (remaining <= 0) {
            break;
          }
          // The SDK's deadline is at most now + remaining: the end of this client's belief.
          until = Math.max(until, now + remaining);
          if (rnd.nextInt(40) == 0) {
            Pacing.sleep(
                Duration.ofMillis(
                    rnd.nextInt(4000))); // a "GC pause" between the check and the write
          }
          register.write(lease.name(), holder, lease.token());
          Pacing.sleep(Duration.ofMillis(40 + rnd.nextInt(60)));
        }
        long end = System.nanoTime();
        if (rnd.nextInt(10) == 0) {
          // Crash: stop acting now and leave the lease to expire on the cluster.
          rec.validity(new Validity(holder, name, lease.token(), from, Math.min(until, end)));
          Op crash =
              rec.invoke(
                  process, "crash", name, Optional.of(holder), OptionalLong.of(lease.token()));
          client.close();
          rec.complete(crash, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "");
          holder = "fenced-" + process + "-" + ++generation;
          client = clientFor.apply(holder);
        } else {
          // Releasing ends the handle's validity at once, before the cluster hears of it.
          rec.validity(new Validity(holder, name, lease.token(), from, Math.min(until, end)));
          Op rel =
              rec.invoke(
                  process,
                  "sdk-release",
                  name,
                  Optional.of(holder),
                  OptionalLong.of(lease.token()));
          try {
            lease.release().get(10, TimeUnit.SECONDS);
            rec.complete(rel, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "");
          } catch (ExecutionException | TimeoutException e) {
            rec.complete(
                rel, Op.Type.INFO, Optional.of(holder), OptionalLong.of(lease.token()), cause(e));
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

  static String cause(Throwable e) {
    Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    return c.getClass().getSimpleName();
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
