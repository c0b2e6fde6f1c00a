package io.leasehold.benchmarks.compare;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;
import io.leasehold.cli.bench.AcquireRelease;
import io.leasehold.cli.bench.ContendedLock;
import io.leasehold.cli.bench.Failover;
import io.leasehold.cli.bench.Renew;
import io.leasehold.cli.bench.WatchLatency;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Each workload's target on etcd, through jetcd the way an etcd user takes a name: a
 * create-if-absent transaction on the name's key, attached to a lease.
 */
final class EtcdTargets {
  static final int MAX_IN_FLIGHT = 512;

  private EtcdTargets() {}

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** The key is created only if absent (its create revision is 0): the name was free. */
  static CompletableFuture<Void> createIfAbsent(KV kv, String name, long leaseId) {
    ByteSequence key = bytes(name);
    PutOption put =
        leaseId == 0 ? PutOption.DEFAULT : PutOption.builder().withLeaseId(leaseId).build();
    return kv.txn()
        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
        .Then(Op.put(key, bytes("held"), put))
        .commit()
        .thenAccept(
            r -> {
              if (!r.isSucceeded()) {
                throw new IllegalStateException(name + ": already held");
              }
            });
  }

  /** The two shapes of taking a name on etcd. */
  enum Shape {
    /** A lease per name: grant, create the key with it, revoke (three writes a cycle). */
    LEASE_PER_NAME,
    /**
     * concurrency.Mutex's shape: one session lease per client, create the key with it, delete (two
     * writes a cycle).
     */
    SESSION
  }

  /** Held: the key, and the lease to revoke (LEASE_PER_NAME) or 0. */
  record Held(String name, long leaseId) {}

  static AcquireRelease.Target<Held> acquireRelease(
      Client client, Shape shape, Duration ttl, int workers) {
    KV kv = client.getKVClient();
    Lease leases = client.getLeaseClient();
    long[] sessions = new long[workers];
    if (shape == Shape.SESSION) {
      for (int w = 0; w < workers; w++) {
        sessions[w] = leases.grant(Math.max(60, ttl.toSeconds())).join().getID();
      }
    }
    return new AcquireRelease.Target<>() {
      @Override
      public CompletableFuture<Held> acquire(int worker, String name) {
        if (shape == Shape.SESSION) {
          return createIfAbsent(kv, name, sessions[worker]).thenApply(v -> new Held(name, 0));
        }
        return leases
            .grant(ttl.toSeconds())
            .thenCompose(
                g -> createIfAbsent(kv, name, g.getID()).thenApply(v -> new Held(name, g.getID())));
      }

      @Override
      public CompletableFuture<Void> release(int worker, Held held) {
        return held.leaseId() == 0
            ? kv.delete(bytes(held.name())).thenAccept(r -> {})
            : leases.revoke(held.leaseId()).thenAccept(r -> {});
      }
    };
  }

  /**
   * A client's session: one lease, kept alive by jetcd's keep-alive stream; every key attached to
   * it. Lost when etcd answers a keep-alive with no TTL left (the lease expired), or, found at the
   * end, when keys are gone.
   */
  static final class Session implements AutoCloseable {
    final long leaseId;
    final AtomicBoolean lost = new AtomicBoolean();
    private final CloseableClient keepAlive;

    Session(Client client, Duration ttl, Runnable onLost) {
      this.leaseId = client.getLeaseClient().grant(ttl.toSeconds()).join().getID();
      this.keepAlive =
          client
              .getLeaseClient()
              .keepAlive(
                  leaseId,
                  new StreamObserver<>() {
                    @Override
                    public void onNext(LeaseKeepAliveResponse r) {
                      if (r.getTTL() <= 0 && lost.compareAndSet(false, true)) {
                        onLost.run();
                      }
                    }

                    @Override
                    public void onError(Throwable t) {
                      // jetcd tells every observer of a broken stream (its node died) and keeps the
                      // lease
                      // alive on another node; whether the keys survived is checked at the end.
                    }

                    @Override
                    public void onCompleted() {}
                  });
    }

    @Override
    public void close() {
      keepAlive.close();
    }
  }

  static CompletableFuture<Void> attachAll(
      KV kv, List<String> names, long leaseId, AtomicLong acquired) {
    Semaphore window = new Semaphore(MAX_IN_FLIGHT);
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (String name : names) {
      window.acquireUninterruptibly();
      CompletableFuture<Void> f =
          createIfAbsent(kv, name, leaseId).thenRun(acquired::incrementAndGet);
      f.whenComplete((v, e) -> window.release());
      all.add(f);
    }
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
  }

  /** Keys still there: what a session kept alive. */
  static long present(KV kv, List<String> names) {
    long n = 0;
    List<CompletableFuture<Long>> counts = new ArrayList<>();
    for (String name : names) {
      counts.add(
          kv.get(bytes(name), GetOption.builder().withCountOnly(true).build())
              .thenApply(r -> r.getCount()));
    }
    for (CompletableFuture<Long> c : counts) {
      n += c.join();
    }
    return n;
  }

