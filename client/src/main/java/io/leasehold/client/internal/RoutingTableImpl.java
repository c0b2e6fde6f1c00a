package io.leasehold.client.internal;

import io.leasehold.client.ClientClosedException;
import io.leasehold.client.EventType;
import io.leasehold.client.InvalidRequestException;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.Route;
import io.leasehold.client.RouteChange;
import io.leasehold.client.RouteListener;
import io.leasehold.client.RoutingTable;
import io.leasehold.client.ServiceFilter;
import io.leasehold.client.WatchCompactedException;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.client.WatchView;
import io.leasehold.proto.Partitions;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routing table as List + Watch. Lists every page of leases with an address (each page at its
 * own revision; the first one's is R), then watches from R + 1 without the route filter (a node
 * older than its "or an update that removed the address" rule would not send the removal) but with
 * the table's attribute filter (a node sends the updates that take a lease out of it, and an older
 * node ignores it and sends everything, which the table filters again). It watches in the basic
 * view: a route needs only the holder, token and attributes, and the full events are about three
 * times the bytes, which a node pays once per watching proxy. Events are applied only if newer than
 * the entry's own revision, which makes replaying (R, last page] over later pages harmless. If the
 * watch falls out of the history, it lists again and reports the difference.
 */
public final class RoutingTableImpl implements RoutingTable {
  private static final Logger LOG = LoggerFactory.getLogger(RoutingTableImpl.class);

  /** A route and the revision of the change it reflects. */
  private record Entry(Route route, long revision) {}

  private record Waiting(long revision, CompletableFuture<Long> future) {}

  private final ClientCore core;
  private final String prefix;

  /** Which routes the table shows, checked by the node for the watch and here for everything. */
  private final ServiceFilter serviceFilter;

  private final Predicate<Route> filter;

  /**
   * The latest revision of the current listing's pages. Until the watch has passed it, the entries
   * keep every listed route, also those the filter hides, so that an event older than a later
   * page's view of its name cannot bring back a route; after it, only the routes the filter lets
   * pass (the node no longer tells the table about the others).
   */
  private long listedThrough;

  private final SerialExecutor work;
  private final SerialExecutor notify;
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  // The names of each holder's routes: written with entries, on the work executor only.
  private final ConcurrentHashMap<String, Set<String>> byHolder = new ConcurrentHashMap<>();
  private final CopyOnWriteArrayList<RouteListener> listeners = new CopyOnWriteArrayList<>();
  private final CompletableFuture<RoutingTable> ready = new CompletableFuture<>();
  private volatile long revision;

  // Guarded by this.
  private final List<Waiting> waiting = new ArrayList<>();
  private ResumingWatch watch;
  private boolean closed;
  private int failures;

  RoutingTableImpl(ClientCore core, String prefix, ServiceFilter filter) {
    this.core = core;
    this.prefix = prefix;
    this.serviceFilter = filter;
    this.filter = filter::matches;
    this.work = new SerialExecutor(core.internal());
    this.notify = new SerialExecutor(core.callbackExecutor());
  }

  /** Completes once the first listing is in. */
  CompletableFuture<RoutingTable> start() {
    work.execute(this::list);
    return ready;
  }

  private void list() {
    if (isClosed()) {
      return;
    }
    ListRequest request = ListRequest.newBuilder().setPrefix(prefix).setWithAddress(true).build();
    Listings.all(core.calls(), request)
        .whenComplete(
            (pages, error) ->
                work.execute(
                    () -> {
                      if (error != null) {
                        listFailed(Futures.unwrap(error));
                      } else {
                        loaded(pages);
                      }
                    }));
  }

  private void listFailed(Throwable error) {
    if (error instanceof ClientClosedException || error instanceof InvalidRequestException) {
      ready.completeExceptionally(error);
      close();
      return;
    }
    long delay;
    synchronized (this) {
      if (closed) {
        return;
      }
      failures++;
      delay =
          core.settings()
              .retry()
              .backoff(failures, ThreadLocalRandom.current().nextDouble())
              .toNanos();
    }
    LOG.debug(
        "routing table listing of \"{}\" failed ({}); again in {} ms",
        prefix,
        error.toString(),
        delay / 1_000_000);
    core.schedule(() -> work.execute(this::list), delay);
  }

