package io.leasehold.client;

import io.leasehold.client.internal.Futures;
import io.leasehold.client.internal.LeaseRunner;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link LeaseholdClient}'s API, waiting for each answer ({@link LeaseholdClient#blocking()}).
 * Failures are thrown as they are (unchecked {@link LeaseholdException}s and {@link
 * IllegalStateException}s), not wrapped. Calls that may wait for a name to become free throw {@link
 * InterruptedException} and stop waiting when interrupted; the others are bounded by the client's
 * request timeout.
 */
public final class BlockingLeaseholdClient {
  private final LeaseholdClient client;

  BlockingLeaseholdClient(LeaseholdClient client) {
    this.client = client;
  }

  /**
   * The asynchronous client this facade waits on.
   *
   * @return the asynchronous client
   */
  public LeaseholdClient async() {
    return client;
  }

  /**
   * Acquires {@code name}, waiting as {@code options} say.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL, attributes and wait bound
   * @return the lease
   * @throws InterruptedException if interrupted while waiting for the name
   * @see LeaseholdClient#acquire(String, LeaseOptions)
   */
  public Lease acquire(String name, LeaseOptions options) throws InterruptedException {
    return Futures.get(client.acquire(name, options));
  }

  /**
   * Acquires {@code name}, waiting up to {@code waitUpTo} for it to become free.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param waitUpTo the longest wait for the name
   * @return the lease
   * @throws InterruptedException if interrupted while waiting for the name
   * @see LeaseholdClient#acquire(String, Duration)
   */
  public Lease acquire(String name, Duration waitUpTo) throws InterruptedException {
    return Futures.get(client.acquire(name, waitUpTo));
  }

  /**
   * {@link LeaseholdClient#tryAcquire(String, LeaseOptions)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL and attributes (the wait bound is ignored: it never waits for a holder)
   * @return the outcome: granted, conflict or rejected
   * @see LeaseholdClient#tryAcquire(String, LeaseOptions)
   */
  public AcquireResult tryAcquire(String name, LeaseOptions options) {
    return Futures.join(client.tryAcquire(name, options));
  }

  /**
   * {@link LeaseholdClient#acquireAll}, waiting for the answer.
   *
   * @param names distinct lease names, {@code namespace/rest}
   * @param options TTL and attributes of every lease
   * @return each name's outcome
   */
  public AcquireAllResult acquireAll(Collection<String> names, LeaseOptions options) {
    return Futures.join(client.acquireAll(names, options));
  }

  /**
   * {@link LeaseholdClient#acquireAllOrNothing}, waiting for the answer.
   *
   * @param names at most 1,000 distinct lease names, {@code namespace/rest}
   * @param options TTL and attributes of every lease
   * @return each name's outcome
   */
  public AcquireAllResult acquireAllOrNothing(Collection<String> names, LeaseOptions options) {
    return Futures.join(client.acquireAllOrNothing(names, options));
  }

  /**
   * {@link #tryAcquire(String, LeaseOptions)} with default options.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return the outcome: granted, conflict or rejected
   */
  public AcquireResult tryAcquire(String name) {
    return Futures.join(client.tryAcquire(name));
  }

  /**
   * {@link LeaseholdClient#get(String)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return the live lease, or empty if the name is free
   * @see LeaseholdClient#get(String)
   */
  public Optional<LeaseInfo> get(String name) {
    return Futures.join(client.get(name));
  }

  /**
   * {@link LeaseholdClient#list(String)}, waiting for the answer.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return the leases and the listing's revision
   * @see LeaseholdClient#list(String)
   */
  public LeaseListing list(String prefix) {
    return Futures.join(client.list(prefix));
  }

  /**
   * {@link LeaseholdClient#listHeldBy(String, String)}, waiting for the answer.
   *
   * @param holder the holder identity
   * @param prefix names starting with this ({@code ""}: every name)
   * @return the leases and the listing's revision
   * @see LeaseholdClient#listHeldBy(String, String)
   */
  public LeaseListing listHeldBy(String holder, String prefix) {
    return Futures.join(client.listHeldBy(holder, prefix));
  }