  /**
   * Each client keeps one session lease alive and attaches its names' keys to it, as an etcd user
   * keeps many keys alive. A name is lost if its session lapsed or its key is gone at the end.
   */
  static Renew.Target renew(List<Client> clients, Duration ttl) {
    Map<Integer, Session> sessions = new ConcurrentHashMap<>();
    Map<Integer, List<String>> namesOf = new ConcurrentHashMap<>();
    Map<Integer, Consumer<String>> lostOf = new ConcurrentHashMap<>();
    return new Renew.Target() {
      @Override
      public CompletableFuture<Void> holdAll(
          int client, List<String> names, Consumer<String> onLost, AtomicLong acquired) {
        namesOf.put(client, names);
        lostOf.put(client, onLost);
        Session s = new Session(clients.get(client), ttl, () -> names.forEach(onLost));
        sessions.put(client, s);
        return attachAll(clients.get(client).getKVClient(), names, s.leaseId, acquired);
      }

      @Override
      public CompletableFuture<Void> releaseAll(int client) {
        Session s = sessions.remove(client);
        List<String> names = namesOf.getOrDefault(client, List.of());
        if (s != null && !s.lost.get()) {
          long missing = names.size() - present(clients.get(client).getKVClient(), names);
          for (long i = 0; i < missing; i++) {
            lostOf.get(client).accept("(a key of client " + client + ")");
          }
        }
        if (s == null) {
          return CompletableFuture.completedFuture(null);
        }
        s.close();
        return clients.get(client).getLeaseClient().revoke(s.leaseId).thenAccept(r -> {});
      }

      @Override
      public String keepAliveShape() {
        return "one session lease a client, every key attached, kept alive by jetcd's keep-alive stream";
      }
    };
  }

  /**
   * etcd's lock service (v3lock), each worker with a session lease of its own; the token is the
   * lock's revision.
   */
  static ContendedLock.Target lock(List<Client> clients, Duration ttl, int workers) {
    Map<Integer, Session> sessions = new ConcurrentHashMap<>();
    Map<String, ByteSequence> ownership = new ConcurrentHashMap<>();
    return new ContendedLock.Target() {
      @Override
      public long lock(int worker, String name) throws Exception {
        Client c = clients.get(worker % clients.size());
        Session s = sessions.computeIfAbsent(worker, w -> new Session(c, ttl, () -> {}));
        LockResponse r = c.getLockClient().lock(bytes(name), s.leaseId).get();
        ownership.put(worker + "|" + name, r.getKey());
        return r.getHeader().getRevision();
      }

      @Override
      public void unlock(int worker, String name) throws Exception {
        Client c = clients.get(worker % clients.size());
        c.getLockClient().unlock(ownership.remove(worker + "|" + name)).get();
      }
    };
  }

  /**
   * Puts at the given rate through {@code writer}; watchers on clients that each know one member.
   */
  static WatchLatency.Target watch(
      Client writer,
      String leaderEndpoint,
      String followerEndpoint,
      Function<String, Client> clientOf) {
    KV kv = writer.getKVClient();
    return new WatchLatency.Target() {
      @Override
      public AutoCloseable watch(boolean onLeader, String prefix, Consumer<String> onCreated) {
        Client c = clientOf.apply(onLeader ? leaderEndpoint : followerEndpoint);
        Watch.Watcher w =
            c.getWatchClient()
                .watch(
                    bytes(prefix),
                    WatchOption.builder().isPrefix(true).build(),
                    response -> {
                      for (WatchEvent e : response.getEvents()) {
                        if (e.getEventType() == WatchEvent.EventType.PUT
                            && e.getKeyValue().getVersion() == 1) {
                          onCreated.accept(
                              e.getKeyValue().getKey().toString(StandardCharsets.UTF_8));
                        }
                      }
                    });
        return () -> {
          w.close();
          c.close();
        };
      }

      @Override
      public CompletableFuture<Void> create(String name) {
        return createIfAbsent(kv, name, 0);
      }

      @Override
      public CompletableFuture<Void> cleanUp(List<String> names) {
        if (names.isEmpty()) {
          return CompletableFuture.completedFuture(null);
        }
        String first = names.get(0);
        String prefix = first.substring(0, first.lastIndexOf('/') + 1);
        return kv.delete(bytes(prefix), DeleteOption.builder().isPrefix(true).build())
            .thenAccept(r -> {});
      }
    };
  }

  /** Probes with create-if-absent (then delete) and holds keys on one session lease. */
  static Failover.Target failover(Client client, Duration ttl) {
    KV kv = client.getKVClient();
    Session[] session = new Session[1];
    List<String> heldNames = new ArrayList<>();
    Consumer<String>[] lost = new Consumer[1];
    return new Failover.Target() {
      @Override
      public CompletableFuture<Void> probe(String name) {
        return createIfAbsent(kv, name, 0).thenRun(() -> kv.delete(bytes(name)));
      }

      @Override
      public CompletableFuture<Void> holdAll(List<String> names, Consumer<String> onLost) {
        heldNames.addAll(names);
        lost[0] = onLost;
        session[0] = new Session(client, ttl, () -> names.forEach(onLost));
        return attachAll(kv, names, session[0].leaseId, new AtomicLong());
      }

      @Override
      public CompletableFuture<Void> releaseAll() {
        if (session[0] == null) {
          return CompletableFuture.completedFuture(null);
        }
        if (!session[0].lost.get()) {
          long missing = heldNames.size() - present(kv, heldNames);
          for (long i = 0; i < missing; i++) {
            lost[0].accept("(a held key)");
          }
        }
        session[0].close();
        return client.getLeaseClient().revoke(session[0].leaseId).thenAccept(r -> {});
      }

      @Override
      public void close() {
        client.close();
      }
    };
  }
}
