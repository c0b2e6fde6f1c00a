package io.leasehold.grpc;

import io.grpc.ChannelLogger;
import io.grpc.ChannelLogger.ChannelLogLevel;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.StatusOr;
import io.grpc.SynchronizationContext;
import io.grpc.SynchronizationContext.ScheduledHandle;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RouteListener;
import io.leasehold.client.RoutingTable;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Resolves one service to the address groups of its SERVING instances, kept current by the SDK's
 * routing table of {@code service/<service>/} (List + Watch, no gap): every change of a route under
 * the prefix recomputes the list, and a list that changed goes to the load balancer.
 *
 * <p>Everything that touches the listener runs in the channel's synchronization context; the list
 * is computed on the offload executor, since a host name has to be looked up.
 */
final class LeaseholdNameResolver extends NameResolver {
  private final LeaseholdTarget target;
  private final ClientSource clients;
  private final SynchronizationContext sync;
  private final ScheduledExecutorService timer;
  private final Executor offload;
  private final ChannelLogger log;
  private final Duration firstListingTimeout;
  private final RouteListener onChange = change -> recompute(false);
  private final AtomicBoolean recomputeQueued = new AtomicBoolean();
  private final Object computing = new Object();
  private volatile boolean forceNext;

  // Written in the synchronization context only; read by the computation on the offload executor.
  private volatile RoutingTable table;
  // Confined to the synchronization context.
  private Listener2 listener;
  private LeaseholdClient client;
  private boolean loading;
  private boolean stopped;
  private Instances delivered;
  private ScheduledHandle listingDeadline;

  LeaseholdNameResolver(
      LeaseholdTarget target,
      ClientSource clients,
      Args args,
      Executor offload,
      Duration firstListingTimeout) {
    this.target = Objects.requireNonNull(target, "target");
    this.clients = Objects.requireNonNull(clients, "clients");
    this.sync = args.getSynchronizationContext();
    this.timer = args.getScheduledExecutorService();
    this.offload = Objects.requireNonNull(offload, "offload");
    this.log = args.getChannelLogger();
    this.firstListingTimeout = firstListingTimeout;
  }

  @Override
  public String getServiceAuthority() {
    return target.authority();
  }

  @Override
  public void start(Listener2 listener) {
    if (this.listener != null) {
      throw new IllegalStateException("already started");
    }
    this.listener = Objects.requireNonNull(listener, "listener");
    connect();
  }

  /**
   * In the context: takes a client and starts loading; a failure is reported and retried on
   * refresh.
   */
  private void connect() {
    try {
      client = clients.acquire();
    } catch (RuntimeException e) {
      fail(
          Status.UNAVAILABLE
              .withDescription(
                  what()
                      + " cannot be read: no client for "
                      + clients.describe()
                      + ": "
                      + e.getMessage())
              .withCause(e));
      return;
    }
    load();
  }

  /** Re-reads the instances and hands them to the load balancer again, even if unchanged. */
  @Override
  public void refresh() {
    sync.execute(
        () -> {
          if (stopped || listener == null) {
            return;
          }
          if (table != null) {
            recompute(true);
          } else if (client == null) {
            connect();
          } else if (!loading) {
            load();
          }
        });
  }

  /**
   * Stops watching, and gives the client back (closed if the provider made it and nobody else uses
   * it).
   */
  @Override
  public void shutdown() {
    if (stopped) {
      return;
    }
    stopped = true;
    cancelListingDeadline();
    if (table != null) {
      table.removeListener(onChange);
      table.close();
      table = null;
    }
    if (client != null) {
      clients.release(client);
      client = null;
    }
  }