  /** On the work executor: replaces the content with a fresh listing and watches from after it. */
  private void loaded(List<ListResponse> pages) {
    long listed = pages.get(0).getRevision();
    Map<String, Entry> fresh = new HashMap<>();
    listedThrough = listed;
    for (ListResponse page : pages) {
      listedThrough = Math.max(listedThrough, page.getRevision());
      for (Lease l : page.getLeasesList()) {
        Protos.route(l.getName(), l)
            .ifPresent(r -> fresh.put(l.getName(), new Entry(r, l.getModRevision())));
      }
    }
    List<RouteChange> changes = new ArrayList<>();
    for (Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Entry> e = it.next();
      if (!fresh.containsKey(e.getKey())) {
        it.remove();
        unindex(e.getValue().route().holder(), e.getKey());
        change(e.getKey(), Optional.of(e.getValue().route()), Optional.empty(), listed, changes);
      }
    }
    fresh.forEach(
        (name, entry) -> {
          Entry old = put(name, entry);
          change(
              name,
              Optional.ofNullable(old).map(Entry::route),
              Optional.of(entry.route()),
              listed,
              changes);
        });
    ResumingWatch previous;
    ResumingWatch next;
    synchronized (this) {
      if (closed) {
        return;
      }
      failures = 0;
      previous = watch;
      WatchOptions options =
          WatchOptions.of(prefix).withView(WatchView.BASIC).withFilter(serviceFilter);
      // A list across lease groups returns each group's revision as a token; revisions of
      // different groups do not compare, so the watch starts from the token.
      com.google.protobuf.ByteString token = pages.get(0).getResumeToken();
      next =
          watch =
              token.isEmpty()
                  ? core.internalWatch(
                      options.withFromRevision(listed + 1, pages.get(0).getGroup()),
                      new Follower(),
                      work)
                  : core.internalWatch(options, token, new Follower(), work);
    }
    if (previous != null) {
      previous.close();
    }
    next.start();
    advance(listed);
    announce(changes);
    ready.complete(this);
  }

  /** Applies the watch's events on the work executor. */
  private final class Follower implements WatchListener {
    @Override
    public void onEvent(WatchEvent e) {
      Entry current = entries.get(e.name());
      if (current != null && current.revision() >= e.revision()) {
        return; // the entry (from a later page) already reflects this change
      }
      if (e.type() == EventType.RENEWED || e.lease().isEmpty()) {
        return; // renewals move only renewal fields; events about no lease (policy changes) touch
        // no route
      }
      // Endings remove the route; a grant or change (also of a type newer than this SDK) sets it
      // from the lease.
      Optional<Route> after =
          e.endsLease() ? Optional.empty() : Protos.route(e.name(), e.lease().get());
      Optional<Route> before = Optional.ofNullable(current).map(Entry::route);
      if (after.isPresent() && (filter.test(after.get()) || e.revision() <= listedThrough)) {
        put(e.name(), new Entry(after.get(), e.revision()));
      } else if (current != null) {
        entries.remove(e.name());
        unindex(current.route().holder(), e.name());
      }
      List<RouteChange> changes = new ArrayList<>(1);
      change(e.name(), before, after, e.revision(), changes);
      announce(changes);
    }

    @Override
    public void onProgress(long r) {
      advance(r);
    }

    @Override
    public void onError(LeaseholdException error) {
      if (error instanceof WatchCompactedException) {
        LOG.info(
            "routing table of \"{}\" fell behind the cluster's history; listing again", prefix);
        list();
      } else {
        listFailed(error);
      }
    }
  }

  /** The change the table shows, if any: the routes before and after, as the filter sees them. */
  private void change(
      String name,
      Optional<Route> before,
      Optional<Route> after,
      long revision,
      List<RouteChange> changes) {
    Optional<Route> shownBefore = before.filter(filter);
    Optional<Route> shownAfter = after.filter(filter);
    if (!shownBefore.equals(shownAfter)) {
      changes.add(new RouteChange(name, shownBefore, shownAfter, revision));
    }
  }

