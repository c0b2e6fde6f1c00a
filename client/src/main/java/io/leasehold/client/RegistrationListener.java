package io.leasehold.client;

/** Told about a registration's state changes, in order, on the client's callback executor. */
@FunctionalInterface
public interface RegistrationListener {
  /**
   * Told of each change of a registration's state, in order.
   *
   * @param registration the registration that changed
   * @param from its state before
   * @param to its state now
   */
  void onStateChange(Registration registration, RegistrationState from, RegistrationState to);
}