  /**
   * In the context: asks the SDK for the service's routing table, bounded by the first-listing
   * deadline.
   */
  private void load() {
    CompletableFuture<RoutingTable> loaded;
    try {
      loaded = client.routingTable(target.prefix());
    } catch (RuntimeException e) {
      fail(
          Status.UNAVAILABLE
              .withDescription(what() + " cannot be read: " + e.getMessage())
              .withCause(e));
      return;
    }
    loading = true;
    // The SDK retries a listing for as long as the cluster is unreachable; calls should not wait
    // that long.
    listingDeadline =
        sync.schedule(
            this::listingOverdue, firstListingTimeout.toNanos(), TimeUnit.NANOSECONDS, timer);
    loaded.whenComplete((t, error) -> sync.execute(() -> loaded(t, error)));
  }

  private void loaded(RoutingTable t, Throwable error) {
    loading = false;
    cancelListingDeadline();
    if (stopped) {
      if (t != null) {
        t.close();
      }
      return;
    }
    if (error != null) {
      Throwable cause =
          error instanceof CompletionException && error.getCause() != null
              ? error.getCause()
              : error;
      fail(
          Status.UNAVAILABLE
              .withDescription(what() + " could not be listed: " + cause.getMessage())
              .withCause(cause));
      return;
    }
    table = t;
    // Listener first, then the snapshot: a change between the two is in the snapshot or announced
    // after it.
    table.addListener(onChange);
    recompute(true);
  }

  private void listingOverdue() {
    if (loading && !stopped) {
      fail(
          Status.UNAVAILABLE.withDescription(
              what()
                  + " could not be listed from "
                  + clients.describe()
                  + " within "
                  + firstListingTimeout.toMillis()
                  + " ms; still trying"));
    }
  }

  /**
   * Computes the list again on the offload executor and delivers it in the context. Changes that
   * arrive while a computation is queued are covered by it: it reads the table when it runs.
   */
  private void recompute(boolean force) {
    if (force) {
      forceNext = true;
    }
    if (!recomputeQueued.compareAndSet(false, true)) {
      return;
    }
    offload.execute(
        () -> {
          // One computation at a time, handed to the context in the order they read the table, so
          // an
          // older list (a slow host lookup) never lands after a newer one.
          synchronized (computing) {
            recomputeQueued.set(false);
            boolean forced = forceNext;
            forceNext = false;
            RoutingTable t = table;
            if (t == null) {
              return;
            }
            Instances now =
                Instances.of(
                    target.prefix(), t.routes().values(), target.zones(), target.metadata());
            sync.execute(() -> deliver(t, now, forced));
          }
        });
  }

  private void deliver(RoutingTable t, Instances now, boolean forced) {
    if (stopped || t != table || (!forced && now.equals(delivered))) {
      return;
    }
    if (!now.equals(delivered) && !now.skipped().isEmpty()) {
      log.log(
          ChannelLogLevel.WARNING,
          "{0}: left out instances whose address is unusable: {1}",
          what(),
          now.skipped());
    }
    delivered = now;
    if (now.groups().isEmpty()) {
      String others =
          now.notServing() > 0 ? " (" + now.notServing() + " live instance(s) not SERVING)" : "";
      listener.onResult2(
          ResolutionResult.newBuilder()
              .setAddressesOrError(
                  StatusOr.fromStatus(
                      Status.UNAVAILABLE.withDescription(
                          "service \""
                              + target.service()
                              + "\" has no SERVING instance"
                              + target.filterText()
                              + " in the Leasehold registry"
                              + others)))
              .build());
    } else {
      log.log(ChannelLogLevel.DEBUG, "{0}: {1} SERVING instance(s)", what(), now.groups().size());
      listener.onResult2(
          ResolutionResult.newBuilder()
              .setAddressesOrError(StatusOr.<List<EquivalentAddressGroup>>fromValue(now.groups()))
              .build());
    }
  }

  private void fail(Status status) {
    log.log(ChannelLogLevel.WARNING, "{0}", status);
    listener.onResult2(
        ResolutionResult.newBuilder().setAddressesOrError(StatusOr.fromStatus(status)).build());
  }

  private void cancelListingDeadline() {
    if (listingDeadline != null) {
      listingDeadline.cancel();
      listingDeadline = null;
    }
  }

  private String what() {
    return "the instances of service \"" + target.service() + "\"";
  }
}
