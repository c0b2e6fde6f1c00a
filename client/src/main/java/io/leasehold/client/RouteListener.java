package io.leasehold.client;

/** Told about every change of a {@link RoutingTable}, in order, on the client's callback executor. */
@FunctionalInterface
public interface RouteListener {
  void onChange(RouteChange change);
}
