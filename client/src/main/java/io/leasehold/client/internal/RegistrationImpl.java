package io.leasehold.client.internal;

import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.ClientClosedException;
import io.leasehold.client.Conflict;
import io.leasehold.client.Granted;
import io.leasehold.client.InvalidRequestException;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseConflictException;
import io.leasehold.client.LeaseLostException;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseTransition;
import io.leasehold.client.RegisterOptions;
import io.leasehold.client.Registration;
import io.leasehold.client.RegistrationListener;
import io.leasehold.client.RegistrationState;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejected;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.SetStatusRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered service instance: Registry.Register, then the lease kept alive by the client's
 * keep-alive loop like any other. If the lease is lost while the registration is open, it registers
 * again with backoff (a new token) unless told not to; it gives up if another holder took the
 * instance's name or policy refuses it.
 */
public final class RegistrationImpl implements Registration {
  private static final Logger LOG = LoggerFactory.getLogger(RegistrationImpl.class);

  private final ClientCore core;
  private final String service;
  private final String instance;
  private final String address;
  private final Map<String, String> metadata;
  private final RegisterOptions options;
  private final SerialExecutor events;
  private volatile String status;
  private volatile LeaseHandle lease;

  // Guarded by this.
  private final List<RegistrationListener> listeners = new ArrayList<>();
  private RegistrationState state = RegistrationState.REGISTERED;
  private boolean deregistered;
  private int failures;
  private ScheduledFuture<?> retry;

  private RegistrationImpl(
      ClientCore core,
      String service,
      String instance,
      String address,
      Map<String, String> metadata,
      RegisterOptions options) {
    this.core = core;
    this.service = service;
    this.instance = instance;
    this.address = address;
    this.metadata = Map.copyOf(metadata);
    this.options = options;
    this.status = options.status();
    this.events = new SerialExecutor(core.callbackExecutor());
  }

  static CompletableFuture<Registration> register(
      ClientCore core,
      String service,
      String instance,
      String address,
      Map<String, String> metadata,
      RegisterOptions options) {
    RegistrationImpl r = new RegistrationImpl(core, service, instance, address, metadata, options);
    return r.attempt()
        .thenApply(
            lease -> {
              r.attach(lease);
              core.track(r);
              return r;
            });
  }

  private String leaseName() {
    return "service/" + service + "/" + instance;
  }

  /**
   * One registration attempt through the name's queue (a try: registering never waits): attached to
   * the client's session unless the options give a TTL, or sessions are off.
   */
  private CompletableFuture<LeaseHandle> attempt() {
    RegisterRequest.Builder request =
        RegisterRequest.newBuilder()
            .setService(service)
            .setInstance(instance)
            .setAddress(address)
            .putAllMetadata(metadata)
            .setStatus(status)
            .setHolder(core.settings().holder());
    Waiter w =
        new Waiter(
            Waiter.Mode.TRY,
            () ->
                core.inSession(
                    options.ttl().isEmpty(),
                    session -> {
                      Duration ttl = options.ttl().orElse(RegisterOptions.DEFAULT_TTL);
                      RegisterRequest.Builder r =
                          request.clone().setRequestId(core.requestIds().next());
                      if (session.isPresent()) {
                        r.setSession(session.getAsLong());
                      } else {
                        r.setTtl(Protos.duration(ttl));
                      }
                      return core.calls()
                          .send(
                              Calls.Target.WRITE,
                              RegistryGrpc.getRegisterMethod(),
                              r.build(),
                              "Register " + leaseName())
                          .thenApply(
                              sent ->
                                  new Calls.Sent<>(Grant.of(sent.value(), ttl), sent.sentNanos()));
                    }),
            Optional.empty());
    core.slots().enqueue(leaseName(), w);
    return w.result.thenApply(this::leaseOf);
  }

  private LeaseHandle leaseOf(AcquireResult result) {
    if (result instanceof Granted g) {
      return (LeaseHandle) g.lease();
    }
    if (result instanceof Conflict c) {
      throw new LeaseConflictException(leaseName(), c);
    }
    throw new AcquireRejectedException(leaseName(), ((Rejected) result).rejection());
  }

  private void attach(LeaseHandle l) {
    lease = l;
    l.addListener(this::onLease);
  }

  private void onLease(LeaseTransition t) {
    if (t.lease() != lease) {
      return;
    }
    switch (t.to()) {
      case HELD -> move(RegistrationState.REGISTERED);
      case JEOPARDY -> move(RegistrationState.JEOPARDY);
      case LOST -> {
        move(RegistrationState.LOST);
        scheduleRegisterAgain();
      }
      case RELEASED -> move(RegistrationState.DEREGISTERED);
    }
  }

  private void scheduleRegisterAgain() {
    scheduleRegisterAgain(0);
  }

  private void scheduleRegisterAgain(long atLeastNanos) {
    synchronized (this) {
      if (deregistered || !options.reRegister() || core.isClosing()) {
        return;
      }
      failures++;
      long delay =
          core.settings()
              .retry()
              .backoff(failures, ThreadLocalRandom.current().nextDouble())
              .toNanos();
      retry = core.schedule(this::registerAgain, Math.max(delay, atLeastNanos));
    }
  }