  /** Sets a name's entry and keeps the holder index in step; the entry it replaced, or null. */
  private Entry put(String name, Entry entry) {
    Entry old = entries.put(name, entry);
    String holder = entry.route().holder();
    if (old != null && !old.route().holder().equals(holder)) {
      unindex(old.route().holder(), name);
    }
    byHolder.computeIfAbsent(holder, h -> ConcurrentHashMap.newKeySet()).add(name);
    return old;
  }

  private void unindex(String holder, String name) {
    byHolder.computeIfPresent(
        holder,
        (h, names) -> {
          names.remove(name);
          return names.isEmpty() ? null : names;
        });
  }

  private void advance(long r) {
    if (r >= listedThrough && listedThrough > 0) {
      // Past every listed page: drop the hidden routes the listing kept (see listedThrough).
      entries.forEach(
          (name, entry) -> {
            if (!filter.test(entry.route())) {
              entries.remove(name);
              unindex(entry.route().holder(), name);
            }
          });
      listedThrough = 0;
    }
    List<Waiting> done = new ArrayList<>();
    synchronized (this) {
      if (r <= revision) {
        return;
      }
      revision = r;
      for (Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
        Waiting w = it.next();
        if (w.revision() <= r) {
          it.remove();
          done.add(w);
        }
      }
    }
    done.forEach(w -> notify.execute(() -> w.future().complete(r)));
  }

  private void announce(List<RouteChange> changes) {
    if (changes.isEmpty()) {
      return;
    }
    // The listeners registered when the change was applied: one added later hears only later
    // changes.
    List<RouteListener> targets = List.copyOf(listeners);
    notify.execute(
        () -> {
          for (RouteChange c : changes) {
            for (RouteListener l : targets) {
              try {
                l.onChange(c);
              } catch (RuntimeException ex) {
                LOG.warn("route listener threw on {}", c.name(), ex);
              }
            }
          }
        });
  }

  @Override
  public Optional<Route> lookup(String name) {
    Entry e = entries.get(Objects.requireNonNull(name, "name"));
    return e == null ? Optional.empty() : Optional.of(e.route()).filter(filter);
  }

  @Override
  public Optional<Route> owner(int partition) {
    return lookup(Partitions.leaseName(partition));
  }

  @Override
  public Optional<Route> ownerOf(String key) {
    return owner(Partitions.of(Objects.requireNonNull(key, "key")));
  }

  @Override
  public List<Route> heldBy(String holder) {
    Set<String> names = byHolder.get(Objects.requireNonNull(holder, "holder"));
    if (names == null) {
      return List.of();
    }
    List<Route> held = new ArrayList<>(names.size());
    for (String name : names) {
      Entry e = entries.get(name);
      if (e != null && e.route().holder().equals(holder) && filter.test(e.route())) {
        held.add(e.route());
      }
    }
    held.sort(Comparator.comparing(Route::name));
    return held;
  }

  @Override
  public Map<String, Route> routes() {
    Map<String, Route> out = new HashMap<>();
    entries.forEach(
        (k, v) -> {
          if (filter.test(v.route())) {
            out.put(k, v.route());
          }
        });
    return Map.copyOf(out);
  }

  @Override
  public long revision() {
    return revision;
  }

  @Override
  public CompletableFuture<Long> awaitRevision(long r) {
    CompletableFuture<Long> f = new CompletableFuture<>();
    synchronized (this) {
      if (revision < r) {
        waiting.add(new Waiting(r, f));
        return f.copy();
      }
    }
    return core.onCallbacks(CompletableFuture.completedFuture(revision));
  }

  @Override
  public void addListener(RouteListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  @Override
  public boolean removeListener(RouteListener listener) {
    return listeners.remove(listener);
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    ResumingWatch w;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      w = watch;
      watch = null;
    }
    if (w != null) {
      w.close();
    }
    ready.completeExceptionally(
        new ClientClosedException(
            "routing table of \"" + prefix + "\": closed before it was loaded"));
    core.forget(this);
  }
}
