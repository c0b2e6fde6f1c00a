package io.leasehold.client.internal;

import io.leasehold.client.AcquireAllResult;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.ClientClosedException;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.RegisterOptions;
import io.leasehold.client.Registration;
import io.leasehold.client.RejectReason;
import io.leasehold.client.RoutingTable;
import io.leasehold.client.ServiceFilter;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ReleaseRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one client owns: endpoints, the keep-alive loop, the per-name queues, and the watches,
 * tables and registrations to stop on close. Its threads are the JVM's {@link SharedExecutors},
 * shared with every other client. {@code LeaseholdClient} is its public face. Internal: not part of
 * the API.
 */
public final class ClientCore implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientCore.class);
  private static final int CLOSE_RELEASES_IN_FLIGHT = 64;

  private final ClientSettings settings;
  private final SharedExecutors shared;
  private final Executor callbacks;

  /** Callbacks of this client queued or running on the shared pool, which close() lets finish. */
  private final AtomicInteger callbacksPending = new AtomicInteger();

  /** withLease actions running on the shared pool, interrupted by close(). */
  private final Set<Future<?>> actions = ConcurrentHashMap.newKeySet();

  private final Connection connection;
  private final Calls calls;
  private final RequestIds requestIds = new RequestIds();
  private final KeepAlive keepAlive;
  private final ClientSession session;
  private final NameSlots slots;
  private final Set<ResumingWatch> watches = ConcurrentHashMap.newKeySet();
  private final Set<RoutingTableImpl> tables = ConcurrentHashMap.newKeySet();
  private final Set<RegistrationImpl> registrations = ConcurrentHashMap.newKeySet();
  private volatile boolean closing;
  private volatile boolean shutDown;

  public ClientCore(ClientSettings settings) {
    this.settings = settings;
    this.shared = SharedExecutors.acquire();
    this.callbacks = settings.callbackExecutor().orElse(this::onSharedCallbacks);
    this.connection = new Connection(settings, shared.timer(), shared.internal());
    this.calls = new Calls(connection, settings, shared.timer(), () -> shutDown);
    this.keepAlive = new KeepAlive(this);
    this.session = new ClientSession(this);
    this.slots = new NameSlots(this);
    connection.probe();
  }

  /** The shared callback pool, counting this client's tasks so that close() can let them finish. */
  private void onSharedCallbacks(Runnable task) {
    callbacksPending.incrementAndGet();
    try {
      shared
          .callbacks()
          .execute(
              () -> {
                try {
                  task.run();
                } finally {
                  callbacksPending.decrementAndGet();
                }
              });
    } catch (RejectedExecutionException e) {
      callbacksPending.decrementAndGet();
      throw e;
    }
  }

  public ClientSettings settings() {
    return settings;
  }

  public Connection connection() {
    return connection;
  }

  /** Ids for Acquire and Register calls, kept across each call's retries. */
  public RequestIds requestIds() {
    return requestIds;
  }

  public Calls calls() {
    return calls;
  }

  ClientSession session() {
    return session;
  }

  KeepAlive keepAlive() {
    return keepAlive;
  }

  NameSlots slots() {
    return slots;
  }

  /** For the SDK's own work (applying watch events, moving queues): never the user's threads. */
  Executor internal() {
    return shared.internal();
  }

  /** Runs {@code task} on the internal pool, or here once the pools have stopped. */
  void offLane(Runnable task) {
    try {
      shared.internal().execute(task);
    } catch (RejectedExecutionException stopped) {
      task.run();
    }
  }

  /**
   * The keep-alive lane: the shared timer, where keep-alive rounds run and their answers are
   * applied.
   */
  Executor keepAliveLane() {
    return shared.timer();
  }

  /** Where the user's listeners and futures run. */
  public Executor callbackExecutor() {
    return callbacks;
  }

  /** {@code f}, completed on the callback executor. */
  public <T> CompletableFuture<T> onCallbacks(CompletableFuture<T> f) {
    return Futures.on(callbacks, f);
  }

  public boolean isClosing() {
    return closing;
  }

  /** Throws if the client is closed: misuse fails at the call, not in a future. */
  public void ensureOpen(String what) {
    if (closing) {
      throw new ClientClosedException(what + ": the client is closed");
    }
  }

  ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    if (shutDown) {
      return CANCELLED;
    }
    try {
      return shared.timer().schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException stopped) {
      return CANCELLED;
    }
  }

  ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long periodNanos) {
    if (shutDown) {
      return CANCELLED;
    }
    try {
      return shared
          .timer()
          .scheduleWithFixedDelay(
              task, periodNanos, Math.max(1, periodNanos), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException stopped) {
      return CANCELLED;
    }
  }

  /** What a timer is once the client has stopped, or when none was needed: never runs. */
  static final ScheduledFuture<?> CANCELLED =
      new ScheduledFuture<Void>() {
        @Override
        public long getDelay(TimeUnit unit) {
          return 0;
        }

        @Override
        public int compareTo(Delayed o) {
          return 0;
        }

        @Override
        public boolean cancel(boolean mayInterrupt) {
          return false;
        }

        @Override
        public boolean isCancelled() {
          return true;
        }

        @Override
        public boolean isDone() {
          return true;
        }

        @Override
        public Void get() {
          throw new CancellationException();
        }

        @Override
        public Void get(long timeout, TimeUnit unit) {
          throw new CancellationException();
        }
      };

  // ---- leases ----

  /** The most names one AcquireMany may carry (the cluster's limit). */
  static final int MAX_ACQUIRE_MANY = 1_000;

  /** Queues an acquisition of {@code name} behind this client's others of the same name. */
  public CompletableFuture<AcquireResult> acquire(
      String name, LeaseOptions options, boolean tryOnly) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(options, "options");
    ensureOpen("acquire " + name);
    // Each try of the waiter is a new call with its own id; the retries of one call share it.
    // A waiter asks the node to queue it (first come, first served) while the name is held; the
    // call's deadlines grow by that wait.
    Waiter w =
        new Waiter(
            tryOnly ? Waiter.Mode.TRY : Waiter.Mode.WAIT,
            wait -> acquireAttempt(name, options, wait),
            tryOnly ? Optional.empty() : options.waitUpTo());
    slots.enqueue(name, w);
    return w.result;
  }

  /**
   * One Acquire of {@code name}, in the client's session unless the options give a TTL, asking its
   * node to wait up to {@code wait} for the name while another holder has it.
   */
  CompletableFuture<Calls.Sent<Grant>> acquireAttempt(
      String name, LeaseOptions options, Duration wait) {
    AcquireRequest.Builder request =
        AcquireRequest.newBuilder()
            .setName(name)
            .setHolder(settings.holder())
            .setAttributes(Protos.attributes(options.attributes()));
    options.ttl().ifPresent(ttl -> request.setTtl(Protos.duration(ttl)));
    return inSession(
        options.ttl().isEmpty(),
        id -> {
          AcquireRequest.Builder r =
              request.clone().setRequestId(requestIds.next()).setSession(id.orElse(0));
          if (!wait.isZero()) {
            r.setWait(Protos.duration(wait));
          }
          long waitNanos = wait.toNanos();
          return calls
              .send(
                  Calls.Target.WRITE,
                  LeasesGrpc.getAcquireMethod(),
                  r.build(),
                  "Acquire " + name,
                  System.nanoTime() + settings.requestTimeout().toNanos() + waitNanos,
                  settings.attemptTimeout().toNanos() + waitNanos,
                  Integer.MAX_VALUE)
              .thenApply(sent -> new Calls.Sent<>(Grant.of(sent.value()), sent.sentNanos()));
        });
  }

  /**
   * One attempt at each of {@code names}, in AcquireMany calls of at most {@link #MAX_ACQUIRE_MANY}
   * names sent together; each name through its own slot, as a try. Completes once every name has
   * its outcome; if a call fails, the leases already granted are released and the failure is the
   * result.
   */
  public CompletableFuture<AcquireAllResult> acquireAll(
      Collection<String> names, LeaseOptions options, boolean allOrNothing) {
    Objects.requireNonNull(names, "names");
    Objects.requireNonNull(options, "options");
    List<String> ordered = new ArrayList<>(names.size());
    Set<String> seen = new HashSet<>();
    for (String name : names) {
      Objects.requireNonNull(name, "a name in names");
      if (!seen.add(name)) {
        throw new IllegalArgumentException("names: " + name + " is given twice");
      }
      ordered.add(name);
    }
    if (ordered.isEmpty()) {
      throw new IllegalArgumentException("names: must contain at least one name");
    }
    if (allOrNothing && ordered.size() > MAX_ACQUIRE_MANY) {
      throw new IllegalArgumentException(
          "names: all or nothing covers at most "
              + MAX_ACQUIRE_MANY
              + " names (one replicated entry), got "
              + ordered.size());
    }
    ensureOpen("acquireAll of " + ordered.size() + " names");
    List<CompletableFuture<AcquireResult>> results = new ArrayList<>(ordered.size());
    for (int from = 0; from < ordered.size(); from += MAX_ACQUIRE_MANY) {
      List<String> chunk = ordered.subList(from, Math.min(ordered.size(), from + MAX_ACQUIRE_MANY));
      AcquireBatch batch = new AcquireBatch(this, chunk, options, allOrNothing);
      for (String name : chunk) {
        Waiter w = new Waiter(Waiter.Mode.TRY, () -> batch.attempt(name), Optional.empty());
        w.result.whenComplete((r, e) -> batch.settled(name));
        results.add(w.result);
        slots.enqueue(name, w);
      }
    }
    return Deliveries.deliverAll(callbackExecutor(), ordered, results, allOrNothing);
  }

  /**
   * One grant attempt (an Acquire or a Register), given the client's session to attach the lease to
   * when {@code withSession} and the cluster offers sessions (else empty: the lease needs a TTL of
   * its own). A session that ended meanwhile is replaced, once, by a new one.
   */
  CompletableFuture<Calls.Sent<Grant>> inSession(
      boolean withSession, Function<OptionalLong, CompletableFuture<Calls.Sent<Grant>>> attempt) {
    return inSession(withSession, attempt, true);
  }

  private CompletableFuture<Calls.Sent<Grant>> inSession(
      boolean withSession,
      Function<OptionalLong, CompletableFuture<Calls.Sent<Grant>>> attempt,
      boolean retryNoSession) {
    CompletableFuture<OptionalLong> sessionId =
        withSession ? session.id() : CompletableFuture.completedFuture(OptionalLong.empty());
    return sessionId.thenCompose(
        id ->
            attempt
                .apply(id)
                .thenCompose(
                    sent -> {
                      if (id.isPresent()
                          && retryNoSession
                          && sent.value()
                              .rejection()
                              .map(x -> x.reason() == RejectReason.NO_SESSION)
                              .orElse(false)) {
                        session.ended(id.getAsLong());
                        return inSession(true, attempt, false);
                      }
                      return CompletableFuture.completedFuture(sent);
                    }));
  }

  CompletableFuture<Void> sendRelease(String name, long token) {
    ReleaseRequest request = ReleaseRequest.newBuilder().setName(name).setToken(token).build();
    return calls
        .call(Calls.Target.WRITE, LeasesGrpc.getReleaseMethod(), request, "Release " + name)
        .thenApply(r -> null);
  }

  /**
   * Where actions run under a lease ({@code withLease}): the shared action pool, each action
   * tracked so that close() interrupts this client's, and no other's.
   */
  public Executor actions() {
    ensureOpen("withLease");
    return task -> {
      FutureTask<Void> f =
          new FutureTask<>(task, null) {
            @Override
            protected void done() {
              actions.remove(this);
            }
          };
      actions.add(f);
      if (shutDown) {
        actions.remove(f);
        throw new RejectedExecutionException("the client is closed");
      }
      shared.actions().execute(f);
    };
  }

  // ---- watches, tables, registrations ----

  /** A watch whose listener is the SDK's own, run on the internal executor. Not started. */
  ResumingWatch internalWatch(WatchOptions options, WatchListener listener) {
    return internalWatch(options, listener, internal());
  }

  ResumingWatch internalWatch(WatchOptions options, WatchListener listener, Executor executor) {
    return new ResumingWatch(this, options, listener, executor);
  }

  /** An internal watch from a list's resume token (a list across lease groups). */
  ResumingWatch internalWatch(
      WatchOptions options,
      com.google.protobuf.ByteString startToken,
      WatchListener listener,
      Executor executor) {
    return new ResumingWatch(this, options, startToken, listener, executor);
  }

  /** A user's watch: its listener runs on the callback executor. Started. */
  public Watch watch(WatchOptions options, WatchListener listener) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(listener, "listener");
    ensureOpen("watch " + options.prefix());
    ResumingWatch w = new ResumingWatch(this, options, listener, callbacks);
    watches.add(w);
    w.start();
    return w;
  }

  public CompletableFuture<RoutingTable> routingTable(String prefix) {
    return routingTable(prefix, ServiceFilter.all());
  }

  public CompletableFuture<RoutingTable> routingTable(String prefix, ServiceFilter filter) {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(filter, "filter");
    ensureOpen("routingTable " + prefix);
    RoutingTableImpl t = new RoutingTableImpl(this, prefix, filter);
    tables.add(t);
    return onCallbacks(t.start());
  }

  public CompletableFuture<Registration> register(
      String service,
      String instance,
      String address,
      Map<String, String> metadata,
      RegisterOptions options) {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(instance, "instance");
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(options, "options");
    ensureOpen("register " + service + "/" + instance);
    return RegistrationImpl.register(this, service, instance, address, metadata, options);
  }

  void track(RegistrationImpl r) {
    registrations.add(r);
    if (closing) {
      r.stopRegisteringAgain();
    }
  }

  void forget(Object resource) {
    tables.remove(resource);
    registrations.remove(resource);
    watches.remove(resource);
  }

  // ---- close ----

  /**
   * Releases every lease, a bounded number at a time, so a client holding thousands does not flood
   * the leader.
   */
  private static CompletableFuture<Void> releaseAll(List<LeaseHandle> leases) {
    CompletableFuture<Void> all = new CompletableFuture<>();
    if (leases.isEmpty()) {
      all.complete(null);
      return all;
    }
    Iterator<LeaseHandle> next = leases.iterator();
    AtomicInteger remaining = new AtomicInteger(leases.size());
    Runnable[] worker = new Runnable[1];
    worker[0] =
        () -> {
          LeaseHandle l;
          synchronized (next) {
            if (!next.hasNext()) {
              return;
            }
            l = next.next();
          }
          l.releaseQuietly()
              .whenComplete(
                  (v, e) -> {
                    if (remaining.decrementAndGet() == 0) {
                      all.complete(null);
                    } else {
                      worker[0].run();
                    }
                  });
        };
    for (int i = 0; i < Math.min(CLOSE_RELEASES_IN_FLIGHT, leases.size()); i++) {
      worker[0].run();
    }
    return all;
  }

  /**
   * Stops taking requests, fails pending acquisitions, stops watches and tables, releases every
   * held lease (or abandons them, if so configured) waiting up to the request timeout, then stops
   * the threads and channels.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closing) {
        return;
      }
      closing = true;
    }
    slots.all().forEach(NameSlot::close);
    watches.forEach(ResumingWatch::close);
    tables.forEach(RoutingTableImpl::close);
    registrations.forEach(RegistrationImpl::stopRegisteringAgain);
    keepAlive.stop();
    List<LeaseHandle> held = keepAlive.leases();
    CompletableFuture<Void> released = CompletableFuture.completedFuture(null);
    if (settings.releaseOnClose()) {
      // Leases with a TTL of their own are released one by one; then one CloseSession ends every
      // lease attached to the session (SESSION_CLOSED), however many, and their handles with it.
      OptionalLong sessionId = session.currentId();
      List<LeaseHandle> own = new ArrayList<>();
      List<LeaseHandle> attached = new ArrayList<>();
      for (LeaseHandle l : held) {
        (sessionId.isPresent() && l.session() == sessionId.getAsLong() ? attached : own).add(l);
      }
      CompletableFuture<Void> closed = releaseAll(own).thenCompose(v -> session.close());
      attached.forEach(l -> l.releaseWithSession(closed));
      released = closed.exceptionally(e -> null);
    } else {
      held.forEach(LeaseHandle::abandon);
    }
    try {
      released.get(settings.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "closing: not every lease release was confirmed ({}); those leases expire after their TTL",
          e.toString());
    }
    shutDown = true;
    actions.forEach(f -> f.cancel(true));
    connection.close();
    awaitCallbacks(TimeUnit.SECONDS.toNanos(1));
    shared.release();
  }

  /**
   * Lets the final transitions reach their listeners on the shared pool, for up to {@code nanos}.
   */
  private void awaitCallbacks(long nanos) {
    long deadline = System.nanoTime() + nanos;
    try {
      while (callbacksPending.get() > 0 && System.nanoTime() - deadline < 0) {
        Thread.sleep(5);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
