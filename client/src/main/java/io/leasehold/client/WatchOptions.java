package io.leasehold.client;

import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.EventView;
import java.util.Objects;
import java.util.Set;

/**
 * What a {@link LeaseholdClient#watch} streams.
 *
 * @param prefix          names starting with this ({@code ""}: every lease)
 * @param fromRevision    the first revision to deliver (history first, then live); 0: from now on
 * @param types           event types to deliver; empty: every type but RENEWED
 * @param includeRenewals deliver RENEWED events too (live only; they are never in the history)
 * @param routesOnly      only events of leases that carry an address. Note that an update that
 *                        removes a lease's address is then not delivered either; a cache of
 *                        routes should watch without this filter (as {@link RoutingTable} does).
 * @param view            how much of each event to send. {@link EventView#EVENT_VIEW_FULL} (the
 *                        default) sends everything. {@link EventView#EVENT_VIEW_BASIC} sends about
 *                        a third of the bytes: each event's type, revision, name, reason and
 *                        message, and of its lease only the holder, token and attributes; the
 *                        lease's TTL, times and counters, and the event's time, are then zero
 *                        ({@link java.time.Instant#EPOCH}, {@link java.time.Duration#ZERO}, 0).
 *                        For watchers that only follow who holds what where, as {@link
 *                        RoutingTable} does.
 */
public record WatchOptions(String prefix, long fromRevision, Set<Event.Type> types, boolean includeRenewals, boolean routesOnly,
    EventView view) {
  public WatchOptions {
    Objects.requireNonNull(prefix, "prefix");
    types = Set.copyOf(Objects.requireNonNull(types, "types"));
    if (fromRevision < 0) {
      throw new IllegalArgumentException("fromRevision: must be >= 0 (0: from now on), got " + fromRevision);
    }
    Objects.requireNonNull(view, "view");
    if (view == EventView.UNRECOGNIZED) {
      throw new IllegalArgumentException("view: must be EVENT_VIEW_FULL, EVENT_VIEW_BASIC or EVENT_VIEW_UNSPECIFIED (full), got UNRECOGNIZED");
    }
  }

  /** The full view. */
  public WatchOptions(String prefix, long fromRevision, Set<Event.Type> types, boolean includeRenewals, boolean routesOnly) {
    this(prefix, fromRevision, types, includeRenewals, routesOnly, EventView.EVENT_VIEW_FULL);
  }

  /** Every change under {@code prefix}, from now on, in the full view. */
  public static WatchOptions of(String prefix) {
    return new WatchOptions(prefix, 0, Set.of(), false, false, EventView.EVENT_VIEW_FULL);
  }

  public WatchOptions withFromRevision(long revision) {
    return new WatchOptions(prefix, revision, types, includeRenewals, routesOnly, view);
  }

  public WatchOptions withTypes(Set<Event.Type> types) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly, view);
  }

  public WatchOptions withRenewals(boolean include) {
    return new WatchOptions(prefix, fromRevision, types, include, routesOnly, view);
  }

  public WatchOptions withRoutesOnly(boolean routesOnly) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly, view);
  }

  public WatchOptions withView(EventView view) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly, view);
  }
}
