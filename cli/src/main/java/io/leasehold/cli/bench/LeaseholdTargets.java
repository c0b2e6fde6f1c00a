package io.leasehold.cli.bench;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import io.leasehold.client.EventType;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseLock;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.MemberRole;
import io.leasehold.client.MemberStatus;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/** Each workload's target on Leasehold, through the Java SDK as an application uses it. */
public final class LeaseholdTargets {
  /** Acquisitions a client keeps in flight while it takes many names at once. */
  static final int MAX_ACQUIRING = 512;

  private LeaseholdTargets() {}

  /**
   * A lease in an acquire-release cycle: its handle while this client holds it, its token once
   * handed on.
   */
  public record Held(LeaseholdClient client, String name, Lease lease, long token) {}

  /** The holder a cycle's lease is handed to when the workload transfers. */
  static final String TRANSFER_TO = "bench-transfer-to";

  /**
   * {@code tryAcquire} with the TTL, then {@code Lease.release()} (after {@code Lease.transferTo},
   * a release of the new lease by its token); worker {@code w} uses client {@code w % clients}.
   */
  public static AcquireRelease.Target<Held> acquireRelease(
      List<LeaseholdClient> clients, Duration ttl) {
    LeaseOptions options = LeaseOptions.defaults().withTtl(ttl);
    return new AcquireRelease.Target<>() {
      @Override
      public CompletableFuture<Held> acquire(int worker, String name) {
        LeaseholdClient client = clients.get(worker % clients.size());
        return client
            .tryAcquire(name, options)
            .thenApply(
                r -> {
                  Lease lease = granted(name, r);
                  return new Held(client, name, lease, lease.token());
                });
      }

      @Override
      public CompletableFuture<Held> transfer(int worker, Held held) {
        return held.lease()
            .transferTo(TRANSFER_TO)
            .thenApply(moved -> new Held(held.client(), held.name(), null, moved.token()));
      }

      @Override
      public CompletableFuture<Void> release(int worker, Held held) {
        return held.lease() != null
            ? held.lease().release()
            : held.client().release(held.name(), held.token()).thenApply(released -> null);
      }
    };
  }

  /**
   * Each client acquires its names and the SDK keeps them alive: one Renew call a heartbeat for all
   * of a client's leases.
   */
  public static Renew.Target renew(List<LeaseholdClient> clients, Duration ttl, boolean batch) {
    return holding(
        clients,
        LeaseOptions.defaults().withTtl(ttl),
        "the SDK's keep-alive: one Renew call a heartbeat carrying every lease of the client",
        batch,
        (client, leases) -> LeaseholdTargets.releaseAll(leases));
  }

  /**
   * Each client acquires its names into its session (no TTL of their own) and the SDK keeps the
   * session alive: one KeepAlive item a heartbeat per client, whatever number of leases it holds.
   */
  public static Renew.Target renewInSessions(
      List<LeaseholdClient> clients, Executor closing, boolean batch) {
    // Ends as a user's client ends: close() closes the session, one call for all its leases.
    return holding(
        clients,
        LeaseOptions.defaults(),
        "the SDK's session: one KeepAlive item a heartbeat per client, its leases attached",
        batch,
        (client, leases) -> CompletableFuture.runAsync(clients.get(client)::close, closing));
  }

  /**
   * {@code batch}: each client acquires its names through {@code acquireAll} (AcquireMany, up to
   * 1,000 names a call) rather than one {@code tryAcquire} each.
   */
  private static Renew.Target holding(
      List<LeaseholdClient> clients,
      LeaseOptions options,
      String shape,
      boolean batch,
      BiFunction<Integer, List<Lease>, CompletableFuture<Void>> release) {
    Map<Integer, List<Lease>> held = new ConcurrentHashMap<>();
    String how = shape + (batch ? "; acquired through acquireAll" : "");
    return new Renew.Target() {
      @Override
      public CompletableFuture<Void> holdAll(
          int client, List<String> names, Consumer<String> onLost, AtomicLong acquired) {
        LeaseholdClient c = clients.get(client);
        return (batch
                ? LeaseholdTargets.holdAllAtOnce(c, names, options, onLost, acquired)
                : LeaseholdTargets.holdAll(c, names, options, onLost, acquired))
            .thenAccept(leases -> held.put(client, leases));
      }

      @Override
      public CompletableFuture<Void> releaseAll(int client) {
        return release.apply(client, held.getOrDefault(client, List.of()));
      }

      @Override
      public String keepAliveShape() {
        return how;
      }
    };
  }

