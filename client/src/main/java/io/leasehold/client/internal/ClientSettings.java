package io.leasehold.client.internal;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import io.leasehold.client.RetryPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * Everything a client was built with; {@code LeaseholdClientBuilder} holds the defaults and checks
 * the values. Internal: not part of the API.
 */
public record ClientSettings(
    List<String> endpoints,
    String holder,
    Duration requestTimeout,
    Duration attemptTimeout,
    RetryPolicy retry,
    ChannelCredentials credentials,
    Optional<Path> caCertFile,
    Optional<Path> certFile,
    Consumer<ManagedChannelBuilder<?>> channelCustomizer,
    List<ClientInterceptor> interceptors,
    Optional<Executor> callbackExecutor,
    boolean preferLeader,
    boolean discoverMembers,
    double clockDriftRate,
    Duration minDriftMargin,
    Duration watchSilenceTimeout,
    boolean releaseOnClose,
    boolean sessions,
    Optional<Duration> sessionTtl) {

  public ClientSettings {
    endpoints = List.copyOf(endpoints);
    interceptors = List.copyOf(interceptors);
    Objects.requireNonNull(holder);
    Objects.requireNonNull(requestTimeout);
    Objects.requireNonNull(attemptTimeout);
    Objects.requireNonNull(retry);
    Objects.requireNonNull(credentials);
    Objects.requireNonNull(caCertFile);
    Objects.requireNonNull(certFile);
    Objects.requireNonNull(channelCustomizer);
    Objects.requireNonNull(callbackExecutor);
    Objects.requireNonNull(minDriftMargin);
    Objects.requireNonNull(watchSilenceTimeout);
    Objects.requireNonNull(sessionTtl);
  }

  /** The margin taken off a lease's TTL for clock-rate drift between this client and the leader. */
  public long driftMarginNanos(long ttlNanos) {
    return Math.max(minDriftMargin.toNanos(), (long) (ttlNanos * clockDriftRate));
  }
}
