package io.leasehold.client;

import java.util.Objects;
import java.util.Set;

/**
 * What a {@link LeaseholdClient#watch} streams.
 *
 * @param prefix names starting with this ({@code ""}: every lease)
 * @param fromRevision the first revision to deliver (history first, then live); 0: from now on
 * @param types event types to deliver; empty: every type but RENEWED
 * @param includeRenewals deliver RENEWED events too (live only; they are never in the history)
 * @param routesOnly only events of leases that carry an address, and updates that remove one (so a
 *     cache of routes hears that a route is gone). Nodes older than the filter below leave updates
 *     that remove an address out.
 * @param view how much of each event to send: {@link WatchView#FULL} (the default) or {@link
 *     WatchView#BASIC}
 * @param filter what the leases' attributes must hold, checked by the node: status, metadata and
 *     zones, as {@link ServiceFilter#matches(Route)} decides (the zones are a set); an update is
 *     delivered also when its lease passed the filter before it, so a watcher hears that a lease
 *     left the filter. Events about no lease (policy changes) are not filtered by it. {@link
 *     ServiceFilter#all()}: every lease. A node older than this filter sends every event: check
 *     {@link ServiceFilter#matches} when that matters.
 * @param fromGroup the group {@code fromRevision} counts in, as a {@link LeaseListing#group()} or a
 *     {@link WatchEvent#group()} gave it; -1: not said. On a cluster with lease groups each group
 *     counts its own revisions and a namespace may move between them: with its group, a watch of a
 *     namespace that moved since goes on in its new group (or, where it would miss events, ends
 *     with {@link WatchCompactedException}); without, a revision of a namespace that has moved is
 *     refused unless no other group could have given it. {@link #withStartAfter(LeaseListing)} sets
 *     both.
 */
