package io.leasehold.client;

import io.leasehold.proto.v1.Event;
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
 */
public record WatchOptions(String prefix, long fromRevision, Set<Event.Type> types, boolean includeRenewals, boolean routesOnly) {
  public WatchOptions {
    Objects.requireNonNull(prefix, "prefix");
    types = Set.copyOf(Objects.requireNonNull(types, "types"));
    if (fromRevision < 0) {
      throw new IllegalArgumentException("fromRevision: must be >= 0 (0: from now on), got " + fromRevision);
    }
  }

  /** Every change under {@code prefix}, from now on. */
  public static WatchOptions of(String prefix) {
    return new WatchOptions(prefix, 0, Set.of(), false, false);
  }

  public WatchOptions withFromRevision(long revision) {
    return new WatchOptions(prefix, revision, types, includeRenewals, routesOnly);
  }

  public WatchOptions withTypes(Set<Event.Type> types) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly);
  }

  public WatchOptions withRenewals(boolean include) {
    return new WatchOptions(prefix, fromRevision, types, include, routesOnly);
  }

  public WatchOptions withRoutesOnly(boolean routesOnly) {
    return new WatchOptions(prefix, fromRevision, types, includeRenewals, routesOnly);
  }
}
