package io.leasehold.client.recipes;

import io.leasehold.client.EventType;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseListing;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.client.WatchView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One member's List+Watch mirror of a group's leases: its members ({@code <prefix>members/<id>})
 * and its partitions ({@code <prefix>p/<k>}). Events apply in revision order, so a transfer's grant
 * is seen only after every membership change that came before it.
 */
final class PartitionView implements WatchListener {
  static final String MEMBERS = "members/";
  static final String PARTITIONS = "p/";
  static final String COUNT_KEY = "partitions";

  private final LeaseholdClient client;
  private final String prefix;
  private final Runnable changed;
  private final ScheduledExecutorService relistOn;
  private final long retryMillis;
  private final ConcurrentMap<String, LeaseInfo> leases = new ConcurrentHashMap<>();
  private volatile Watch watch;
  private volatile boolean closed;

  PartitionView(
      LeaseholdClient client,
      String prefix,
      Runnable changed,
      ScheduledExecutorService relistOn,
      long retryMillis) {
    this.client = client;
    this.prefix = prefix;
    this.changed = changed;
    this.relistOn = relistOn;
    this.retryMillis = retryMillis;
  }

  /** Lists the group and watches it from the listing's next revision; completes once listed. */
  CompletableFuture<Void> start() {
    return client.list(prefix).thenAccept(this::load);
  }

  private synchronized void load(LeaseListing listing) {
    if (closed) {
      return;
    }
    leases.clear();
    listing.leases().forEach(l -> leases.put(l.name(), l));
    watch =
        client.watch(
            WatchOptions.of(prefix).withStartAfter(listing).withView(WatchView.BASIC), this);
    changed.run();
  }

  @Override
  public void onEvent(WatchEvent e) {
    if ((e.type() == EventType.ACQUIRED || e.type() == EventType.UPDATED)
        && e.lease().isPresent()) {
      leases.put(e.name(), e.lease().get());
    } else if (e.endsLease()) {
      // Only the lease that ended: a transfer's grant at the same revision must not be removed.
      leases.computeIfPresent(
          e.name(),
          (n, cur) -> e.lease().map(l -> l.token() == cur.token()).orElse(true) ? null : cur);
    }
    changed.run();
  }

  @Override
  public void onError(LeaseholdException error) {
    // Compaction (or any end of the watch) loses the cursor: list again and watch from there.
    if (!closed) {
      try {
        relistOn.schedule(
            () ->
                start()
                    .exceptionally(
                        t -> {
                          onError(error);
                          return null;
                        }),
            retryMillis,
            TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException stopped) {
        // The member stopped meanwhile.
      }
    }
  }

  /** The ids of the live members that agree on {@code n} partitions, sorted. */
  List<String> members(int n) {
    List<String> out = new ArrayList<>();
    for (LeaseInfo l : leases.values()) {
      if (l.name().startsWith(prefix + MEMBERS) && partitionCount(l).equals(Optional.of(n))) {
        out.add(l.holder());
      }
    }
    out.sort(null);
    return out;
  }

  /** The live members whose partition count is not {@code n}, as {@code id (count)}. */
  List<String> disagreeing(int n) {
    List<String> out = new ArrayList<>();
    for (LeaseInfo l : leases.values()) {
      if (l.name().startsWith(prefix + MEMBERS) && !partitionCount(l).equals(Optional.of(n))) {
        out.add(
            l.holder() + " (" + l.attributes().metadata().getOrDefault(COUNT_KEY, "none") + ")");
      }
    }
    out.sort(null);
    return out;
  }

  /** The lease on partition {@code k}, if held. */
  Optional<LeaseInfo> partition(int k) {
    return Optional.ofNullable(leases.get(partitionName(k)));
  }

  String partitionName(int k) {
    return prefix + PARTITIONS + k;
  }

  static Optional<Integer> partitionCount(LeaseInfo member) {
    try {
      return Optional.ofNullable(member.attributes().metadata().get(COUNT_KEY))
          .map(Integer::valueOf);
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  void close() {
    synchronized (this) {
      closed = true;
    }
    Watch w = watch;
    if (w != null) {
      w.close();
    }
  }
}
