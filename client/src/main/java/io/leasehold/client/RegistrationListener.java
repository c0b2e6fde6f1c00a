package io.leasehold.client;

/** Told about a registration's state changes, in order, on the client's callback executor. */
@FunctionalInterface
public interface RegistrationListener {
  void onStateChange(Registration registration, RegistrationState from, RegistrationState to);
}