  /**
   * Acquires {@code names} in one {@code acquireAll} (the SDK sends them 1,000 a call) and tells
   * {@code onLost} of each that is lost while held; fails unless every name was granted.
   */
  static CompletableFuture<List<Lease>> holdAllAtOnce(
      LeaseholdClient client,
      List<String> names,
      LeaseOptions options,
      Consumer<String> onLost,
      AtomicLong acquired) {
    return client
        .acquireAll(names, options)
        .thenApply(
            r -> {
              List<Lease> leases = new ArrayList<>(r.granted().values());
              for (Lease lease : leases) {
                watchForLoss(lease, onLost);
              }
              acquired.addAndGet(leases.size());
              if (!r.allGranted()) {
                String first =
                    !r.refused().isEmpty()
                        ? r.refused().keySet().iterator().next() + ": refused"
                        : !r.failed().isEmpty()
                            ? r.failed().keySet().iterator().next()
                                + ": "
                                + r.failed().values().iterator().next().getMessage()
                            : r.skipped().get(0) + ": skipped";
                throw new IllegalStateException(
                    (names.size() - leases.size())
                        + " of "
                        + names.size()
                        + " names not granted, e.g. "
                        + first);
              }
              return leases;
            });
  }

  /**
   * Acquires {@code names} (at most {@link #MAX_ACQUIRING} at a time) and tells {@code onLost} of
   * each that is lost while held: the SDK's LOST, whatever the reason.
   */
  static CompletableFuture<List<Lease>> holdAll(
      LeaseholdClient client,
      List<String> names,
      Duration ttl,
      Consumer<String> onLost,
      AtomicLong acquired) {
    return holdAll(client, names, LeaseOptions.defaults().withTtl(ttl), onLost, acquired);
  }

  static CompletableFuture<List<Lease>> holdAll(
      LeaseholdClient client,
      List<String> names,
      LeaseOptions options,
      Consumer<String> onLost,
      AtomicLong acquired) {
    Semaphore window = new Semaphore(MAX_ACQUIRING);
    List<CompletableFuture<Lease>> all = new ArrayList<>(names.size());
    for (String name : names) {
      window.acquireUninterruptibly();
      CompletableFuture<Lease> f =
          client
              .tryAcquire(name, options)
              .thenApply(
                  r -> {
                    Lease lease = granted(name, r);
                    watchForLoss(lease, onLost);
                    acquired.incrementAndGet();
                    return lease;
                  });
      f.whenComplete((l, e) -> window.release());
      all.add(f);
    }
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
        .thenApply(v -> all.stream().map(CompletableFuture::join).toList());
  }

  private static void watchForLoss(Lease lease, Consumer<String> onLost) {
    lease.addListener(
        t -> {
          if (t.to() == LeaseState.LOST) {
            onLost.accept(lease.name());
          }
        });
  }

  static CompletableFuture<Void> releaseAll(List<Lease> leases) {
    Semaphore window = new Semaphore(MAX_ACQUIRING);
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (Lease lease : leases) {
      if (lease.state().isFinal()) {
        continue;
      }
      window.acquireUninterruptibly();
      CompletableFuture<Void> f = lease.release().exceptionally(e -> null);
      f.whenComplete((v, e) -> window.release());
      all.add(f);
    }
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
  }

  /** {@link LeaseLock} per worker and name; the token is the lock's lease's. */
  public static ContendedLock.Target lock(List<LeaseholdClient> clients, Duration ttl) {
    Map<String, LeaseLock> locks = new ConcurrentHashMap<>();
    Function<String, LeaseLock> lockOf =
        key -> {
          int worker = Integer.parseInt(key.substring(0, key.indexOf('|')));
          return clients
              .get(worker % clients.size())
              .lock(key.substring(key.indexOf('|') + 1), LeaseOptions.defaults().withTtl(ttl));
        };
    return new ContendedLock.Target() {
      @Override
      public long lock(int worker, String name) {
        LeaseLock lock = locks.computeIfAbsent(worker + "|" + name, lockOf);
        lock.lock();
        return lock.token();
      }

      @Override
      public void unlock(int worker, String name) {
        locks.get(worker + "|" + name).unlock();
      }
    };
  }

