package io.leasehold.client.internal;

import io.leasehold.client.ResolvedService;
import io.leasehold.client.Route;
import io.leasehold.client.ServiceFilter;
import io.leasehold.client.ServiceInstance;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.LookupRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.proto.v1.SetStatusRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The client's one-off registry and routing calls: resolve a service, look up or list routes, and
 * deregister an instance or set its status by its registration's token.
 */
public final class RegistryReads {
  private final ClientCore core;

  public RegistryReads(ClientCore core) {
    this.core = core;
  }

  public CompletableFuture<List<ServiceInstance>> resolve(String service, boolean anyStatus) {
    Objects.requireNonNull(service, "service");
    core.ensureOpen("resolve " + service);
    ResolveRequest request =
        ResolveRequest.newBuilder().setService(service).setAnyStatus(anyStatus).build();
    return core.onCallbacks(
        core.calls()
            .call(Calls.Target.READ, RegistryGrpc.getResolveMethod(), request, "Resolve " + service)
            .thenApply(r -> r.getInstancesList().stream().map(Protos::instance).toList()));
  }

  public CompletableFuture<ResolvedService> resolve(String service, ServiceFilter filter) {
    return resolve(service, filter, 0, Duration.ZERO);
  }

  /**
   * A Resolve; with {@code afterVersion} above 0, a blocking one that the node answers once the
   * service's version rises above it, or after {@code wait} (the call's deadlines grow by it).
   */
  public CompletableFuture<ResolvedService> resolve(
      String service, ServiceFilter filter, long afterVersion, Duration wait) {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(wait, "wait");
    core.ensureOpen("resolve " + service);
    ResolveRequest.Builder request =
        ResolveRequest.newBuilder()
            .setService(service)
            .addAllZones(filter.zones())
            .putAllMetadata(filter.metadata())
            .addAllStatuses(filter.statuses())
            .setAnyStatus(filter.isAnyStatus());
    long waitNanos = 0;
    if (afterVersion > 0) {
      request.setWaitForVersion(afterVersion).setWait(Protos.duration(wait));
      waitNanos = wait.toNanos();
    }
    return core.onCallbacks(
        core.calls()
            .send(
                Calls.Target.READ,
                RegistryGrpc.getResolveMethod(),
                request.build(),
                "Resolve " + service,
                System.nanoTime() + core.settings().requestTimeout().toNanos() + waitNanos,
                core.settings().attemptTimeout().toNanos() + waitNanos,
                Integer.MAX_VALUE)
            .thenApply(
                sent -> {
                  var r = sent.value();
                  return new ResolvedService(
                      r.getInstancesList().stream().map(Protos::instance).toList(),
                      r.getZone().isEmpty() ? Optional.empty() : Optional.of(r.getZone()),
                      r.getRevision(),
                      r.getVersion());
                }));
  }

  public CompletableFuture<Optional<Route>> lookup(String name) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("lookup " + name);
    return core.onCallbacks(
        core.calls()
            .call(
                Calls.Target.READ,
                RoutingGrpc.getLookupMethod(),
                LookupRequest.newBuilder().setName(name).build(),
                "Lookup " + name)
            .thenApply(
                r ->
                    r.getFound()
                        ? Optional.of(Protos.route(r.getRoute()))
                        : Optional.<Route>empty()));
  }

  public CompletableFuture<List<Route>> routes(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    core.ensureOpen("routes " + prefix);
    CompletableFuture<List<Route>> all = new CompletableFuture<>();
    routesFrom(ListRoutesRequest.newBuilder().setPrefix(prefix).build(), new ArrayList<>(), all);
    return core.onCallbacks(all);
  }

  public CompletableFuture<List<Route>> routesHeldBy(String holder, String prefix) {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(prefix, "prefix");
    if (holder.isEmpty()) {
      throw new IllegalArgumentException("holder: must not be empty");
    }
    core.ensureOpen("routes of " + holder);
    CompletableFuture<List<Route>> all = new CompletableFuture<>();
    routesFrom(
        ListRoutesRequest.newBuilder().setHolder(holder).setPrefix(prefix).build(),
        new ArrayList<>(),
        all);
    return core.onCallbacks(all);
  }

  public CompletableFuture<Boolean> deregister(String service, String instance, long token) {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(instance, "instance");
    core.ensureOpen("deregister " + service + "/" + instance);
    DeregisterRequest request =
        DeregisterRequest.newBuilder()
            .setService(service)
            .setInstance(instance)
            .setToken(token)
            .build();
    return core.onCallbacks(
        core.calls()
            .call(
                Calls.Target.WRITE,
                RegistryGrpc.getDeregisterMethod(),
                request,
                "Deregister " + service + "/" + instance)
            .thenApply(r -> r.getOutcome() == Outcome.RELEASED));
  }

  public CompletableFuture<Optional<ServiceInstance>> setStatus(
      String service, String instance, long token, String status) {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(instance, "instance");
    Objects.requireNonNull(status, "status");
    core.ensureOpen("set the status of " + service + "/" + instance);
    SetStatusRequest request =
        SetStatusRequest.newBuilder()
            .setService(service)
            .setInstance(instance)
            .setToken(token)
            .setStatus(status)
            .build();
    return core.onCallbacks(
        core.calls()
            .call(
                Calls.Target.WRITE,
                RegistryGrpc.getSetStatusMethod(),
                request,
                "SetStatus " + service + "/" + instance)
            .thenApply(
                r ->
                    r.getOutcome() == Outcome.UPDATED && r.hasInstance()
                        ? Optional.of(Protos.instance(r.getInstance()))
                        : Optional.<ServiceInstance>empty()));
  }

  private void routesFrom(
      ListRoutesRequest request, List<Route> routes, CompletableFuture<List<Route>> all) {
    core.calls()
        .call(
            Calls.Target.READ,
            RoutingGrpc.getListRoutesMethod(),
            request,
            "ListRoutes " + request.getPrefix())
        .whenComplete(
            (page, error) -> {
              if (error != null) {
                all.completeExceptionally(Futures.unwrap(error));
                return;
              }
              page.getRoutesList().forEach(r -> routes.add(Protos.route(r)));
              if (page.getMore() && page.getRoutesCount() > 0) {
                routesFrom(
                    request.toBuilder()
                        .setStartAfter(page.getRoutes(page.getRoutesCount() - 1).getName())
                        .build(),
                    routes,
                    all);
              } else {
                all.complete(routes);
              }
            });
  }
}
