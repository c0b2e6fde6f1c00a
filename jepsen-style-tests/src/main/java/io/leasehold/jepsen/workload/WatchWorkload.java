package io.leasehold.jepsen.workload;

import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.jepsen.history.WatchedEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Watch: one watcher pinned to each node (it resumes on that node only, after a kill or a pause)
 * and one that roams over every node, all from revision 1 on {@code lock/}; each records the events
 * it is given, in order.
 */
public final class WatchWorkload implements Workload {
  public static final String PREFIX = "lock/";
  private final List<LeaseholdClient> clients = new ArrayList<>();
  private final List<Watch> watches = new ArrayList<>();
  private final ConcurrentHashMap<String, AtomicLong> seen = new ConcurrentHashMap<>();

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
  }

  private void watch(WorkloadContext ctx, String name, LeaseholdClient client) {
    ctx.recorder().watcher(name);
    AtomicLong last = new AtomicLong();
    seen.put(name, last);
    clients.add(client);
    watches.add(
        client.watch(
            WatchOptions.of(PREFIX).withFromRevision(1),
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
                            e.lease().map(LeaseInfo::token).orElse(0L)));
                last.accumulateAndGet(e.revision(), Math::max);
              }

              @Override
              public void onProgress(long revision) {
                last.accumulateAndGet(revision, Math::max);
              }
            }));
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
    watches.forEach(Watch::close);
    clients.forEach(LeaseholdClient::close);
  }
}
