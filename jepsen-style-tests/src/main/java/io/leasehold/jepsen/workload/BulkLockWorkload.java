package io.leasehold.jepsen.workload;

import io.leasehold.client.AcquireAllResult;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.Validity;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Many names in one call: SDK clients claim random sets of a small pool of names with {@code
 * acquireAll} (one AcquireMany entry), now and then all or nothing, then write to the fenced
 * register with each granted lease's token while it is valid, and release them all (or "crash",
 * leaving them to expire). Each name of a call is recorded as an acquisition of its own, so the
 * fencing, exclusion, durability and watch checkers judge these grants like any other; each
 * all-or-nothing call is also recorded whole ({@code acquire-all-or-nothing}: ALL, NONE or SOME),
 * for {@code AllOrNothingChecker}.
 */
public final class BulkLockWorkload implements Workload {
  public static final String PREFIX = "lock/bulk-";
  static final Duration TTL = Duration.ofSeconds(3);
  private final int clients;
  private final int names;
  private final Threads threads = new Threads();

  public BulkLockWorkload(int clients, int names) {
    this.clients = clients;
    this.names = names;
  }

  @Override
  public String name() {
    return "bulk-lock";
  }

  @Override
  public void start(WorkloadContext ctx) {
    FencedRegister register = new FencedRegister(ctx.recorder());
    for (int i = 0; i < clients; i++) {
      int process = 400 + i * 20;
      threads.spawn("bulk-" + i, () -> loop(ctx.recorder(), ctx::client, register, process));
    }
  }

  private void loop(
      Recorder rec,
      Function<String, LeaseholdClient> clientFor,
      FencedRegister register,
      int process) {
    int generation = 0;
    String holder = "bulk-" + process + "-" + generation;
    LeaseholdClient client = clientFor.apply(holder);
    try {
      while (threads.running()) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        List<String> wanted = new ArrayList<>();
        int n = 2 + rnd.nextInt(4);
        while (wanted.size() < n) {
          String name = PREFIX + rnd.nextInt(names);
          if (!wanted.contains(name)) {
            wanted.add(name);
          }
        }
        boolean allOrNothing = rnd.nextInt(3) == 0;
        // One process a name of the call: each records one acquisition at a time.
        Map<String, Op> invoked = new LinkedHashMap<>();
        for (int i = 0; i < wanted.size(); i++) {
          invoked.put(
              wanted.get(i),
              rec.invoke(
                  process + i,
                  "acquire",
                  wanted.get(i),
                  Optional.of(holder),
                  OptionalLong.empty()));
        }
        Op whole =
            allOrNothing
                ? rec.invoke(
                    process + 19,
                    "acquire-all-or-nothing",
                    String.join(",", wanted),
                    Optional.of(holder),
                    OptionalLong.empty())
                : null;
        AcquireAllResult r;
        try {
          LeaseOptions options = LeaseOptions.defaults().withTtl(TTL);
          r =
              (allOrNothing
                      ? client.acquireAllOrNothing(wanted, options)
                      : client.acquireAll(wanted, options))
                  .get(15, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
          // Unknown: the entry may have been applied.
          String cause = FencedLockWorkload.cause(e);
          for (Op inv : invoked.values()) {
            rec.complete(inv, Op.Type.INFO, Optional.of(holder), OptionalLong.empty(), cause);
          }
          if (whole != null) {
            rec.complete(whole, Op.Type.INFO, Optional.of(holder), OptionalLong.empty(), cause);
          }
          Pacing.sleep(Duration.ofMillis(50));
          continue;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        long from = System.nanoTime();
        for (Map.Entry<String, Op> e : invoked.entrySet()) {
          complete(rec, e.getValue(), holder, e.getKey(), r);
        }
        if (whole != null) {
          String value = r.allGranted() ? "ALL" : r.granted().isEmpty() ? "NONE" : "SOME";
          rec.complete(whole, Op.Type.OK, Optional.of(holder), OptionalLong.empty(), value);
        }
        Map<String, Long> until = new LinkedHashMap<>();
        r.granted().keySet().forEach(name -> until.put(name, from));
        long holdUntil = from + TimeUnit.MILLISECONDS.toNanos(200 + rnd.nextInt(2000));
        while (threads.running() && System.nanoTime() - holdUntil < 0 && !r.granted().isEmpty()) {
          for (Lease lease : r.granted().values()) {
            long remaining = lease.remaining().toNanos();
            if (!lease.isValid() || remaining <= 0) {
              continue;
            }
            long now = System.nanoTime();
            until.merge(lease.name(), now + remaining, Math::max);
            if (rnd.nextInt(60) == 0) {
              Pacing.sleep(Duration.ofMillis(rnd.nextInt(3000))); // a "GC pause"
            }
            register.write(lease.name(), holder, lease.token());
          }
          Pacing.sleep(Duration.ofMillis(40 + rnd.nextInt(60)));
        }
        long end = System.nanoTime();
        for (Lease lease : r.granted().values()) {
          rec.validity(
              new Validity(
                  holder,
                  lease.name(),
                  lease.token(),
                  from,
                  Math.min(until.get(lease.name()), end)));
        }
        if (rnd.nextInt(10) == 0) {
          // Crash: leave every lease to expire on the cluster.
          client.close();
          holder = "bulk-" + process + "-" + ++generation;
          client = clientFor.apply(holder);
          continue;
        }
        int i = 0;
        for (Lease lease : r.granted().values()) {
          Op rel =
              rec.invoke(
                  process + i++,
                  "sdk-release",
                  lease.name(),
                  Optional.of(holder),
                  OptionalLong.of(lease.token()));
          try {
            lease.release().get(10, TimeUnit.SECONDS);
            rec.complete(rel, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "");
          } catch (ExecutionException | TimeoutException e) {
            rec.complete(
                rel,
                Op.Type.INFO,
                Optional.of(holder),
                OptionalLong.of(lease.token()),
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

  /** One name's outcome, recorded as an acquisition's: GRANTED, CONFLICT, REJECTED or SKIPPED. */
  private static void complete(
      Recorder rec, Op inv, String holder, String name, AcquireAllResult r) {
    Lease lease = r.granted().get(name);
    if (lease != null) {
      rec.complete(inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "GRANTED");
      return;
    }
    if (r.failed().containsKey(name)) {
      // Granted late and given back, or its answer lost: unknown.
      rec.complete(
          inv,
          Op.Type.INFO,
          Optional.of(holder),
          OptionalLong.empty(),
          r.failed().get(name).getClass().getSimpleName());
      return;
    }
    AcquireResult refused = r.refused().get(name);
    if (refused instanceof Conflict c) {
      rec.complete(
          inv, Op.Type.OK, Optional.of(c.holder()), OptionalLong.of(c.token()), "CONFLICT");
    } else if (refused != null) {
      rec.complete(inv, Op.Type.OK, Optional.of(holder), OptionalLong.empty(), "REJECTED");
    } else {
      rec.complete(inv, Op.Type.OK, Optional.of(holder), OptionalLong.empty(), "SKIPPED");
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
