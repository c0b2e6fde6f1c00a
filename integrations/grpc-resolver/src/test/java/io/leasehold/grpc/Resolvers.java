package io.leasehold.grpc;

import io.grpc.ChannelLogger;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.StatusOr;
import io.grpc.SynchronizationContext;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.testkit.LeaseholdCluster;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** Clients, resolver arguments and a listener that records what resolvers report, for the tests. */
final class Resolvers {
  private Resolvers() {}

  static final ScheduledExecutorService TIMER =
      Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "test-resolver-timer"));
  static final ExecutorService OFFLOAD =
      Executors.newCachedThreadPool(r -> daemon(r, "test-resolver-offload"));

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * Waits until {@code condition} holds, polling, and fails naming {@code what} at the deadline.
   */
  static void await(String what, Duration timeout, BooleanSupplier condition) {
    await(() -> what, timeout, condition);
  }

  /** As {@link #await(String, Duration, BooleanSupplier)}, describing the state at the deadline. */
  static void await(Supplier<String> what, Duration timeout, BooleanSupplier condition) {
    try {
      Awaitility.await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(20))
          .ignoreExceptions() // not yet: a node may be mid-election
          .until(condition::getAsBoolean);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "timed out after " + timeout.toMillis() + " ms waiting for " + what.get(), e);
    }
  }

  /** A client of every node, with short timeouts suited to tests. */
  static LeaseholdClient client(List<String> endpoints) {
    return LeaseholdClient.builder()
        .endpoints(endpoints)
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3))
        .build();
  }

  static LeaseholdClient client(LeaseholdCluster cluster) {
    return client(cluster.addresses());
  }

  /** The arguments a channel would give a resolver. */
  static NameResolver.Args args() {
    return NameResolver.Args.newBuilder()
        .setDefaultPort(443)
        .setProxyDetector(address -> null)
        .setSynchronizationContext(
            new SynchronizationContext(
                (thread, e) -> {
                  throw new AssertionError("uncaught in the synchronization context", e);
                }))
        .setServiceConfigParser(
            new NameResolver.ServiceConfigParser() {
              @Override
              public NameResolver.ConfigOrError parseServiceConfig(Map<String, ?> config) {
                return NameResolver.ConfigOrError.fromConfig(config);
              }
            })
        .setScheduledExecutorService(TIMER)
        .setChannelLogger(
            new ChannelLogger() {
              @Override
              public void log(ChannelLogLevel level, String message) {}

              @Override
              public void log(ChannelLogLevel level, String messageFormat, Object... args) {}
            })
        .setOffloadExecutor(OFFLOAD)
        .build();
  }

  /** A resolver started as a channel starts it: in its synchronization context. */
  static Started start(LeaseholdNameResolverProvider provider, String target) {
    NameResolver.Args args = args();
    NameResolver resolver = provider.newNameResolver(URI.create(target), args);
    Recorder recorder = new Recorder();
    args.getSynchronizationContext().execute(() -> resolver.start(recorder));
    return new Started(resolver, args.getSynchronizationContext(), recorder);
  }

  /** A started resolver, the context it runs in and what it reported. */
  record Started(NameResolver resolver, SynchronizationContext sync, Recorder recorder)
      implements AutoCloseable {
    void refresh() {
      sync.execute(resolver::refresh);
    }

    @Override
    public void close() {
      sync.execute(resolver::shutdown);
    }
  }

  /** Records every result a resolver reports, in order. */
  static final class Recorder extends NameResolver.Listener2 {
    final List<StatusOr<List<EquivalentAddressGroup>>> results = new CopyOnWriteArrayList<>();

    @Override
    public void onResult(NameResolver.ResolutionResult result) {
      results.add(result.getAddressesOrError());
    }

    @Override
    public Status onResult2(NameResolver.ResolutionResult result) {
      results.add(result.getAddressesOrError());
      return result.getAddressesOrError().hasValue()
          ? Status.OK
          : result.getAddressesOrError().getStatus();
    }

    @Override
    public void onError(Status error) {
      results.add(StatusOr.fromStatus(error));
    }

    StatusOr<List<EquivalentAddressGroup>> last() {
      return results.isEmpty() ? null : results.get(results.size() - 1);
    }

    /** The last result's instance names, if it was a list. */
    List<String> lastInstances() {
      StatusOr<List<EquivalentAddressGroup>> r = last();
      if (r == null || !r.hasValue()) {
        return null;
      }
      return r.getValue().stream()
          .map(g -> g.getAttributes().get(LeaseholdNameResolverProvider.INSTANCE))
          .toList();
    }
  }
}
