package io.leasehold.jepsen.workload;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.Validity;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Handoff: ownership of a few names moves back and forth between runners by Transfer, as the
 * mailbox-routing design moves mailboxes when runners join, drain or leave. A runner that owns a
 * name takes up the lease (acquiring it as its holder answers the lease it was handed), writes to
 * the fenced register with its token while its handle is valid, then hands it to another runner and
 * tells that runner so. A runner that finds a name free (never handed out yet, or its owner lost
 * it) acquires it. Each holding is a client-side validity interval ending before the transfer is
 * sent; every acknowledged transfer is recorded with the token it ended and the one it granted, for
 * the transfer checker.
 */
public final class HandoffWorkload implements Workload {
  public static final String PREFIX = "lock/handoff-";
  static final Duration TTL = Duration.ofSeconds(3);
  private final int runners;
  private final int names;
  private final Threads threads = new Threads();
  private final ConcurrentHashMap<Integer, BlockingQueue<String>> inboxes =
      new ConcurrentHashMap<>();

  public HandoffWorkload(int runners, int names) {
    this.runners = runners;
    this.names = names;
  }

  @Override
  public String name() {
    return "handoff";
  }

  static String holder(int runner) {
    return "handoff-" + runner;
  }

  @Override
  public void start(WorkloadContext ctx) {
    FencedRegister register = new FencedRegister(ctx.recorder());
    for (int i = 0; i < runners; i++) {
      inboxes.put(i, new LinkedBlockingQueue<>());
    }
    for (int i = 0; i < runners; i++) {
      int runner = i;
      threads.spawn("handoff-" + i, () -> loop(ctx, register, runner));
    }
  }

  private void loop(WorkloadContext ctx, FencedRegister register, int runner) {
    Recorder rec = ctx.recorder();
    int process = 400 + runner;
    String holder = holder(runner);
    try (LeaseholdClient client = ctx.client(holder)) {
      while (threads.running()) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        String name;
        try {
          name = inboxes.get(runner).poll(200 + rnd.nextInt(300), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        if (name == null) {
          name = PREFIX + rnd.nextInt(names); // no handoff came: try a name that may be free
        }
        Op inv = rec.invoke(process, "acquire", name, Optional.of(holder), OptionalLong.empty());
        Lease lease;
        try {
          lease =
              client
                  .acquire(
                      name, LeaseOptions.defaults().withTtl(TTL).withWait(Duration.ofMillis(200)))
                  .get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
          rec.complete(
              inv,
              Op.Type.INFO,
              Optional.of(holder),
              OptionalLong.empty(),
              FencedLockWorkload.cause(e));
          continue;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        long from = System.nanoTime();
        rec.complete(
            inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(lease.token()), "GRANTED");
        long until = from;
        long holdUntil = from + TimeUnit.MILLISECONDS.toNanos(100 + rnd.nextInt(1000));
        while (threads.running() && System.nanoTime() - holdUntil < 0 && lease.isValid()) {
          long remaining = lease.remaining().toNanos();
          if (remaining <= 0) {
            break;
          }
          until = Math.max(until, System.nanoTime() + remaining);
          if (rnd.nextInt(40) == 0) {
            Pacing.sleep(
                Duration.ofMillis(
                    rnd.nextInt(3000))); // a "GC pause" between the check and the write
          }
          register.write(name, holder, lease.token());
          Pacing.sleep(Duration.ofMillis(30 + rnd.nextInt(50)));
        }
        // This runner stops acting on the name before it hands it on.
        rec.validity(
            new Validity(holder, name, lease.token(), from, Math.min(until, System.nanoTime())));
        if (!threads.running() || lease.state() == LeaseState.LOST) {
          continue;
        }
        int to = (runner + 1 + rnd.nextInt(runners - 1)) % runners;
        Op t =
            rec.invoke(
                process, "transfer", name, Optional.of(holder(to)), OptionalLong.of(lease.token()));
        try {
          LeaseInfo moved = lease.transferTo(holder(to)).get(10, TimeUnit.SECONDS);
          rec.complete(
              t,
              Op.Type.OK,
              Optional.of(moved.holder()),
              OptionalLong.of(moved.token()),
              "TRANSFERRED");
          inboxes.get(to).add(name);
        } catch (ExecutionException | TimeoutException e) {
          // Maybe applied: nobody is told. If it was not, let the name go rather than keep renewing
          // it unused.
          rec.complete(
              t,
              Op.Type.INFO,
              Optional.of(holder(to)),
              OptionalLong.empty(),
              FencedLockWorkload.cause(e));
          lease.release().exceptionally(x -> null);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
