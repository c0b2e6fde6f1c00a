package io.leasehold.jepsen.workload;

import io.leasehold.client.FencingGuard;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.recipes.PartitionListener;
import io.leasehold.client.recipes.PartitionMember;
import io.leasehold.client.recipes.PartitionOptions;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.Validity;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Partition groups: members of one group join, leave, get killed (client closed without releasing)
 * and pause (a "GC pause" between reading what they own and writing), under the nemeses. While a
 * member owns a partition it writes to that partition's fenced register with its token. Recorded
 * for {@code PartitionChecker}: each assignment ({@code assign}), each ownership interval (assigned
 * to revoked, or to the kill) as a validity, and each register write ({@code partition-write},
 * ACCEPTED or REFUSED) in the register's order.
 */
public final class PartitionWorkload implements Workload {
  public static final String GROUP = "jepsen";

  /** The group's lease names start with this; partition k is {@code PREFIX + "p/" + k}. */
  public static final String PREFIX = "partitions/" + GROUP + "/";

  static final int PARTITIONS = 8;
  private final int members;
  private final Threads threads = new Threads();
  private final FencingGuard register = new FencingGuard();

  public PartitionWorkload(int members) {
    this.members = members;
  }

  @Override
  public String name() {
    return "partitions";
  }

  static String partitionName(int k) {
    return PREFIX + "p/" + k;
  }

  @Override
  public void start(WorkloadContext ctx) {
    for (int i = 0; i < members; i++) {
      int slot = i;
      threads.spawn("partitions-" + i, () -> slot(ctx, slot));
    }
  }

  /**
   * One member slot: joins as a new identity, owns and writes for a while, then leaves or is
   * killed, and again.
   */
  private void slot(WorkloadContext ctx, int slot) {
    Recorder rec = ctx.recorder();
    int process = 500 + slot;
    for (int generation = 0; threads.running(); generation++) {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      String holder =
          "part-"
              + slot; // one identity per slot: a new incarnation may take up what the last one held
      Intervals intervals = new Intervals(rec, process, holder);
      LeaseholdClient client = ctx.client(holder, b -> b.sessionTtl(Duration.ofSeconds(3)));
      PartitionMember member;
      try {
        member =
            PartitionMember.join(
                    client,
                    GROUP,
                    PARTITIONS,
                    intervals,
                    PartitionOptions.defaults()
                        .withReconcileInterval(Duration.ofMillis(500))
                        .withLeaveTimeout(Duration.ofSeconds(5)))
                .get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        client.close();
        Pacing.sleep(Duration.ofMillis(500 + rnd.nextInt(1000)));
        continue;
      }
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3000 + rnd.nextInt(7000));
      while (threads.running() && System.nanoTime() - until < 0) {
        SortedMap<Integer, Long> owned = member.owned();
        if (rnd.nextInt(60) == 0) {
          Pacing.sleep(
              Duration.ofMillis(
                  rnd.nextInt(4000))); // a "GC pause" between the check and the writes
        }
        owned.forEach((k, token) -> write(rec, process, holder, k, token));
        Pacing.sleep(Duration.ofMillis(40 + rnd.nextInt(60)));
      }
      if (threads.running() && rnd.nextBoolean()) {
        intervals.killed(); // the process dies: it stops using everything at once, and its later
        // callbacks are ignored
        client.close();
        member.close(); // stops with its client: returns at once
      } else {
        member.close();
        intervals.killed(); // whatever leaving did not revoke in time is given up with the client
        client.close();
      }
      Pacing.sleep(Duration.ofMillis(200 + rnd.nextInt(1500)));
    }
  }

  private void write(Recorder rec, int process, String holder, int k, long token) {
    String name = partitionName(k);
    synchronized (register) {
      // Recorded under the register's lock, so op ids follow the register's order.
      Op inv =
          rec.invoke(process, "partition-write", name, Optional.of(holder), OptionalLong.of(token));
      boolean accepted = register.tryAdvance(name, token);
      rec.complete(
          inv,
          Op.Type.OK,
          Optional.of(holder),
          OptionalLong.of(token),
          accepted ? "ACCEPTED" : "REFUSED");
    }
  }

  /** One member's ownership intervals, from its callbacks; a killed member's end at the kill. */
  private static final class Intervals implements PartitionListener {
    private final Recorder rec;
    private final int process;
    private final String holder;
    private final Map<Integer, long[]> open = new HashMap<>();
    private boolean dead;

    Intervals(Recorder rec, int process, String holder) {
      this.rec = rec;
      this.process = process;
      this.holder = holder;
    }

    @Override
    public synchronized void onAssigned(int partition, long token) {
      long now = System.nanoTime();
      Op inv =
          rec.invoke(
              process,
              "assign",
              partitionName(partition),
              Optional.of(holder),
              OptionalLong.of(token));
      rec.complete(
          inv,
          dead ? Op.Type.INFO : Op.Type.OK,
          Optional.of(holder),
          OptionalLong.of(token),
          dead ? "AFTER-KILL" : "ASSIGNED");
      if (!dead) {
        open.put(partition, new long[] {token, now});
      }
    }

    @Override
    public synchronized void onRevoked(int partition) {
      long[] o = open.remove(partition);
      if (o != null) {
        rec.validity(new Validity(holder, partitionName(partition), o[0], o[1], System.nanoTime()));
      }
    }

    synchronized void killed() {
      for (Integer k : Map.copyOf(open).keySet()) {
        onRevoked(k);
      }
      dead = true;
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
