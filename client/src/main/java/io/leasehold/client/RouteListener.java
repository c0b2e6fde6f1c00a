package io.leasehold.client;

/**
 * Told about every change of a {@link RoutingTable}, in order, on the client's callback executor.
 */
@FunctionalInterface
public interface RouteListener {
  /**
   * Told of each change of a route, in revision order.
   *
   * @param change the change
   */
  void onChange(RouteChange change);
}
