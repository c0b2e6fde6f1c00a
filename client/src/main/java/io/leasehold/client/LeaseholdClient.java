package io.leasehold.client;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.leasehold.client.internal.TlsFiles;
import io.grpc.ManagedChannelBuilder;
import io.leasehold.client.internal.Calls;
import io.leasehold.client.internal.ClientCore;
import io.leasehold.client.internal.ClientSettings;
import io.leasehold.client.internal.Futures;
import io.leasehold.client.internal.LeaseRunner;
import io.leasehold.client.internal.Protos;
import io.grpc.CallOptions;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.LookupRequest;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The Leasehold SDK: leases with client-side validity and fencing tokens, locks, a service
 * registry and a routing table, over a cluster of any number of nodes.
 *
 * <pre>{@code
 * try (LeaseholdClient client = LeaseholdClient.connect("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400")) {
 *   Lease lease = client.acquire("mailbox/$admin@proxy-01", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10))).join();
 *   lease.addListener(t -> { if (t.to() == LeaseState.LOST) stopServing(); });
 *   serve(lease.token());
 * }
 * }</pre>
 *
 * <p>Async first: every call that talks to the cluster returns a {@link CompletableFuture},
 * completed on the callback executor (never on a gRPC thread); {@link #blocking()} is the same API
 * waiting for the answers. One client per process is the intent: it renews every lease it holds
 * in one batched call per interval, and it serializes its own acquisitions of a name, since all
 * its leases share one holder identity. Thread-safe; {@link #close()} releases what it holds.
 *
 * <p>Any node accepts any request (a follower forwards writes to the leader). The client sends
 * writes to the leader when it knows it, reads and watches to one "home" node, and fails over to
 * the other nodes — and to members it learns from the cluster — when a node fails, retrying with
 * jittered backoff within the request timeout. Misuse (a closed client, a second release) throws
 * {@link IllegalStateException} at the call; bad input the cluster refuses fails the future with
 * {@link InvalidRequestException} carrying the cluster's message.
 */
public final class LeaseholdClient implements AutoCloseable {
  private final ClientCore core;
  private final BlockingLeaseholdClient blocking;
  private final LeaseholdAdmin admin;

  private LeaseholdClient(ClientSettings settings) {
    this.core = new ClientCore(settings);
    this.blocking = new BlockingLeaseholdClient(this);
    this.admin = new LeaseholdAdmin(core);
  }

  /**
   * A client of the cluster at {@code endpoints} ({@code host:port} client addresses of any of its
   * nodes), with defaults. Returns at once: connections are made by the first calls, and a cluster
   * that cannot be reached fails those calls with {@link ClusterUnavailableException}.
   */
  public static LeaseholdClient connect(String... endpoints) {
    return builder().endpoints(endpoints).build();
  }

  public static LeaseholdClient connect(List<String> endpoints) {
    return builder().endpoints(endpoints).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The holder identity of every lease this client acquires. */
  public String holder() {
    return core.settings().holder();
  }

  /** The endpoints this client knows: the configured ones and the members it learned. */
  public List<String> endpoints() {
    return core.connection().addresses();
  }

  /** The same API, waiting for each answer. */
  public BlockingLeaseholdClient blocking() {
    return blocking;
  }

  // ---- leases ----

  /**
   * Acquires {@code name}, waiting for it to become free if another holder has it (up to
   * {@link LeaseOptions#waitUpTo()}; indefinitely if absent — cancel the future to stop waiting).
   * Waiting uses a watch on the name, not polling, and acquisitions of one name by this client
   * are served in arrival order. The lease is then renewed by the client until released, lost, or
   * the client closes.
   *
   * <p>Fails with {@link AcquireTimeoutException} if the wait bound passed,
   * {@link AcquireRejectedException} if policy refused, {@link InvalidRequestException} for a name
   * or TTL the cluster refuses; cluster outages are ridden out until the wait bound.
   */
  public CompletableFuture<Lease> acquire(String name, LeaseOptions options) {
    return deliver(core.acquire(name, options, false), r -> r.lease().orElseThrow());
  }

  /** Acquires {@code name} with default options, waiting up to {@code waitUpTo} for it to become free. */
  public CompletableFuture<Lease> acquire(String name, Duration waitUpTo) {
    return acquire(name, LeaseOptions.defaults().withWait(waitUpTo));
  }

  /**
   * One attempt to acquire {@code name}: GRANTED with the lease, CONFLICT with the current holder,
   * token and remaining time (without a network call if another handle of this client holds it),
   * or REJECTED with the policy's reason. It never waits for a holder; it waits only while this
   * client gives back a lease that was granted to one of its waiters after that waiter had gone
   * (cancelled or interrupted), so that it does not answer CONFLICT with a lease nobody holds.
   */
  public CompletableFuture<AcquireResult> tryAcquire(String name, LeaseOptions options) {
    return deliver(core.acquire(name, options, true), r -> r);
  }

  public CompletableFuture<AcquireResult> tryAcquire(String name) {
    return tryAcquire(name, LeaseOptions.defaults());
  }

  /**
   * Hands {@code source}'s result to the caller on the callback executor. A lease granted to a
   * caller that has stopped waiting (cancelled the future) is released, never leaked; cancelling
   * the caller's future cancels the acquisition.
   */
  private <T> CompletableFuture<T> deliver(CompletableFuture<AcquireResult> source, Function<AcquireResult, T> map) {
    CompletableFuture<T> out = new CompletableFuture<>();
    source.whenComplete((result, error) -> {
      Runnable hand = () -> {
        if (error != null) {
          out.completeExceptionally(Futures.unwrap(error));
          return;
        }
        if (!out.complete(map.apply(result))) {
          result.lease().ifPresent(l -> {
            try {
              l.release();
            } catch (IllegalStateException alreadyReleased) {
              // nothing to give back
            }
          });
        }
      };
      try {
        core.callbackExecutor().execute(hand);
      } catch (RejectedExecutionException shutDown) {
        hand.run();
      }
    });
    out.whenComplete((v, e) -> {
      if (out.isCancelled()) {
        source.cancel(true);
      }
    });
    return out;
  }

  /** The lease on {@code name}, if any (a linearizable read). */
  public CompletableFuture<Optional<LeaseInfo>> get(String name) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("get " + name);
    return core.onCallbacks(core.calls()
        .call(Calls.Target.READ, LeasesGrpc.getGetMethod(), GetRequest.newBuilder().setName(name).build(), "Get " + name)
        .thenApply(r -> r.getFound() ? Optional.of(Protos.lease(r.getLease())) : Optional.empty()));
  }

  /**
   * Every lease whose name starts with {@code prefix}, in name order, read page by page
   * (10,000 leases a page); the listing's revision is the first page's.
   */
  public CompletableFuture<LeaseListing> list(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    core.ensureOpen("list " + prefix);
    CompletableFuture<LeaseListing> all = new CompletableFuture<>();
    List<LeaseInfo> leases = new ArrayList<>();
    listFrom(ListRequest.newBuilder().setPrefix(prefix).build(), leases, -1, all);
    return core.onCallbacks(all);
  }

  private void listFrom(ListRequest request, List<LeaseInfo> leases, long revision, CompletableFuture<LeaseListing> all) {
    core.calls().call(Calls.Target.READ, LeasesGrpc.getListMethod(), request, "List " + request.getPrefix())
        .whenComplete((page, error) -> {
          if (error != null) {
            all.completeExceptionally(Futures.unwrap(error));
            return;
          }
          page.getLeasesList().forEach(l -> leases.add(Protos.lease(l)));
          long r = revision < 0 ? page.getRevision() : revision;
          if (page.getMore() && page.getLeasesCount() > 0) {
            listFrom(request.toBuilder().setStartAfter(page.getLeases(page.getLeasesCount() - 1).getName()).build(), leases, r, all);
          } else {
            all.complete(new LeaseListing(leases, r));
          }
        });
  }

  /**
   * Asks the cluster (a linearizable read) whether {@code token} is still the fencing token of the
   * live lease on {@code name}. False once the lease ended or the name was granted again.
   */
  public CompletableFuture<Boolean> checkToken(String name, long token) {
    return get(name).thenApply(l -> l.isPresent() && l.get().token() == token);
  }

  /**
   * Releases the lease on {@code name} whose fencing token is {@code token}, whoever this client
   * is (an operator ending a lease it was told the token of). Completes with true if it was
   * released, false if no such lease was held (expired, released, superseded). Leases this client
   * holds are released through their {@link Lease} handle instead.
   */
  public CompletableFuture<Boolean> release(String name, long token) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("release " + name);
    ReleaseRequest request = ReleaseRequest.newBuilder().setName(name).setToken(token).build();
    return core.onCallbacks(core.calls().call(Calls.Target.WRITE, LeasesGrpc.getReleaseMethod(), request, "Release " + name)
        .thenApply(r -> r.getOutcome() == Outcome.RELEASED));
  }

  // ---- locks ----

  /** A {@link java.util.concurrent.locks.Lock} on {@code name}, with default lease options. */
  public LeaseLock lock(String name) {
    return lock(name, LeaseOptions.defaults());
  }

  /** A {@link java.util.concurrent.locks.Lock} on {@code name}; its leases use {@code options} (their wait bound is ignored). */
  public LeaseLock lock(String name, LeaseOptions options) {
    core.ensureOpen("lock " + name);
    return new LeaseLock(this, name, options);
  }

  /**
   * Acquires {@code name} (waiting as {@code options} say), runs {@code action} on a thread of the
   * client's while the lease is held, interrupts it if the lease is lost, and releases the lease
   * when it returns. Completes with the action's result; fails with {@link LeaseLostException} if
   * the lease ended while it ran. Cancelling the future stops waiting, or interrupts the action.
   */
  public <T> CompletableFuture<T> withLease(String name, LeaseOptions options, LeaseAction<T> action) {
    Objects.requireNonNull(action, "action");
    CompletableFuture<Lease> acquired = acquire(name, options);
    CompletableFuture<T> out = new CompletableFuture<>();
    AtomicReference<Thread> runner = new AtomicReference<>();
    acquired.whenComplete((lease, error) -> {
      if (error != null) {
        out.completeExceptionally(Futures.unwrap(error));
        return;
      }
      try {
        core.actions().execute(() -> {
          runner.set(Thread.currentThread());
          try {
            if (!out.isDone()) {
              out.complete(LeaseRunner.run(lease, action));
            }
          } catch (Throwable t) {
            out.completeExceptionally(t);
          } finally {
            runner.set(null);
            lease.close();
            Thread.interrupted();
          }
        });
      } catch (RejectedExecutionException | IllegalStateException closed) {
        lease.close();
        out.completeExceptionally(new ClientClosedException("withLease " + name + ": the client is closed"));
      }
    });
    out.whenComplete((v, e) -> {
      if (out.isCancelled()) {
        acquired.cancel(true);
        Thread t = runner.get();
        if (t != null) {
          t.interrupt();
        }
      }
    });
    return out;
  }

  public <T> CompletableFuture<T> withLease(String name, LeaseAction<T> action) {
    return withLease(name, LeaseOptions.defaults(), action);
  }

  // ---- registry and routing ----

  /**
   * Registers an instance of {@code service} at {@code address}: the lease
   * {@code service/<service>/<instance>}, SERVING, kept alive by this client, deregistered when
   * the registration is closed. Fails with {@link LeaseConflictException} if another holder
   * registered that instance.
   */
  public CompletableFuture<Registration> register(String service, String instance, String address, Map<String, String> metadata) {
    return register(service, instance, address, metadata, RegisterOptions.DEFAULTS);
  }

  public CompletableFuture<Registration> register(String service, String instance, String address, Map<String, String> metadata,
      RegisterOptions options) {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(instance, "instance");
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(options, "options");
    core.ensureOpen("register " + service + "/" + instance);
    return core.onCallbacks(core.register(service, instance, address, metadata, options));
  }

  /** The live SERVING instances of {@code service}, in instance order (a linearizable read). */
  public CompletableFuture<List<ServiceInstance>> resolve(String service) {
    return resolve(service, false);
  }

  /** The live instances of {@code service}; with {@code anyStatus}, whatever their status. */
  public CompletableFuture<List<ServiceInstance>> resolve(String service, boolean anyStatus) {
    Objects.requireNonNull(service, "service");
    core.ensureOpen("resolve " + service);
    ResolveRequest request = ResolveRequest.newBuilder().setService(service).setAnyStatus(anyStatus).build();
    return core.onCallbacks(core.calls().call(Calls.Target.READ, RegistryGrpc.getResolveMethod(), request, "Resolve " + service)
        .thenApply(r -> r.getInstancesList().stream().map(Protos::instance).toList()));
  }

  /**
   * The route of {@code name} (a linearizable read, for one-off lookups; a proxy keeps a
   * {@link #routingTable} instead): empty unless a live lease with an address holds it.
   */
  public CompletableFuture<Optional<Route>> lookup(String name) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("lookup " + name);
    return core.onCallbacks(core.calls()
        .call(Calls.Target.READ, RoutingGrpc.getLookupMethod(), LookupRequest.newBuilder().setName(name).build(), "Lookup " + name)
        .thenApply(r -> r.getFound() ? Optional.of(Protos.route(r.getRoute())) : Optional.<Route>empty()));
  }

  /** Every route whose name starts with {@code prefix}, in name order, read page by page (one-off). */
  public CompletableFuture<List<Route>> routes(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    core.ensureOpen("routes " + prefix);
    CompletableFuture<List<Route>> all = new CompletableFuture<>();
    routesFrom(ListRoutesRequest.newBuilder().setPrefix(prefix).build(), new ArrayList<>(), all);
    return core.onCallbacks(all);
  }

  private void routesFrom(ListRoutesRequest request, List<Route> routes, CompletableFuture<List<Route>> all) {
    core.calls().call(Calls.Target.READ, RoutingGrpc.getListRoutesMethod(), request, "ListRoutes " + request.getPrefix())
        .whenComplete((page, error) -> {
          if (error != null) {
            all.completeExceptionally(Futures.unwrap(error));
            return;
          }
          page.getRoutesList().forEach(r -> routes.add(Protos.route(r)));
          if (page.getMore() && page.getRoutesCount() > 0) {
            routesFrom(request.toBuilder().setStartAfter(page.getRoutes(page.getRoutesCount() - 1).getName()).build(), routes, all);
          } else {
            all.complete(routes);
          }
        });
  }

  /** The whole routing table, kept in memory; completes once it is loaded. Close it when done. */
  public CompletableFuture<RoutingTable> routingTable() {
    return routingTable("");
  }

  /** The routes whose name starts with {@code prefix}, kept in memory; completes once loaded. */
  public CompletableFuture<RoutingTable> routingTable(String prefix) {
    return core.routingTable(prefix);
  }

  /**
   * Streams changes under {@code prefix} from {@code fromRevision} (0: from now on) to
   * {@code listener}, resuming on another node after failures with no gap and no duplicate.
   */
  public Watch watch(String prefix, long fromRevision, WatchListener listener) {
    return watch(WatchOptions.of(prefix).withFromRevision(fromRevision), listener);
  }

  public Watch watch(WatchOptions options, WatchListener listener) {
    return core.watch(options, listener);
  }

  // ---- cluster ----

  /**
   * Every member of the cluster as it answers for itself: the members are read from any node,
   * then each is asked directly, one attempt bounded by the attempt timeout. A member that does
   * not answer is listed with the error, not failed: only no node answering at all fails the
   * future (with {@link ClusterUnavailableException}).
   */
  public CompletableFuture<ClusterStatus> clusterStatus() {
    core.ensureOpen("cluster status");
    CompletableFuture<ClusterStatus> out = core.calls()
        .call(Calls.Target.READ, ClusterGrpc.getStatusMethod(), StatusRequest.getDefaultInstance(), "Status")
        .thenCompose(any -> {
          List<CompletableFuture<MemberStatus>> asked = any.getMembersList().stream().map(this::memberStatus).toList();
          return CompletableFuture.allOf(asked.toArray(CompletableFuture[]::new))
              .thenApply(v -> new ClusterStatus(any.getGroupId(), asked.stream().map(CompletableFuture::join).toList()));
        });
    return core.onCallbacks(out);
  }

  private CompletableFuture<MemberStatus> memberStatus(Member m) {
    CompletableFuture<MemberStatus> out = new CompletableFuture<>();
    if (m.getClientAddress().isEmpty()) {
      out.complete(unreachable(m, "client address unknown"));
      return out;
    }
    try {
      ClientCalls.asyncUnaryCall(core.connection().at(m.getClientAddress()).channel().newCall(ClusterGrpc.getStatusMethod(),
              CallOptions.DEFAULT.withDeadlineAfter(core.settings().attemptTimeout().toNanos(), TimeUnit.NANOSECONDS)),
          StatusRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(StatusResponse s) {
              out.complete(new MemberStatus(m.getId(), m.getPeerAddress(), m.getClientAddress(), s.getRole(), s.getTerm(),
                  s.getLeaderId(), s.getCommitIndex(), s.getAppliedIndex(), Optional.empty()));
            }

            @Override
            public void onError(Throwable t) {
              io.grpc.Status s = io.grpc.Status.fromThrowable(t);
              out.complete(unreachable(m, s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription())));
            }

            @Override
            public void onCompleted() {
              out.complete(unreachable(m, "no reply"));
            }
          });
    } catch (RuntimeException e) {
      out.complete(unreachable(m, e.toString()));
    }
    return out;
  }

  private static MemberStatus unreachable(Member m, String error) {
    return new MemberStatus(m.getId(), m.getPeerAddress(), m.getClientAddress(), Role.ROLE_UNSPECIFIED, 0, "", 0, 0, Optional.of(error));
  }

  /** Operators' controls: policy, bans, revocation, history. */
  public LeaseholdAdmin admin() {
    return admin;
  }

  /** Identities, roles and grants, and the audit history. */
  public LeaseholdAuth auth() {
    return new LeaseholdAuth(core);
  }

  /** One node's status, membership changes, leadership transfer and snapshots, for operators' tools. */
  public ClusterAdmin cluster() {
    return new ClusterAdmin(core);
  }

  // ---- lifecycle ----

  public boolean isClosed() {
    return core.isClosing();
  }

  /**
   * Closes the client: pending acquisitions fail with {@link ClientClosedException}, watches and
   * routing tables stop, registrations are deregistered and held leases released (unless built
   * with {@code releaseOnClose(false)}; then they become LOST and expire), waiting up to the
   * request timeout for the cluster. Idempotent.
   */
  @Override
  public void close() {
    core.close();
  }

  ClientCore core() {
    return core;
  }

  /**
   * Configures a client. Every option has a default; only the endpoints are required.
   */
  public static final class Builder {
    private final List<String> endpoints = new ArrayList<>();
    private String holder;
    /** The identity a client certificate names, the holder unless one is given. */
    private String certificateIdentity;
    private Duration requestTimeout = Duration.ofSeconds(15);
    private Duration attemptTimeout = Duration.ofSeconds(5);
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private ChannelCredentials credentials = InsecureChannelCredentials.create();
    private Consumer<ManagedChannelBuilder<?>> channelCustomizer = b -> { };
    private final List<ClientInterceptor> interceptors = new ArrayList<>();
    private Executor callbackExecutor;
    private boolean preferLeader = true;
    private boolean discoverMembers = true;
    private double clockDriftRate = 0.01;
    private Duration minDriftMargin = Duration.ofMillis(50);
    private Duration watchSilenceTimeout = Duration.ofSeconds(10);
    private boolean releaseOnClose = true;

    private Builder() {}

    /** Client addresses ({@code host:port}) of any nodes; the rest are learned from the cluster. */
    public Builder endpoints(String... endpoints) {
      return endpoints(Arrays.asList(endpoints));
    }

    public Builder endpoints(List<String> endpoints) {
      for (String e : endpoints) {
        if (e == null || e.isBlank()) {
          throw new IllegalArgumentException("endpoints: must be host:port, got \"" + e + "\"");
        }
        this.endpoints.add(e.trim());
      }
      return this;
    }

    /**
     * The holder identity of this client's leases (a runner id, a proxy id). It must be unique
     * among live clients: the cluster treats the same holder asking again as the same lease.
     * Nodes with authentication on require it to be the client's identity: with a client
     * certificate ({@link #tls(Path, Path, Path)}) that is the default.
     * Default: {@code <host>/<pid>/<random>}.
     */
    public Builder holder(String holder) {
      this.holder = Objects.requireNonNull(holder, "holder");
      return this;
    }

    /** The time a request may take, retries included (default 15 s). */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive("requestTimeout", timeout);
      return this;
    }

    /** The time one attempt may take before it is retried elsewhere (default 5 s). */
    public Builder attemptTimeout(Duration timeout) {
      this.attemptTimeout = positive("attemptTimeout", timeout);
      return this;
    }

    /** Backoff between retries (default 50 ms doubling to 2 s, ±20%). */
    public Builder retry(RetryPolicy retry) {
      this.retry = Objects.requireNonNull(retry, "retry");
      return this;
    }

    /**
     * Transport security, e.g. {@code TlsChannelCredentials.create()} (default: plaintext). For
     * TLS from PEM files, {@link #tls(Path)} and {@link #tls(Path, Path, Path)} are shorter.
     */
    public Builder credentials(ChannelCredentials credentials) {
      this.credentials = Objects.requireNonNull(credentials, "credentials");
      return this;
    }

    /**
     * TLS, trusting the nodes' certificates that {@code caCert} (PEM) verifies; for nodes that do
     * not ask for a client certificate. The file is read now.
     */
    public Builder tls(Path caCert) {
      this.credentials = TlsFiles.credentials(caCert, null, null);
      return this;
    }

    /**
     * Mutual TLS: trusts the nodes' certificates that {@code caCert} verifies and presents
     * {@code cert} with its private {@code key} (PEM; the key in PKCS#8), as nodes started with
     * {@code --client-cert-auth} require. The files are read now: a client that must outlive its
     * certificate passes a reloading key manager through {@link #credentials} instead.
     */
    public Builder tls(Path caCert, Path cert, Path key) {
      this.credentials = TlsFiles.credentials(caCert, Objects.requireNonNull(cert, "cert"), Objects.requireNonNull(key, "key"));
      this.certificateIdentity = TlsFiles.identity(cert).orElse(null);
      return this;
    }

    /**
     * A bearer token from a node's {@code --auth-token-file}, sent with every call, for clients
     * that cannot present a certificate. Nodes with authentication on take the holder of every
     * lease to be the token's identity: give that identity to {@link #holder} too. Send tokens
     * only over TLS.
     */
    public Builder bearerToken(String token) {
      Objects.requireNonNull(token, "token");
      if (token.isBlank() || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
        throw new IllegalArgumentException("bearerToken: must be printable ASCII without spaces");
      }
      io.grpc.Metadata.Key<String> authorization = io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
      return interceptor(new ClientInterceptor() {
        @Override
        public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(io.grpc.MethodDescriptor<Q, R> method, io.grpc.CallOptions options,
            io.grpc.Channel next) {
          return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, io.grpc.Metadata headers) {
              headers.put(authorization, "Bearer " + token);
              super.start(listener, headers);
            }
          };
        }
      });
    }

    /** Any other channel setting (message size, keepalive, authority), applied to every node's channel. */
    public Builder channelCustomizer(Consumer<ManagedChannelBuilder<?>> customizer) {
      this.channelCustomizer = Objects.requireNonNull(customizer, "customizer");
      return this;
    }

    /** Interceptors on every call (credentials, tracing, metrics). */
    public Builder interceptor(ClientInterceptor interceptor) {
      this.interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /**
     * Where listeners run and futures complete (default: the client's own pool of daemon
     * threads). Callbacks of one lease, watch or table run one at a time, in order.
     */
    public Builder callbackExecutor(Executor executor) {
      this.callbackExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** Send writes to the leader when known, saving the follower's forwarding hop (default true). */
    public Builder preferLeader(boolean preferLeader) {
      this.preferLeader = preferLeader;
      return this;
    }

    /** Add the members the cluster reports to the endpoints, for failover (default true). */
    public Builder discoverMembers(boolean discover) {
      this.discoverMembers = discover;
      return this;
    }

    /**
     * The margin taken off every lease's validity for clock-rate drift between this machine and
     * the leader: {@code max(minimum, rate × TTL)} (default 1%, at least 50 ms).
     */
    public Builder clockDrift(double rate, Duration minimum) {
      if (!(rate >= 0 && rate < 0.5)) {
        throw new IllegalArgumentException("clockDrift rate: must be in [0, 0.5), got " + rate);
      }
      Objects.requireNonNull(minimum, "minimum");
      if (minimum.isNegative()) {
        throw new IllegalArgumentException("clockDrift minimum: must not be negative, got " + minimum);
      }
      this.clockDriftRate = rate;
      this.minDriftMargin = minimum;
      return this;
    }

    /** A watch stream silent this long (the server sends progress every second) is reopened elsewhere (default 10 s). */
    public Builder watchSilenceTimeout(Duration timeout) {
      this.watchSilenceTimeout = positive("watchSilenceTimeout", timeout);
      return this;
    }

    /** Release held leases and deregister instances on {@link #close()} (default true). */
    public Builder releaseOnClose(boolean release) {
      this.releaseOnClose = release;
      return this;
    }

    public LeaseholdClient build() {
      if (endpoints.isEmpty()) {
        throw new IllegalArgumentException("endpoints: at least one node's client address (host:port) is required");
      }
      // With a client certificate, nodes that authenticate take its identity as every lease's holder.
      String h = holder != null ? holder : certificateIdentity != null ? certificateIdentity : defaultHolder();
      if (h.isEmpty()) {
        throw new IllegalArgumentException("holder: must not be empty");
      }
      return new LeaseholdClient(new ClientSettings(endpoints, h, requestTimeout, attemptTimeout, retry, credentials,
          channelCustomizer, interceptors, Optional.ofNullable(callbackExecutor), preferLeader, discoverMembers,
          clockDriftRate, minDriftMargin, watchSilenceTimeout, releaseOnClose));
    }

    private static String defaultHolder() {
      String host = Optional.ofNullable(System.getenv("HOSTNAME")).or(() -> Optional.ofNullable(System.getenv("COMPUTERNAME")))
          .filter(s -> !s.isBlank()).orElse("client");
      return host + "/" + ProcessHandle.current().pid() + "/" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    }

    private static Duration positive(String option, Duration d) {
      Objects.requireNonNull(d, option);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(option + ": must be positive, got " + d);
      }
      return d;
    }
  }
}
