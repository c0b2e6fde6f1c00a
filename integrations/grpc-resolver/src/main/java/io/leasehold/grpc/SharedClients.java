package io.leasehold.grpc;

import io.leasehold.client.LeaseholdClient;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The clients a provider creates itself, one per endpoint list, shared by the resolvers that use
 * those endpoints and closed when the last of them shuts down.
 */
final class SharedClients {
  private final Function<List<String>, LeaseholdClient> connect;
  // Guarded by this.
  private final Map<List<String>, Shared> open = new HashMap<>();

  private static final class Shared {
    final LeaseholdClient client;
    int users;

    Shared(LeaseholdClient client) {
      this.client = client;
    }
  }

  SharedClients(Function<List<String>, LeaseholdClient> connect) {
    this.connect = connect;
  }

  /** The source of one resolver: the shared client of {@code endpoints}. */
  ClientSource source(List<String> endpoints) {
    List<String> key = List.copyOf(endpoints);
    return new ClientSource() {
      @Override
      public LeaseholdClient acquire() {
        return SharedClients.this.acquire(key);
      }

      @Override
      public void release(LeaseholdClient client) {
        SharedClients.this.release(key, client);
      }

      @Override
      public String describe() {
        return "the cluster at " + key;
      }
    };
  }

  synchronized LeaseholdClient acquire(List<String> endpoints) {
    Shared s = open.computeIfAbsent(endpoints, e -> new Shared(connect.apply(e)));
    s.users++;
    return s.client;
  }

  void release(List<String> endpoints, LeaseholdClient client) {
    synchronized (this) {
      Shared s = open.get(endpoints);
      if (s == null || s.client != client || --s.users > 0) {
        return;
      }
      open.remove(endpoints);
    }
    // Off the caller's thread: resolvers shut down in the channel's synchronization context, and
    // closing a client waits (bounded) for the cluster.
    Thread closer = new Thread(client::close, "leasehold-resolver-client-close");
    closer.setDaemon(true);
    closer.start();
  }

  /** How many clients are open, for tests. */
  synchronized int openClients() {
    return open.size();
  }
}