  private void registerAgain() {
    attempt()
        .whenComplete(
            (l, error) -> {
              if (error == null) {
                boolean keep;
                synchronized (this) {
                  keep = !deregistered;
                  failures = 0;
                }
                if (!keep) {
                  l.releaseQuietly();
                  return;
                }
                LOG.info(
                    "instance {} of {} registered again (token {})", instance, service, l.token());
                attach(l);
                move(RegistrationState.REGISTERED);
                return;
              }
              Throwable cause = Futures.unwrap(error);
              if (cause instanceof AcquireRejectedException r
                  && r.rejection().reason() == RejectReason.LOCK_DELAY) {
                // The lost lease expired moments ago and the namespace has a lock-delay: wait it
                // out.
                scheduleRegisterAgain(r.rejection().retryAfter().map(Duration::toNanos).orElse(0L));
                return;
              }
              if (cause instanceof LeaseConflictException
                  || cause instanceof AcquireRejectedException
                  || cause instanceof InvalidRequestException
                  || cause instanceof ClientClosedException) {
                LOG.warn(
                    "instance {} of {} lost its registration and cannot register again: {}",
                    instance,
                    service,
                    cause.getMessage());
                return;
              }
              scheduleRegisterAgain();
            });
  }

  private void move(RegistrationState to) {
    RegistrationState from;
    List<RegistrationListener> targets;
    synchronized (this) {
      if (state == to || state == RegistrationState.DEREGISTERED) {
        return;
      }
      from = state;
      state = to;
      targets = List.copyOf(listeners);
      events.enqueue(
          () -> {
            for (RegistrationListener l : targets) {
              try {
                l.onStateChange(this, from, to);
              } catch (RuntimeException e) {
                LOG.warn("registration listener threw", e);
              }
            }
          });
    }
    events.flush();
  }

  @Override
  public String service() {
    return service;
  }

  @Override
  public String instance() {
    return instance;
  }

  @Override
  public String address() {
    return address;
  }

  @Override
  public Map<String, String> metadata() {
    return metadata;
  }

  @Override
  public String status() {
    return status;
  }

  @Override
  public long token() {
    return lease.token();
  }

  @Override
  public Lease lease() {
    return lease;
  }

  @Override
  public synchronized RegistrationState state() {
    return state;
  }

  @Override
  public CompletableFuture<Void> setStatus(String newStatus) {
    Objects.requireNonNull(newStatus, "status");
    synchronized (this) {
      if (deregistered) {
        throw new IllegalStateException(
            "instance " + instance + " of " + service + " was deregistered");
      }
    }
    status = newStatus;
    LeaseHandle l = lease;
    if (l.state().isFinal()) {
      // Lost: the next registration carries the new status.
      return core.onCallbacks(
          CompletableFuture.failedFuture(
              new LeaseLostException(
                  leaseName()
                      + ": not registered right now; "
                      + (options.reRegister()
                          ? "registering again with status " + newStatus
                          : "the registration was lost"))));
    }
    SetStatusRequest request =
        SetStatusRequest.newBuilder()
            .setService(service)
            .setInstance(instance)
            .setToken(l.token())
            .setStatus(newStatus)
            .build();
    CompletableFuture<Void> f =
        core.calls()
            .call(
                Calls.Target.WRITE,
                RegistryGrpc.getSetStatusMethod(),
                request,
                "SetStatus " + leaseName())
            .thenApply(
                r -> {
                  if (r.getOutcome() != Outcome.UPDATED) {
                    l.notHeld();
                    throw new LeaseLostException(
                        leaseName()
                            + ": the registration lease (token "
                            + l.token()
                            + ") is no longer held");
                  }
                  return null;
                });
    return core.onCallbacks(f);
  }

  @Override
  public CompletableFuture<Void> deregister() {
    LeaseHandle l;
    synchronized (this) {
      if (deregistered) {
        throw new IllegalStateException(
            "instance " + instance + " of " + service + " was already deregistered");
      }
      deregistered = true;
      if (retry != null) {
        retry.cancel(false);
      }
      l = lease;
    }
    core.forget(this);
    move(RegistrationState.DEREGISTERED);
    if (l.state() == LeaseState.LOST) {
      return core.onCallbacks(CompletableFuture.completedFuture(null));
    }
    try {
      return l.release();
    } catch (IllegalStateException alreadyReleased) {
      return core.onCallbacks(CompletableFuture.completedFuture(null));
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (deregistered) {
        return;
      }
    }
    try {
      deregister().get(core.settings().requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (IllegalStateException raced) {
      // deregistered by another thread meanwhile
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "instance {} of {}: deregistration not confirmed ({}); it expires after its TTL",
          instance,
          service,
          e.toString());
    }
  }

  /** The client is closing: no more registering again. */
  synchronized void stopRegisteringAgain() {
    deregistered = true;
    if (retry != null) {
      retry.cancel(false);
    }
  }

  @Override
  public void addListener(RegistrationListener listener) {
    synchronized (this) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
    }
  }

  @Override
  public synchronized boolean removeListener(RegistrationListener listener) {
    return listeners.remove(listener);
  }
}
