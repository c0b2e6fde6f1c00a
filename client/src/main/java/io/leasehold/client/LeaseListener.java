package io.leasehold.client;

/**
 * Told about every state change of a lease handle, in order, on the client's callback executor
 * (never on a gRPC thread). A listener that throws is logged and keeps being called.
 */
@FunctionalInterface
public interface LeaseListener {
  /**
   * Told of each change of a lease's state, in order.
   *
   * @param transition the change
   */
  void onTransition(LeaseTransition transition);
}