public record WatchOptions(
    String prefix,
    long fromRevision,
    Set<EventType> types,
    boolean includeRenewals,
    boolean routesOnly,
    WatchView view,
    ServiceFilter filter,
    int fromGroup) {
  /**
   * Checks the fields and copies the types.
   *
   * @param prefix names starting with this ({@code ""}: every lease)
   * @param fromRevision the first revision to deliver (history first, then live); 0: from now on
   * @param types event types to deliver; empty: every type but RENEWED
   * @param includeRenewals deliver RENEWED events too (live only; they are never in the history)
   * @param routesOnly only events of leases that carry an address, and updates that remove one
   * @param view how much of each event to send: {@link WatchView#FULL} (the default) or {@link
   *     WatchView#BASIC}
   * @param filter what the leases' attributes must hold ({@link ServiceFilter#all()}: nothing)
   * @param fromGroup the group {@code fromRevision} counts in (-1: not said)
   */
  public WatchOptions {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(filter, "filter");
    types = Set.copyOf(Objects.requireNonNull(types, "types"));
    if (fromRevision < 0) {
      throw new IllegalArgumentException(
          "fromRevision: must be >= 0 (0: from now on), got " + fromRevision);
    }
    Objects.requireNonNull(view, "view");
    if (types.contains(EventType.UNKNOWN)) {
      throw new IllegalArgumentException("types: UNKNOWN is not an event type one can ask for");
    }
    if (fromGroup < -1) {
      throw new IllegalArgumentException(
          "fromGroup: must be a group (0: the meta group) or -1 (not said), got " + fromGroup);
    }
  }

  /**
   * Every lease's events in {@code view}, with only the leases whose attributes pass {@code
   * filter}.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @param fromRevision the first revision to deliver (0: from now on)
   * @param types event types to deliver (empty: every type but RENEWED)
   * @param includeRenewals whether to deliver RENEWED events
   * @param routesOnly whether to deliver only the events of leases with an address
   * @param view how much of each event to send
   * @param filter what the leases' attributes must hold ({@link ServiceFilter#all()}: nothing)
   */
  public WatchOptions(
      String prefix,
      long fromRevision,
      Set<EventType> types,
      boolean includeRenewals,
      boolean routesOnly,
      WatchView view,
      ServiceFilter filter) {
    this(prefix, fromRevision, types, includeRenewals, routesOnly, view, filter, -1);
  }

  /**
   * Every lease's events in {@code view}.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @param fromRevision the first revision to deliver (0: from now on)
   * @param types event types to deliver (empty: every type but RENEWED)
   * @param includeRenewals whether to deliver RENEWED events
   * @param routesOnly whether to deliver only the events of leases with an address
   * @param view how much of each event to send
   */
  public WatchOptions(
      String prefix,
      long fromRevision,
      Set<EventType> types,
      boolean includeRenewals,
      boolean routesOnly,
      WatchView view) {
    this(prefix, fromRevision, types, includeRenewals, routesOnly, view, ServiceFilter.all());
  }

  /**
   * Every lease's events in the full view.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @param fromRevision the first revision to deliver (0: from now on)
   * @param types event types to deliver (empty: every type but RENEWED)
   * @param includeRenewals whether to deliver RENEWED events
   * @param routesOnly whether to deliver only the events of leases with an address
   */
  public WatchOptions(
      String prefix,
      long fromRevision,
      Set<EventType> types,
      boolean includeRenewals,
      boolean routesOnly) {
    this(prefix, fromRevision, types, includeRenewals, routesOnly, WatchView.FULL);
  }

  /**
   * Every change under {@code prefix}, from now on, in the full view.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return the options
   */
  public static WatchOptions of(String prefix) {
    return new WatchOptions(prefix, 0, Set.of(), false, false, WatchView.FULL, ServiceFilter.all());
  }

  /**
   * These options, from {@code revision} (0: from now on).
   *
   * @param revision the first revision to deliver (0: from now on)
   * @return the options
   */
  public WatchOptions withFromRevision(long revision) {
    return withFromRevision(revision, -1);
  }

  /**
   * These options, from {@code revision} of {@code group}.
   *
   * @param revision the first revision to deliver (0: from now on)
   * @param group the group it counts in, as a listing or an event gave it (-1: not said)
   * @return the options
   */
  public WatchOptions withFromRevision(long revision, int group) {
    return new WatchOptions(
        prefix, revision, types, includeRenewals, routesOnly, view, filter, group);
  }

  /**
   * These options, from right after {@code listing}: its revision + 1, in its group. A list of the
   * same prefix followed by this watch misses nothing and repeats nothing.
   *
   * @param listing a listing of this prefix
   * @return the options
   */
  public WatchOptions withStartAfter(LeaseListing listing) {
    return withFromRevision(listing.revision() + 1, listing.group());
  }

  /**
   * These options, delivering only {@code types} (empty: every type but RENEWED).
   *
   * @param types event types to deliver (empty: every type but RENEWED)
   * @return the options
   */
  public WatchOptions withTypes(Set<EventType> types) {
    return new WatchOptions(
        prefix, fromRevision, types, includeRenewals, routesOnly, view, filter, fromGroup);
  }

  /**
   * These options, with or without RENEWED events.
   *
   * @param include whether to deliver RENEWED events
   * @return the options
   */
  public WatchOptions withRenewals(boolean include) {
    return new WatchOptions(
        prefix, fromRevision, types, include, routesOnly, view, filter, fromGroup);
  }

  /**
   * These options, with or without only the events of leases that carry an address.
   *
   * @param routesOnly whether to deliver only the events of leases with an address
   * @return the options
   */
  public WatchOptions withRoutesOnly(boolean routesOnly) {
    return new WatchOptions(
        prefix, fromRevision, types, includeRenewals, routesOnly, view, filter, fromGroup);
  }

  /**
   * These options, in {@code view}.
   *
   * @param view how much of each event to send
   * @return the options
   */
  public WatchOptions withView(WatchView view) {
    return new WatchOptions(
        prefix, fromRevision, types, includeRenewals, routesOnly, view, filter, fromGroup);
  }

  /**
   * These options, with only the events of leases whose attributes pass {@code filter} (and the
   * updates that take a lease out of it).
   *
   * @param filter what the leases' attributes must hold ({@link ServiceFilter#all()}: nothing)
   * @return the options
   */
  public WatchOptions withFilter(ServiceFilter filter) {
    return new WatchOptions(
        prefix, fromRevision, types, includeRenewals, routesOnly, view, filter, fromGroup);
  }
}
