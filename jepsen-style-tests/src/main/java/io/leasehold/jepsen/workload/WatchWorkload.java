package io.leasehold.jepsen.workload;

import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchCompactedException;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.jepsen.history.WatchedEvent;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Watch: one watcher pinned to each node (it resumes on that node only, after a kill or a pause)
 * and one that roams over every node, all from revision 1 on {@code lock/}; each records the events
 * it is given, in order.
 *
 * <p>With {@code across}, on a cluster with lease groups, two more watch every name from now (one
 * pinned to the first node, unless no node is a member of every lease group, and one roaming):
 * their streams interleave every group's events and resume from resume tokens. They are named
 * {@link #ACROSS} plus a suffix, and judged per namespace by {@code AcrossWatchChecker}. The
 * workload returns from {@link #start} once they have started, so every grant of the run comes
 * after their start.
 *
 * <p>With {@code relist} ({@code lock} moves between lease groups), a watcher of {@code lock/}
 * whose watch ends because the namespace moved lists {@code lock/} again and watches from that
 * listing, in the namespace's new group, as the SDK's recipes do; the listing is recorded as a
 * {@link #LISTED} event, where a new segment of its stream begins.
 */
public final class WatchWorkload implements Workload {
  public static final String PREFIX = "lock/";

  /** How the names of the watchers of every name begin. */
  public static final String ACROSS = "across-";

  /**
   * The type of the event that records a listing a watcher watches from after its watch ended: its
   * revision is the listing's, its group the listing's.
   */
  public static final String LISTED = "LISTED";

  private final boolean across;
  private final boolean pinnedAcross;
  private final boolean relist;
  private final List<LeaseholdClient> clients = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final List<Watch> watches = new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile boolean stopped;
  private final ConcurrentHashMap<String, AtomicLong> seen = new ConcurrentHashMap<>();

  /** The watchers of {@code lock/} alone. */
  public WatchWorkload() {
    this(false);
  }

  /**
   * @param across whether watchers of every name run too (a cluster with lease groups)
   */
  public WatchWorkload(boolean across) {
    this(across, false);
  }

  /**
   * @param across whether watchers of every name run too (a cluster with lease groups)
   * @param relist whether a watcher of {@code lock/} lists again when its watch ends because the
   *     namespace moved
   */
  public WatchWorkload(boolean across, boolean relist) {
    this(across, relist, true);
  }

  /**
   * @param across whether watchers of every name run too (a cluster with lease groups)
   * @param relist whether a watcher of {@code lock/} lists again when its watch ends because the
   *     namespace moved
   * @param pinnedAcross whether one watcher of every name is pinned to the first node: not where no
   *     node is a member of every lease group, since one node then cannot serve it alone (the
   *     roaming one merges a stream per group)
   */
  public WatchWorkload(boolean across, boolean relist, boolean pinnedAcross) {
    this.across = across;
    this.relist = relist;
    this.pinnedAcross = pinnedAcross;
  }

  @Override
  public String name() {
    return "watch";
  }

  @Override
  public void start(WorkloadContext ctx) {
    for (int i = 0; i < ctx.cluster().size(); i++) {
      watch(
          ctx,
          "watch-" + ctx.cluster().node(i).id(),
          ctx.client("watcher-" + i, List.of(ctx.cluster().endpoint(i)), false));
    }
    watch(ctx, "watch-roaming", ctx.client("watcher-roaming"));
    if (across) {
      List<CountDownLatch> started = new java.util.ArrayList<>();
      if (pinnedAcross) {
        started.add(
            watchEverything(
                ctx,
                ACROSS + ctx.cluster().node(0).id(),
                ctx.client("watcher-across-0", List.of(ctx.cluster().endpoint(0)), false)));
      }
      started.add(watchEverything(ctx, ACROSS + "roaming", ctx.client("watcher-across-roaming")));
      for (CountDownLatch s : started) {
        try {
          if (!s.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("a watch of every name did not start in 120 s");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while a watch of every name started", e);
        }
      }
    }
  }

  /**
   * A watch of every name from now; the latch opens with its first message (the meta group's
   * position), after which every write is in its stream.
   */
  private CountDownLatch watchEverything(WorkloadContext ctx, String name, LeaseholdClient client) {
    ctx.recorder().watcher(name);
    clients.add(client);
    CountDownLatch started = new CountDownLatch(1);
    watches.add(
        client.watch(
            WatchOptions.of(""),
            new WatchListener() {
              @Override
              public void onEvent(WatchEvent e) {
                ctx.recorder()
                    .watched(
                        new WatchedEvent(
                            name,
                            e.revision(),
                            e.type().name(),
                            e.name(),
                            e.lease().map(LeaseInfo::token).orElse(0L),
                            e.group()));
              }

              @Override
              public void onProgress(long revision) {
                started.countDown();
              }
            }));
    return started;
  }

  private void watch(WorkloadContext ctx, String name, LeaseholdClient client) {
    ctx.recorder().watcher(name);
    AtomicLong last = new AtomicLong();
    seen.put(name, last);
    clients.add(client);
    watchFrom(ctx, name, client, WatchOptions.of(PREFIX).withFromRevision(1), last);
  }

  private void watchFrom(
      WorkloadContext ctx,
      String name,
      LeaseholdClient client,
      WatchOptions options,
      AtomicLong last) {
    watches.add(
        client.watch(
            options,
            new WatchListener() {
              @Override
              public void onEvent(WatchEvent e) {
                ctx.recorder()
                    .watched(
                        new WatchedEvent(
                            name,
                            e.revision(),
                            e.type().name(),
                            e.name(),
                            e.lease().map(LeaseInfo::token).orElse(0L),
                            e.group()));
                last.accumulateAndGet(e.revision(), Math::max);
              }

              @Override
              public void onProgress(long revision) {
                last.accumulateAndGet(revision, Math::max);
              }

              @Override
              public void onError(LeaseholdException error) {
                if (relist && !stopped && error instanceof WatchCompactedException) {
                  relist(ctx, name, client, last);
                }
              }
            }));
  }

  /** Lists {@code lock/} again (retrying while the cluster fails it) and watches from there. */
  private void relist(WorkloadContext ctx, String name, LeaseholdClient client, AtomicLong last) {
    client
        .list(PREFIX)
        .whenComplete(
            (listing, error) -> {
              if (stopped) {
                return;
              }
              if (error != null) {
                CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS)
                    .execute(() -> relist(ctx, name, client, last));
                return;
              }
              ctx.recorder()
                  .watched(
                      new WatchedEvent(name, listing.revision(), LISTED, "", 0, listing.group()));
              last.set(listing.revision());
              watchFrom(ctx, name, client, WatchOptions.of(PREFIX).withStartAfter(listing), last);
            });
  }

  /** The lowest revision every watcher has reached (events or progress). */
  public long lowestRevision() {
    return seen.values().stream().mapToLong(AtomicLong::get).min().orElse(0);
  }

  public long highestRevision() {
    return seen.values().stream().mapToLong(AtomicLong::get).max().orElse(0);
  }

  @Override
  public void stop() {
    stopped = true;
    watches.forEach(Watch::close);
    clients.forEach(LeaseholdClient::close);
  }
}
