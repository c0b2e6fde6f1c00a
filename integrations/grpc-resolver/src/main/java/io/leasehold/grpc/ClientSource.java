package io.leasehold.grpc;

import io.leasehold.client.LeaseholdClient;

/** Where a resolver gets its client when it starts, and gives it back when it shuts down. */
interface ClientSource {
  /** The client to read the registry with; the caller gives it back with {@link #release}. */
  LeaseholdClient acquire();

  /** Gives back a client {@link #acquire} returned. */
  void release(LeaseholdClient client);

  /** Endpoints (or the client) the resolver reads from, for error messages. */
  String describe();

  /** A client the application owns: shared by every resolver, never closed here. */
  static ClientSource given(LeaseholdClient client) {
    return new ClientSource() {
      @Override
      public LeaseholdClient acquire() {
        return client;
      }

      @Override
      public void release(LeaseholdClient c) {}

      @Override
      public String describe() {
        return "the cluster at " + client.endpoints();
      }
    };
  }
}
