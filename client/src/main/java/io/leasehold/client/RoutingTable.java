package io.leasehold.client;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The routing table (leases that carry an address) kept in memory by List + Watch: lookups are
 * local and never touch the network. Built by listing at a revision R and watching from R + 1, so
 * it has no gap and no duplicate; it resumes on another node if its node fails, and lists again if
 * it fell behind the cluster's history. Thread-safe.
 *
 * <p>A route appears when a lease with an address is acquired (or gets an address) and disappears
 * when the lease ends or loses its address. A partition's owner is whoever holds {@code
 * partition/<n>} with an address.
 */
public interface RoutingTable extends AutoCloseable {
  /**
   * The route for {@code name}, if a live lease with an address holds it.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return the route, or empty if no live lease with an address holds the name
   */
  Optional<Route> lookup(String name);

  /**
   * The owner of partition {@code partition} (0-255): the route of {@code partition/<partition>}.
   *
   * @param partition the partition, 0 to 255
   * @return the route that owns the partition, if any
   */
  Optional<Route> owner(int partition);

  /**
   * The owner of the partition {@code key} falls in ({@code crc32(key) % 256}).
   *
   * @param key the key whose partition to find
   * @return the route that owns the key's partition, if any
   */
  Optional<Route> ownerOf(String key);

  /**
   * The routes {@code holder} holds, in name order, from the table's own index by holder (no scan
   * of the table, no network).
   *
   * @param holder the holder identity, e.g. a runner whose mailboxes are to move
   * @return the holder's routes, in name order; empty if it holds none
   */
  List<Route> heldBy(String holder);

  /**
   * A snapshot of every route, by name.
   *
   * @return a copy of the routes, keyed by name
   */
  Map<String, Route> routes();

  /**
   * The revision the table reflects: every change up to it has been applied.
   *
   * @return the revision the table reflects
   */
  long revision();

  /**
   * Completes (on the callback executor) once the table reflects {@code revision} or later.
   *
   * @param revision the revision to wait for
   * @return completes with the table's revision once it reached {@code revision}
   */
  CompletableFuture<Long> awaitRevision(long revision);

  /**
   * Adds a listener for changes from now on.
   *
   * @param listener told of each route change, in revision order
   */
  void addListener(RouteListener listener);

  /**
   * Removes a listener; whether it was there.
   *
   * @param listener the listener to remove
   * @return whether it had been added
   */
  boolean removeListener(RouteListener listener);

  /** Stops following the cluster; the table keeps its last content. Idempotent. */
  @Override
  void close();
}