  /**
   * {@link LeaseholdClient#transfer(String, long, String, Optional)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the current lease's fencing token
   * @param toHolder the identity that is to hold the name
   * @param ttl the new lease's TTL; absent: the namespace's default TTL
   * @return the new lease, or empty if no lease with that token holds the name
   * @see LeaseholdClient#transfer(String, long, String, Optional)
   */
  public Optional<LeaseInfo> transfer(
      String name, long token, String toHolder, Optional<Duration> ttl) {
    return Futures.join(client.transfer(name, token, toHolder, ttl));
  }

  /**
   * {@link LeaseholdClient#release(String, long)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the lease's fencing token
   * @return whether the lease was released (false: no such lease was held)
   * @see LeaseholdClient#release(String, long)
   */
  public boolean release(String name, long token) {
    return Futures.join(client.release(name, token));
  }

  /**
   * {@link LeaseholdClient#renew(String, long)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the lease's fencing token
   * @return the renewal, or empty if no lease with that token holds the name
   * @see LeaseholdClient#renew(String, long)
   */
  public Optional<Renewal> renew(String name, long token) {
    return Futures.join(client.renew(name, token));
  }

  /**
   * {@link LeaseholdClient#lookup(String)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @return the route, or empty if no live lease with an address holds the name
   * @see LeaseholdClient#lookup(String)
   */
  public Optional<Route> lookup(String name) {
    return Futures.join(client.lookup(name));
  }

  /**
   * {@link LeaseholdClient#routes(String)}, waiting for the answer.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return the routes, in name order
   * @see LeaseholdClient#routes(String)
   */
  public List<Route> routes(String prefix) {
    return Futures.join(client.routes(prefix));
  }

  /**
   * {@link LeaseholdClient#routesHeldBy(String, String)}, waiting for the answer.
   *
   * @param holder the holder identity
   * @param prefix names starting with this ({@code ""}: every name)
   * @return the holder's routes, in name order
   * @see LeaseholdClient#routesHeldBy(String, String)
   */
  public List<Route> routesHeldBy(String holder, String prefix) {
    return Futures.join(client.routesHeldBy(holder, prefix));
  }

  /**
   * {@link LeaseholdClient#clusterStatus()}, waiting for the answer.
   *
   * @return every member's status
   * @see LeaseholdClient#clusterStatus()
   */
  public ClusterStatus clusterStatus() {
    return Futures.join(client.clusterStatus());
  }

  /**
   * {@link LeaseholdClient#checkToken(String, long)}, waiting for the answer.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param token the lease's fencing token
   * @return whether the token is still the live lease's
   * @see LeaseholdClient#checkToken(String, long)
   */
  public boolean checkToken(String name, long token) {
    return Futures.join(client.checkToken(name, token));
  }

  /**
   * Acquires {@code name} (waiting as {@code options} say), runs {@code action} on the calling
   * thread while the lease is held — interrupting it if the lease is lost — and releases the lease.
   * Returns the action's result.
   *
   * @param <T> what the action returns
   * @param name the lease's name, {@code namespace/rest}
   * @param options TTL, attributes and wait bound
   * @param action the work to run while the lease is held
   * @return what the action returned
   * @throws LeaseLostException if the lease ended while the action ran
   * @throws InterruptedException if interrupted while waiting for the name
   * @throws Exception what the action threw
   */
  public <T> T withLease(String name, LeaseOptions options, LeaseAction<T> action)
      throws Exception {
    Lease lease = acquire(name, options);
    return LeaseRunner.run(lease, action);
  }

  /**
   * {@link #withLease(String, LeaseOptions, LeaseAction)} with default options.
   *
   * @param <T> what the action returns
   * @param name the lease's name, {@code namespace/rest}
   * @param action the work to run while the lease is held
   * @return what the action returned
   * @throws LeaseLostException if the lease ended while the action ran
   * @throws InterruptedException if interrupted while waiting for the name
   * @throws Exception what the action threw
   */
  public <T> T withLease(String name, LeaseAction<T> action) throws Exception {
    return withLease(name, LeaseOptions.defaults(), action);
  }

  /**
   * {@link LeaseholdClient#register(String, String, String, Map)}, waiting for the answer.
   *
   * @param service the service's name
   * @param instance the instance, unique within the service
   * @param address where the instance serves ({@code host:port} or a URL)
   * @param metadata the instance's metadata
   * @return the registration
   * @see LeaseholdClient#register(String, String, String, Map)
   */
  public Registration register(
      String service, String instance, String address, Map<String, String> metadata) {
    return Futures.join(client.register(service, instance, address, metadata));
  }

