package io.leasehold.client;

import java.util.Objects;
import java.util.Optional;

/**
 * A change to the routing table.
 *
 * @param name the route's name
 * @param previous the route before (absent: the name was not routed)
 * @param current the route after (absent: the name is no longer routed)
 * @param revision the revision of the change
 */
public record RouteChange(
    String name, Optional<Route> previous, Optional<Route> current, long revision) {
  /**
   * Checks that every field is given.
   *
   * @param name the route's name
   * @param previous the route before (absent: the name was not routed)
   * @param current the route after (absent: the name is no longer routed)
   * @param revision the revision of the change
   */
  public RouteChange {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(previous, "previous");
    Objects.requireNonNull(current, "current");
  }
}
