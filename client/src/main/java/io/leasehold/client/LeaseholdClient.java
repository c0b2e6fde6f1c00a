package io.leasehold.client;

import io.leasehold.client.internal.ClientCore;
import io.leasehold.client.internal.ClientSettings;
import io.leasehold.client.internal.Deliveries;
import io.leasehold.client.internal.LeaseReads;
import io.leasehold.client.internal.LeaseRunner;
import io.leasehold.client.internal.MemberStatuses;
import io.leasehold.client.internal.RegistryReads;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;

/**
 * The Leasehold SDK: leases with client-side validity and fencing tokens, locks, a service registry
 * and a routing table, over a cluster of any number of nodes.
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
 * waiting for the answers. One client per process is the intent: it renews every lease it holds in
 * one batched call per interval, and it serializes its own acquisitions of a name, since all its
 * leases share one holder identity. Thread-safe; {@link #close()} releases what it holds.
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
  private final LeaseReads leases;
  private final RegistryReads registry;
  private final MemberStatuses members;

  LeaseholdClient(ClientSettings settings) {
    this.core = new ClientCore(settings);
    this.blocking = new BlockingLeaseholdClient(this);
    this.admin = new LeaseholdAdmin(core);
    this.leases = new LeaseReads(core);
    this.registry = new RegistryReads(core);
    this.members = new MemberStatuses(core);
  }

  /**
   * A client of the cluster at {@code endpoints} ({@code host:port} client addresses of any of its
   * nodes), with defaults. Returns at once: connections are made by the first calls, and a cluster
   * that cannot be reached fails those calls with {@link ClusterUnavailableException}.
   *
   * @param endpoints client addresses ({@code host:port}) of any of the cluster's nodes
   * @return the client
   */
  public static LeaseholdClient connect(String... endpoints) {
    return builder().endpoints(endpoints).build();
  }

  /**
   * {@link #connect(String...)} with a list.
   *
   * @param endpoints client addresses ({@code host:port}) of any of the cluster's nodes
   * @return the client
   */
  public static LeaseholdClient connect(List<String> endpoints) {
    return builder().endpoints(endpoints).build();
  }

  /**
   * A builder of a client: endpoints, holder, timeouts, TLS and more.
   *
   * @return a new builder
   */
  public static LeaseholdClientBuilder builder() {
    return new LeaseholdClientBuilder();
  }

  /**
   * The holder identity of every lease this client acquires.
   *
   * @return the holder identity
   */
  public String holder() {
    return core.settings().holder();
  }

  /**
   * The endpoints this client knows: the configured ones and the members it learned.
   *
   * @return the endpoints, configured and learned
   */
  public List<String> endpoints() {
    return core.connection().addresses();
  }

  /**
   * The same API, waiting for each answer.
   *
   * @return the blocking facade
   */
  public BlockingLeaseholdClient blocking() {
    return blocking;
  }

  /**
   * Acquires {@code name}, waiting for it to become free if another holder has it (up to {@link
   * LeaseOptions#waitUpTo()}; indefinitely if absent — cancel the future to stop waiting). Waiting
   * uses a watch on the name, not polling, and acquisitions of one name by this client are served
   * in arrival order. The lease is then renewed by the client until released, lost, or the client
   * closes.
   *
   * <p>Fails with {@link AcquireTimeoutException} if the wait bound passed, {@link
   * AcquireRejectedException} if policy refused, {@link InvalidRequestException} for a name or TTL
   * the cluster refuses; cluster outages are ridden out until the wait bound.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL, attributes and wait bound
   * @return completes with the lease
   */
  public CompletableFuture<Lease> acquire(String name, LeaseOptions options) {
    return Deliveries.deliver(core, core.acquire(name, options, false), r -> ((Granted) r).lease());
  }

  /**
   * Acquires {@code name} with default options, waiting up to {@code waitUpTo} for it to become
   * free.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param waitUpTo the longest wait for the name
   * @return completes with the lease
   */
  public CompletableFuture<Lease> acquire(String name, Duration waitUpTo) {
    return acquire(name, LeaseOptions.defaults().withWait(waitUpTo));
  }

  /**
   * One attempt to acquire {@code name}: GRANTED with the lease, CONFLICT with the current holder,
   * token and remaining time (without a network call if another handle of this client holds it), or
   * REJECTED with the policy's reason. It never waits for a holder; it waits only while this client
   * gives back a lease that was granted to one of its waiters after that waiter had gone (cancelled
   * or interrupted), so that it does not answer CONFLICT with a lease nobody holds.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL and attributes (the wait bound is ignored: it never waits for a holder)
   * @return completes with the outcome: granted, conflict or rejected
   */
  public CompletableFuture<AcquireResult> tryAcquire(String name, LeaseOptions options) {
    return Deliveries.deliver(core, core.acquire(name, options, true), r -> r);
  }

  /**
   * {@link #tryAcquire(String, LeaseOptions)} with default options.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return completes with the outcome: granted, conflict or rejected
   */
  public CompletableFuture<AcquireResult> tryAcquire(String name) {
    return tryAcquire(name, LeaseOptions.defaults());
  }

  /**
   * One attempt at each of {@code names}, in as few replicated entries as the cluster allows: an
   * AcquireMany of up to 1,000 names is one entry, and more names are several, sent together. Each
   * name is granted or refused on its own (another holder, policy, quota), each grant with its own
   * token; a name this client already holds through another lease is refused with a conflict,
   * without a call. Granted leases are renewed by the client, as {@link #tryAcquire}'s are.
   *
   * <p>A name whose acquisition failed on its own (its answer came after its TTL had run out on
   * this client's clock, so the client gave the grant back) is listed in {@link
   * AcquireAllResult#failed()}. Fails with {@link InvalidRequestException} for a name the cluster
   * refuses, and with the failure when every name failed (the cluster could not be reached); the
   * leases already granted are then released.
   *
   * @param names distinct lease names, {@code namespace/rest}
   * @param options TTL and attributes of every lease (the wait bound is ignored: it never waits)
   * @return completes with each name's outcome
   * @throws IllegalArgumentException if {@code names} is empty or has a name twice
   */
  public CompletableFuture<AcquireAllResult> acquireAll(
      Collection<String> names, LeaseOptions options) {
    return core.acquireAll(names, options, false);
  }

  /**
   * As {@link #acquireAll}, all or nothing: every name is granted in one replicated entry, or none
   * is — the refused names say why, and the others are {@link AcquireAllResult#skipped() skipped}.
   * The caller gets every lease or none: if one granted name cannot be handed over (its answer came
   * after its TTL ran out here, or it came back with the token of an earlier lease of this client
   * whose release was never confirmed, which the client gives back), the call fails with {@link
   * LeaseLostException} and every lease granted with it is released.
   *
   * @param names at most 1,000 distinct lease names, {@code namespace/rest}
   * @param options TTL and attributes of every lease (the wait bound is ignored: it never waits)
   * @return completes with each name's outcome
   * @throws IllegalArgumentException if {@code names} is empty, has a name twice, or has more than
   *     1,000 names
   */
  public CompletableFuture<AcquireAllResult> acquireAllOrNothing(
      Collection<String> names, LeaseOptions options) {
    return core.acquireAll(names, options, true);
  }

  /**
   * The lease on {@code name}, if any (a linearizable read).
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return completes with the live lease, or empty if the name is free
   */
  public CompletableFuture<Optional<LeaseInfo>> get(String name) {
    return leases.get(name);
  }

  /**
   * Every lease whose name starts with {@code prefix}, in name order, read page by page (10,000
   * leases a page); the listing's revision is the first page's.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return completes with the leases and the listing's revision
   */
  public CompletableFuture<LeaseListing> list(String prefix) {
    return leases.list(prefix);
  }

  /**
   * The leases {@code holder} holds whose name starts with {@code prefix}, in name order, read from
   * the cluster's holder index (one call per 10,000 leases, however many other leases there are).
   *
   * @param holder the holder identity
   * @param prefix names starting with this ({@code ""}: every name)
   * @return completes with the leases and the listing's revision
   */
  public CompletableFuture<LeaseListing> listHeldBy(String holder, String prefix) {
    return leases.listHeldBy(holder, prefix);
  }

  /**
   * Hands the lease on {@code name} with fencing token {@code token} to {@code toHolder} in one
   * replicated step: it ends (reason TRANSFERRED) and {@code toHolder} holds the name with a new,
   * larger token; the name is never free in between. For its holder (see also {@link
   * Lease#transferTo}) or, with authentication on, an admin over the name.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the current lease's fencing token
   * @param toHolder the identity that is to hold the name
   * @param ttl the new lease's TTL; absent: the namespace's default TTL
   * @return completes with the new lease, or empty if no lease with that token holds the name;
   *     fails with {@link AcquireRejectedException} if the policy refuses the new holder
   */
  public CompletableFuture<Optional<LeaseInfo>> transfer(
      String name, long token, String toHolder, Optional<Duration> ttl) {
    return leases.transfer(name, token, toHolder, ttl);
  }

  /**
   * Offers the lease on {@code name} with fencing token {@code token} to {@code toHolder}, who must
   * accept within {@code acceptWithin} ({@link #acceptTransfer}); the lease stays where it is until
   * then (see {@link Lease#offerTo}).
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the current lease's fencing token
   * @param toHolder the identity the lease is offered to
   * @param acceptWithin how long it has to accept
   * @return completes with the offer's id, or empty if no lease with that token holds the name;
   *     fails with {@link AcquireRejectedException} if the policy refuses the new holder now
   */
  public CompletableFuture<OptionalLong> offer(
      String name, long token, String toHolder, Duration acceptWithin) {
    return leases.offer(name, token, toHolder, acceptWithin);
  }

  /**
   * Accepts a transfer offered to this client's holder ({@link Lease#offerTo}) and takes up the
   * lease: the cluster ends the offering holder's lease and grants this holder the name with a new,
   * larger token, then this client acquires it as its holder, which answers with that lease
   * (attached to the client's session, as any acquisition without a TTL of its own).
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param offer the offer's id, from {@link Lease#offerTo}
   * @return completes with the handle of the lease, or empty if the offer no longer stands (it was
   *     withdrawn, replaced, or the lease ended) or the lease ended before this client took it up;
   *     fails with {@link AcquireRejectedException} if the policy refuses this holder now
   */
  public CompletableFuture<Optional<Lease>> acceptTransfer(String name, long offer) {
    return leases
        .acceptTransfer(name, offer)
        .thenCompose(
            accepted ->
                accepted.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<Lease>empty())
                    : tryAcquire(name, LeaseOptions.defaults())
                        .thenApply(
                            r ->
                                r instanceof Granted g
                                    ? Optional.of(g.lease())
                                    : Optional.<Lease>empty()));
  }

  /**
   * Asks the cluster (a linearizable read) whether {@code token} is still the fencing token of the
   * live lease on {@code name}. False once the lease ended or the name was granted again.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the lease's fencing token
   * @return completes with whether the token is still the live lease's
   */
  public CompletableFuture<Boolean> checkToken(String name, long token) {
    return get(name).thenApply(l -> l.isPresent() && l.get().token() == token);
  }

  /**
   * Releases the lease on {@code name} whose fencing token is {@code token}, whoever this client is
   * (an operator ending a lease it was told the token of). Completes with true if it was released,
   * false if no such lease was held (expired, released, superseded). Leases this client holds are
   * released through their {@link Lease} handle instead.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the lease's fencing token
   * @return completes with whether the lease was released
   */
  public CompletableFuture<Boolean> release(String name, long token) {
    return leases.release(name, token);
  }

  /**
   * Renews, once, the lease on {@code name} whose fencing token is {@code token}, whoever this
   * client is: a script or operator keeping alive a lease acquired elsewhere (as {@code leasehold
   * lease keep-alive} does). Leases this client holds are renewed by it already.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the lease's fencing token
   * @return completes with the renewal (its TTL and new end), or empty if no lease with that token
   *     holds the name (expired, released, superseded); fails with {@link AcquireRejectedException}
   *     if the policy in force refuses to renew it (it then ends at its deadline)
   */
  public CompletableFuture<Optional<Renewal>> renew(String name, long token) {
    return leases.renew(name, token);
  }

  /**
   * A {@link Lock} on {@code name}, with default lease options.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return the lock
   */
  public LeaseLock lock(String name) {
    return lock(name, LeaseOptions.defaults());
  }

  /**
   * A {@link Lock} on {@code name}; its leases use {@code options} (their wait bound is ignored).
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL and attributes of the lock's leases (the wait bound is ignored)
   * @return the lock
   */
  public LeaseLock lock(String name, LeaseOptions options) {
    core.ensureOpen("lock " + name);
    return new LeaseLock(this, name, options);
  }

  /**
   * Acquires {@code name} (waiting as {@code options} say), runs {@code action} on a thread of the
   * client's while the lease is held, interrupts it if the lease is lost, and releases the lease
   * when it returns. Completes with the action's result; fails with {@link LeaseLostException} if
   * the lease ended while it ran. Cancelling the future stops waiting, or interrupts the action.
   *
   * @param <T> what the action returns
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL, attributes and wait bound
   * @param action the work to run while the lease is held
   * @return completes with what the action returned
   */
  public <T> CompletableFuture<T> withLease(
      String name, LeaseOptions options, LeaseAction<T> action) {
    Objects.requireNonNull(action, "action");
    return LeaseRunner.whileHeld(core, name, acquire(name, options), action);
  }

  /**
   * {@link #withLease(String, LeaseOptions, LeaseAction)} with default options.
   *
   * @param <T> what the action returns
   * @param name the lease's name, {@code namespace/rest}
   * @param action the work to run while the lease is held
   * @return completes with what the action returned
   */
  public <T> CompletableFuture<T> withLease(String name, LeaseAction<T> action) {
    return withLease(name, LeaseOptions.defaults(), action);
  }

  /**
   * Registers an instance of {@code service} at {@code address}: the lease {@code
   * service/<service>/<instance>}, SERVING, kept alive by this client, deregistered when the
   * registration is closed. Fails with {@link LeaseConflictException} if another holder registered
   * that instance.
   *
   * @param service the service's name
   * @param instance the instance, unique within the service
   * @param address where the instance serves ({@code host:port} or a URL)
   * @param metadata the instance's metadata
   * @return completes with the registration
   */
  public CompletableFuture<Registration> register(
      String service, String instance, String address, Map<String, String> metadata) {
    return register(service, instance, address, metadata, RegisterOptions.DEFAULTS);
  }

  /**
   * {@link #register(String, String, String, Map)} with {@code options}.
   *
   * @param service the service's name
   * @param instance the instance, unique within the service
   * @param address where the instance serves ({@code host:port} or a URL)
   * @param metadata the instance's metadata
   * @param options TTL, initial status and whether to register again after a loss
   * @return completes with the registration
   */
  public CompletableFuture<Registration> register(
      String service,
      String instance,
      String address,
      Map<String, String> metadata,
      RegisterOptions options) {
    return core.onCallbacks(core.register(service, instance, address, metadata, options));
  }

  /**
   * Deregisters the instance of {@code service} whose registration has fencing token {@code token},
   * whoever registered it (an operator taking an instance out). Registrations this client made are
   * deregistered through their {@link Registration} instead.
   *
   * @param service the service's name
   * @param instance the instance
   * @param token the fencing token of the instance's registration
   * @return completes with whether it was deregistered (false: no such registration was live)
   */
  public CompletableFuture<Boolean> deregister(String service, String instance, long token) {
    return registry.deregister(service, instance, token);
  }

  /**
   * Sets the status (e.g. {@link Registration#DRAINING}) of the instance of {@code service} whose
   * registration has fencing token {@code token}, whoever registered it; its address and metadata
   * stay as registered. Registrations this client made change theirs through {@link
   * Registration#setStatus} instead.
   *
   * @param service the service's name
   * @param instance the instance
   * @param token the fencing token of the instance's registration
   * @param status the new status, e.g. SERVING or DRAINING
   * @return completes with the instance as updated, or empty if no such registration was live
   */
  public CompletableFuture<Optional<ServiceInstance>> setStatus(
      String service, String instance, long token, String status) {
    return registry.setStatus(service, instance, token, status);
  }

  /**
   * The live SERVING instances of {@code service}, in instance order (a linearizable read).
   *
   * @param service the service's name
   * @return completes with the instances
   */
  public CompletableFuture<List<ServiceInstance>> resolve(String service) {
    return resolve(service, false);
  }

  /**
   * The live instances of {@code service}; with {@code anyStatus}, whatever their status.
   *
   * @param service the service's name
   * @param anyStatus whether to list instances whatever their status (false: SERVING only)
   * @return completes with the instances
   */
  public CompletableFuture<List<ServiceInstance>> resolve(String service, boolean anyStatus) {
    return registry.resolve(service, anyStatus);
  }

  /**
   * The live instances of {@code service} that {@code filter} selects (a linearizable read): by
   * status, metadata and zone preference, e.g. the SERVING instances of version 2.3 in eu-west-1a,
   * else in any zone.
   *
   * @param service the service's name
   * @param filter which instances, see {@link ServiceFilter}
   * @return completes with the instances, the zone that chose them and the revision; fails with
   *     {@link InvalidRequestException} for a filter the node refuses
   */
  public CompletableFuture<ResolvedService> resolve(String service, ServiceFilter filter) {
    return registry.resolve(service, filter);
  }

  /**
   * A blocking resolve, as Consul's blocking queries: completes once the service's version rises
   * above {@code afterVersion} (a registration, an ending, an update of one of its instances), with
   * the instances {@code filter} selects then; or after {@code waitUpTo} with them as they are —
   * the same version when nothing changed. For clients that cannot hold a watch stream: loop,
   * passing each answer's {@link ResolvedService#version()} to the next call.
   *
   * @param service the service's name
   * @param filter which instances, see {@link ServiceFilter}
   * @param afterVersion the version already seen (0: answer at once)
   * @param waitUpTo the longest the node holds the call, at most 10 minutes
   * @return completes with the instances, the zone that chose them, the revision and the version
   */
  public CompletableFuture<ResolvedService> resolveChange(
      String service, ServiceFilter filter, long afterVersion, Duration waitUpTo) {
    return registry.resolve(service, filter, afterVersion, waitUpTo);
  }

  /**
   * The route of {@code name} (a linearizable read, for one-off lookups; a proxy keeps a {@link
   * #routingTable} instead): empty unless a live lease with an address holds it.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return completes with the route, or empty if no live lease with an address holds the name
   */
  public CompletableFuture<Optional<Route>> lookup(String name) {
    return registry.lookup(name);
  }

  /**
   * Every route whose name starts with {@code prefix}, in name order, read page by page (one-off).
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return completes with the routes, in name order
   */
  public CompletableFuture<List<Route>> routes(String prefix) {
    return registry.routes(prefix);
  }

  /**
   * The routes {@code holder} holds whose name starts with {@code prefix}, in name order, read from
   * the cluster's holder index (one-off; a proxy's {@link RoutingTable#heldBy} answers from
   * memory).
   *
   * @param holder the holder identity, e.g. a runner draining its mailboxes
   * @param prefix names starting with this ({@code ""}: every name)
   * @return completes with the routes, in name order
   */
  public CompletableFuture<List<Route>> routesHeldBy(String holder, String prefix) {
    return registry.routesHeldBy(holder, prefix);
  }

  /**
   * The whole routing table, kept in memory; completes once it is loaded. Close it when done.
   *
   * @return completes with the routing table
   */
  public CompletableFuture<RoutingTable> routingTable() {
    return routingTable("");
  }

  /**
   * The routes whose name starts with {@code prefix}, kept in memory; completes once loaded.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return completes with the routing table
   */
  public CompletableFuture<RoutingTable> routingTable(String prefix) {
    return core.routingTable(prefix);
  }

  /**
   * The routes under {@code prefix} that {@code filter} lets pass ({@link
   * ServiceFilter#matches(Route)}), kept in memory; completes once loaded. A route that stops
   * passing (its status or metadata updated, e.g. DRAINING) leaves the table and its listeners hear
   * it as a removal; one that starts passing arrives as an addition. The zones of the filter are a
   * set here: routes in any of them. For a service's instances: {@code
   * routingTable("service/payments/", ServiceFilter.serving().inZones("eu-west-1a"))}.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @param filter which routes the table shows
   * @return completes with the routing table
   */
  public CompletableFuture<RoutingTable> routingTable(String prefix, ServiceFilter filter) {
    Objects.requireNonNull(filter, "filter");
    return core.routingTable(prefix, filter);
  }

  /**
   * A semaphore of {@code permits} permits (see {@link io.leasehold.client.recipes.Semaphore}).
   *
   * @param name the semaphore's name, e.g. {@code semaphore/db-migrations}
   * @param permits the most holders at once; every client of the name must use the same number
   * @return the semaphore
   */
  public io.leasehold.client.recipes.Semaphore semaphore(String name, int permits) {
    return io.leasehold.client.recipes.Semaphore.of(this, name, permits);
  }

  /**
   * A leader election on the lease {@code name} (see {@link io.leasehold.client.recipes.Election}).
   *
   * @param name the lease name that stands for the leadership, e.g. {@code election/billing}
   * @return the election
   */
  public io.leasehold.client.recipes.Election election(String name) {
    return io.leasehold.client.recipes.Election.of(this, name);
  }

  /**
   * Joins the partition group {@code group} of {@code n} partitions with default options (see
   * {@link io.leasehold.client.recipes.PartitionMember}): this client's holder identity takes a
   * balanced share of partitions {@code 0..n-1}, rebalanced as members join and leave.
   *
   * @param group the group's name (not starting or ending with {@code /}), e.g. {@code orders}
   * @param n the number of partitions, the same for every member
   * @param listener told when this member starts and stops owning a partition
   * @return completes with the member once it joined; close it to hand its partitions on and leave
   */
  public CompletableFuture<io.leasehold.client.recipes.PartitionMember> partitions(
      String group, int n, io.leasehold.client.recipes.PartitionListener listener) {
    return io.leasehold.client.recipes.PartitionMember.join(this, group, n, listener);
  }

  /**
   * Joins the partition group {@code group} of {@code n} partitions with {@code options} (see
   * {@link io.leasehold.client.recipes.PartitionMember}).
   *
   * @param group the group's name (not starting or ending with {@code /})
   * @param n the number of partitions, the same for every member
   * @param listener told when this member starts and stops owning a partition
   * @param options namespace, this member's address and timings
   * @return completes with the member once it joined; close it to hand its partitions on and leave
   */
  public CompletableFuture<io.leasehold.client.recipes.PartitionMember> partitions(
      String group,
      int n,
      io.leasehold.client.recipes.PartitionListener listener,
      io.leasehold.client.recipes.PartitionOptions options) {
    return io.leasehold.client.recipes.PartitionMember.join(this, group, n, listener, options);
  }

  /**
   * Streams changes under {@code prefix} from {@code fromRevision} (0: from now on) to {@code
   * listener}, resuming on another node after failures with no gap and no duplicate.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @param fromRevision the first revision to deliver (0: from now on)
   * @param listener told of each event, one at a time
   * @return the watch; close it to stop
   */
  public Watch watch(String prefix, long fromRevision, WatchListener listener) {
    return watch(WatchOptions.of(prefix).withFromRevision(fromRevision), listener);
  }

  /**
   * Streams what {@code options} ask for to {@code listener}, resuming after failures with no gap
   * and no duplicate.
   *
   * @param options prefix, starting revision, event types and view
   * @param listener told of each event, one at a time
   * @return the watch; close it to stop
   */
  public Watch watch(WatchOptions options, WatchListener listener) {
    return core.watch(options, listener);
  }

  /**
   * Every member of the cluster as it answers for itself: the members are read from any node, then
   * each is asked directly, one attempt bounded by the attempt timeout. A member that does not
   * answer is listed with the error, not failed: only no node answering at all fails the future
   * (with {@link ClusterUnavailableException}).
   *
   * @return completes with every member's status
   */
  public CompletableFuture<ClusterStatus> clusterStatus() {
    return members.clusterStatus();
  }

  /**
   * Operators' controls: policy, bans, revocation, history.
   *
   * @return the operators' controls
   */
  public LeaseholdAdmin admin() {
    return admin;
  }

  /**
   * Identities, roles and grants, and the audit history.
   *
   * @return the identity and role calls
   */
  public LeaseholdAuth auth() {
    return new LeaseholdAuth(core);
  }

  /**
   * One node's status, membership changes, leadership transfer and snapshots, for operators' tools.
   *
   * @return the cluster's membership calls
   */
  public ClusterAdmin cluster() {
    return new ClusterAdmin(core);
  }

  /**
   * Whether {@link #close()} was called.
   *
   * @return whether the client is closed
   */
  public boolean isClosed() {
    return core.isClosing();
  }

  /**
   * Closes the client: pending acquisitions fail with {@link ClientClosedException}, watches and
   * routing tables stop, registrations are deregistered and held leases released (unless built with
   * {@code releaseOnClose(false)}; then they become LOST and expire), waiting up to the request
   * timeout for the cluster: leases with a TTL of their own one by one, those attached to the
   * client's session by one CloseSession. Idempotent.
   */
  @Override
  public void close() {
    core.close();
  }

  ClientCore core() {
    return core;
  }
}