  /**
   * A writer through {@code writer}, and a watcher on the leader and one on a follower, each a
   * client of its own that knows only that node.
   */
  public static WatchLatency.Target watch(
      LeaseholdClient writer, Function<String, LeaseholdClient> clientOf, Duration ttl) {
    LeaseOptions options = LeaseOptions.defaults().withTtl(ttl);
    Map<String, Lease> created = new ConcurrentHashMap<>();
    return new WatchLatency.Target() {
      @Override
      public AutoCloseable watch(boolean onLeader, String prefix, Consumer<String> onCreated) {
        String address = memberToWatch(writer, onLeader);
        LeaseholdClient client = clientOf.apply(address);
        Watch watch =
            client.watch(
                WatchOptions.of(prefix).withTypes(Set.of(EventType.ACQUIRED)),
                e -> onCreated.accept(e.name()));
        return () -> {
          watch.close();
          client.close();
        };
      }

      @Override
      public CompletableFuture<Void> create(String name) {
        return writer
            .tryAcquire(name, options)
            .thenAccept(
                r -> {
                  Lease lease = granted(name, r);
                  created.put(name, lease);
                });
      }

      @Override
      public CompletableFuture<Void> cleanUp(List<String> names) {
        List<Lease> leases = new ArrayList<>();
        names.forEach(
            n -> {
              Lease l = created.remove(n);
              if (l != null) {
                leases.add(l);
              }
            });
        return releaseAll(leases);
      }
    };
  }

  /** The granted lease, or a failure naming the outcome (CONFLICT or REJECTED). */
  private static Lease granted(String name, AcquireResult r) {
    if (r instanceof Granted g) {
      return g.lease();
    }
    throw new IllegalStateException(
        name + ": not granted: " + (r instanceof Conflict ? "CONFLICT" : "REJECTED"));
  }

  /**
   * The client address of the leader (or a follower), waiting up to 30 s for the cluster to have
   * one (after an election).
   */
  static String memberToWatch(LeaseholdClient client, boolean leader) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      List<MemberStatus> members = client.clusterStatus().join().members();
      boolean led = members.stream().anyMatch(m -> m.reachable() && m.role() == MemberRole.LEADER);
      Optional<String> address =
          members.stream()
              .filter(m -> m.reachable() && (m.role() == MemberRole.LEADER) == leader)
              .map(MemberStatus::clientAddress)
              .filter(a -> !a.isEmpty())
              .findFirst();
      if (led && address.isPresent()) {
        return address.get();
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "no reachable " + (leader ? "leader" : "follower") + " to watch on within 30 s");
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while looking for a member to watch on", e);
      }
    }
  }

  /** Probes with {@code tryAcquire} then release, and holds leases kept alive by the SDK. */
  public static Failover.Target failover(LeaseholdClient client, Duration ttl) {
    LeaseOptions probeOptions = LeaseOptions.defaults().withTtl(Duration.ofSeconds(10));
    List<Lease> held = new ArrayList<>();
    return new Failover.Target() {
      @Override
      public CompletableFuture<Void> probe(String name) {
        return client
            .tryAcquire(name, probeOptions)
            .thenCompose(
                r -> {
                  Lease lease = granted(name, r);
                  lease
                      .release()
                      .exceptionally(
                          e ->
                              null); // the probe succeeded with the grant; the release may take its
                  // time
                  return CompletableFuture.completedFuture(null);
                });
      }

      @Override
      public CompletableFuture<Void> holdAll(List<String> names, Consumer<String> onLost) {
        return LeaseholdTargets.holdAll(client, names, ttl, onLost, new AtomicLong())
            .thenAccept(held::addAll);
      }

      @Override
      public CompletableFuture<Void> releaseAll() {
        return LeaseholdTargets.releaseAll(held);
      }

      @Override
      public void close() {
        client.close();
      }
    };
  }
}