  /**
   * {@link #register(String, String, String, Map)} with {@code options}.
   *
   * @param service the service's name
   * @param instance the instance, unique within the service
   * @param address where the instance serves ({@code host:port} or a URL)
   * @param metadata the instance's metadata
   * @param options TTL, initial status and whether to register again after a loss
   * @return the registration
   */
  public Registration register(
      String service,
      String instance,
      String address,
      Map<String, String> metadata,
      RegisterOptions options) {
    return Futures.join(client.register(service, instance, address, metadata, options));
  }

  /**
   * {@link LeaseholdClient#deregister(String, String, long)}, waiting for the answer.
   *
   * @param service the service's name
   * @param instance the instance
   * @param token the fencing token of the instance's registration
   * @return whether it was deregistered (false: no such registration was live)
   * @see LeaseholdClient#deregister(String, String, long)
   */
  public boolean deregister(String service, String instance, long token) {
    return Futures.join(client.deregister(service, instance, token));
  }

  /**
   * {@link LeaseholdClient#setStatus(String, String, long, String)}, waiting for the answer.
   *
   * @param service the service's name
   * @param instance the instance
   * @param token the fencing token of the instance's registration
   * @param status the new status, e.g. SERVING or DRAINING
   * @return the instance as updated, or empty if no such registration was live
   * @see LeaseholdClient#setStatus(String, String, long, String)
   */
  public Optional<ServiceInstance> setStatus(
      String service, String instance, long token, String status) {
    return Futures.join(client.setStatus(service, instance, token, status));
  }

  /**
   * {@link LeaseholdClient#resolve(String)}, waiting for the answer.
   *
   * @param service the service's name
   * @return the instances
   * @see LeaseholdClient#resolve(String)
   */
  public List<ServiceInstance> resolve(String service) {
    return Futures.join(client.resolve(service));
  }

  /**
   * The live instances of {@code service}; with {@code anyStatus}, whatever their status.
   *
   * @param service the service's name
   * @param anyStatus whether to list instances whatever their status (false: SERVING only)
   * @return the instances
   */
  public List<ServiceInstance> resolve(String service, boolean anyStatus) {
    return Futures.join(client.resolve(service, anyStatus));
  }

  /**
   * {@link LeaseholdClient#resolve(String, ServiceFilter)}, waiting for the answer.
   *
   * @param service the service's name
   * @param filter which instances, see {@link ServiceFilter}
   * @return the instances, the zone that chose them and the revision
   * @see LeaseholdClient#resolve(String, ServiceFilter)
   */
  public ResolvedService resolve(String service, ServiceFilter filter) {
    return Futures.join(client.resolve(service, filter));
  }

  /**
   * {@link LeaseholdClient#resolveChange}, waiting for the answer.
   *
   * @param service the service's name
   * @param filter which instances
   * @param afterVersion the version already seen (0: answer at once)
   * @param waitUpTo the longest the node holds the call, at most 10 minutes
   * @return the instances, the zone that chose them, the revision and the version
   */
  public ResolvedService resolveChange(
      String service, ServiceFilter filter, long afterVersion, Duration waitUpTo) {
    return Futures.join(client.resolveChange(service, filter, afterVersion, waitUpTo));
  }

  /**
   * {@link LeaseholdClient#routingTable(String)}, waiting for the answer.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @return the routing table, loaded; close it when done
   * @see LeaseholdClient#routingTable(String)
   */
  public RoutingTable routingTable(String prefix) {
    return Futures.join(client.routingTable(prefix));
  }

  /**
   * {@link LeaseholdClient#routingTable(String, ServiceFilter)}, waiting until it is loaded.
   *
   * @param prefix names starting with this ({@code ""}: every name)
   * @param filter which routes the table shows
   * @return the routing table, loaded; close it when done
   */
  public RoutingTable routingTable(String prefix, ServiceFilter filter) {
    return Futures.join(client.routingTable(prefix, filter));
  }

  /**
   * The whole routing table, kept in memory; close it when done.
   *
   * @return the routing table
   */
  public RoutingTable routingTable() {
    return Futures.join(client.routingTable());
  }
}
