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
 * @param routesOnly only events of leases that carry an address. Note that an update that removes a
 *     lease's address is then not delivered either; a cache of routes should watch without this
 *     filter (as {@link RoutingTable} does).
 * @param view how much of each event to send: {@link WatchView#FULL} (the default) or {@link
 *     WatchView#BASIC}
 */
public record WatchOptions(
    String prefix,
    long fromRevision,
    Set<EventType> types,
    boolean includeRenewals,
    boolean routesOnly,
    WatchView view) {
  /**
   * Checks the fields and copies the types.
   *
   * @param prefix names starting with this ({@code ""}: every lease)
   * @param fromRevision the first revision to deliver (history first, then live); 0: from now on
   * @param types event types to deliver; empty: every type but RENEWED
   * @param includeRenewals deliver RENEWED events too (live only; they are never in the history)
   * @param routesOnly only events of leases that carry an address. Note that an update that removes
   *     a lease's address is then not delivered either; a cache of routes should watch without this
   *     filter (as {@link RoutingTable} does).
   * @param view how much of each event to send: {@link WatchView#FULL} (the default) or {@link
   *     WatchView#BASIC}
   */
  public WatchOptions {
    Objects.requireNonNull(prefix, "prefix");
    types = Set.copyOf(Objects.requireNonNull(types, "types"));
    if (fromRevision < 0) {
      throw new IllegalArgumentException(
          "fromRevision: must be >= 0 (0: from now on), got " + fromRevision);
    }
    Objects.requireNonNull(view, "view");
    if (types.contains(EventType.UNKNOWN)) {
      throw new IllegalArgumentException("types: UNKNOWN is not an event type one can ask for");
    }
  }

  /**
   * The full view.
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
    return new WatchOptions(prefix, 0, Set.of(), false, false, WatchView.FULL);
  }

  /**
   * These options, from {@code revision} (0: from now on).
   *
   * @param revision the first revision to deliver (0: from now on)
   * @return the options
   */
  public WatchOptions withFromRevision(long revision) {
    return new WatchOptions(prefix, revision, types, includeRenewals, routesOnly, view);
  }

  /**
   * These options, delivering only {@code types} (empty: every type but RENEWED).
   *
   * @param types event types to deliver (empty: every type but RENEWED)
   * @return the options
   */
  public WatchOptions withTypes(Set<EventType> types) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly, view);
  }

  /**
   * These options, with or without RENEWED events.
   *
   * @param include whether to deliver RENEWED events
   * @return the options
   */
  public WatchOptions withRenewals(boolean include) {
    return new WatchOptions(prefix, fromRevision, types, include, routesOnly, view);
  }

  /**
   * These options, with or without only the events of leases that carry an address.
   *
   * @param routesOnly whether to deliver only the events of leases with an address
   * @return the options
   */
  public WatchOptions withRoutesOnly(boolean routesOnly) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly, view);
  }

  /**
   * These options, in {@code view}.
   *
   * @param view how much of each event to send
   * @return the options
   */
  public WatchOptions withView(WatchView view) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly, view);
  }
}
