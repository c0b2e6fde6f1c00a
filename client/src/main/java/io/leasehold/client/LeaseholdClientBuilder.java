package io.leasehold.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.leasehold.client.internal.ClientSettings;
import io.leasehold.client.internal.TlsFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * Configures a {@link LeaseholdClient} ({@link LeaseholdClient#builder()}). Every option has a
 * default; only the endpoints are required.
 */
public final class LeaseholdClientBuilder {
  private final List<String> endpoints = new ArrayList<>();
  private String holder;

  /** The identity a client certificate names, the holder unless one is given. */
  private String certificateIdentity;

  private Duration requestTimeout = Duration.ofSeconds(15);
  private Duration attemptTimeout = Duration.ofSeconds(5);
  private RetryPolicy retry = RetryPolicy.DEFAULT;
  private ChannelCredentials credentials = InsecureChannelCredentials.create();

  /**
   * The files behind {@link #credentials} when they came from tls(...), for messages that name
   * them.
   */
  private Path caCertFile;

  private Path certFile;
  private Consumer<ManagedChannelBuilder<?>> channelCustomizer = b -> {};
  private final List<ClientInterceptor> interceptors = new ArrayList<>();
  private Executor callbackExecutor;
  private boolean preferLeader = true;
  private boolean discoverMembers = true;
  private double clockDriftRate = 0.01;
  private Duration minDriftMargin = Duration.ofMillis(50);
  private Duration watchSilenceTimeout = Duration.ofSeconds(10);
  private boolean releaseOnClose = true;
  private boolean sessions = true;
  private Duration sessionTtl;

  LeaseholdClientBuilder() {}

  /**
   * Client addresses ({@code host:port}) of any nodes; the rest are learned from the cluster.
   *
   * @param endpoints client addresses ({@code host:port}) of any of the cluster's nodes
   * @return this builder
   */
  public LeaseholdClientBuilder endpoints(String... endpoints) {
    return endpoints(Arrays.asList(endpoints));
  }

  /**
   * Client addresses ({@code host:port}) of any nodes, as a list.
   *
   * @param endpoints client addresses ({@code host:port}) of any of the cluster's nodes
   * @return this builder
   */
  public LeaseholdClientBuilder endpoints(List<String> endpoints) {
    for (String e : endpoints) {
      if (e == null || e.isBlank()) {
        throw new IllegalArgumentException("endpoints: must be host:port, got \"" + e + "\"");
      }
      this.endpoints.add(e.trim());
    }
    return this;
  }

  /**
   * The holder identity of this client's leases (a runner id, a proxy id). It must be unique among
   * live clients: the cluster treats the same holder asking again as the same lease. Nodes with
   * authentication on require it to be the client's identity: with a client certificate ({@link
   * #tls(Path, Path, Path)}) that is the default. Default: {@code <host>/<pid>/<random>}.
   *
   * @param holder the holder identity, unique among live clients
   * @return this builder
   */
  public LeaseholdClientBuilder holder(String holder) {
    this.holder = Objects.requireNonNull(holder, "holder");
    return this;
  }

  /**
   * The time a request may take, retries included (default 15 s).
   *
   * @param timeout a positive duration
   * @return this builder
   */
  public LeaseholdClientBuilder requestTimeout(Duration timeout) {
    this.requestTimeout = positive("requestTimeout", timeout);
    return this;
  }

  /**
   * The time one attempt may take before it is retried elsewhere (default 5 s).
   *
   * @param timeout a positive duration
   * @return this builder
   */
  public LeaseholdClientBuilder attemptTimeout(Duration timeout) {
    this.attemptTimeout = positive("attemptTimeout", timeout);
    return this;
  }

  /**
   * Backoff between retries (default 50 ms doubling to 2 s, ±20%).
   *
   * @param retry the backoff between retries
   * @return this builder
   */
  public LeaseholdClientBuilder retry(RetryPolicy retry) {
    this.retry = Objects.requireNonNull(retry, "retry");
    return this;
  }

  /**
   * Transport security, e.g. {@code TlsChannelCredentials.create()} (default: plaintext). For TLS
   * from PEM files, {@link #tls(Path)} and {@link #tls(Path, Path, Path)} are shorter. A Netty
   * {@code SslContext} built with {@code GrpcSslContexts.forClient()} goes in as {@code
   * NettySslContextChannelCredentials.create(sslContext)}.
   *
   * @param credentials the channel credentials
   * @return this builder
   */
  public LeaseholdClientBuilder credentials(ChannelCredentials credentials) {
    this.credentials = Objects.requireNonNull(credentials, "credentials");
    this.caCertFile = null;
    this.certFile = null;
    return this;
  }

  /**
   * TLS, trusting the nodes' certificates that {@code caCert} (PEM) verifies; for nodes that do not
   * ask for a client certificate. The file is read now.
   *
   * @param caCert the PEM file of the CA that signed the nodes' certificates
   * @return this builder
   */
  public LeaseholdClientBuilder tls(Path caCert) {
    this.credentials = TlsFiles.credentials(caCert, null, null);
    this.caCertFile = caCert;
    this.certFile = null;
    return this;
  }

  /**
   * Mutual TLS: trusts the nodes' certificates that {@code caCert} verifies and presents {@code
   * cert} with its private {@code key} (PEM; the key in PKCS#8), as nodes started with {@code
   * --client-cert-auth} require. The files are read now: a client that must outlive its certificate
   * passes a reloading key manager through {@link #credentials} instead.
   *
   * @param caCert the PEM file of the CA that signed the nodes' certificates
   * @param cert the client's certificate (PEM)
   * @param key the client certificate's private key (PEM, PKCS#8)
   * @return this builder
   */
  public LeaseholdClientBuilder tls(Path caCert, Path cert, Path key) {
    this.credentials =
        TlsFiles.credentials(
            caCert, Objects.requireNonNull(cert, "cert"), Objects.requireNonNull(key, "key"));
    this.certificateIdentity = TlsFiles.identity(cert).orElse(null);
    this.caCertFile = caCert;
    this.certFile = cert;
    return this;
  }

  /**
   * A bearer token from a node's {@code --auth-token-file}, sent with every call, for clients that
   * cannot present a certificate. Nodes with authentication on take the holder of every lease to be
   * the token's identity: give that identity to {@link #holder} too. Send tokens only over TLS.
   *
   * @param token the token, printable ASCII without spaces
   * @return this builder
   */
  public LeaseholdClientBuilder bearerToken(String token) {
    Objects.requireNonNull(token, "token");
    if (token.isBlank() || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
      throw new IllegalArgumentException("bearerToken: must be printable ASCII without spaces");
    }
    Metadata.Key<String> authorization =
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    return interceptor(
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(
                next.newCall(method, options)) {
              @Override
              public void start(Listener<R> listener, Metadata headers) {
                headers.put(authorization, "Bearer " + token);
                super.start(listener, headers);
              }
            };
          }
        });
  }

  /**
   * Any other channel setting (message size, keepalive, authority), applied to every node's
   * channel.
   *
   * @param customizer applied to every node's channel builder
   * @return this builder
   */
  public LeaseholdClientBuilder channelCustomizer(Consumer<ManagedChannelBuilder<?>> customizer) {
    this.channelCustomizer = Objects.requireNonNull(customizer, "customizer");
    return this;
  }

  /**
   * Interceptors on every call (credentials, tracing, metrics).
   *
   * @param interceptor applied to every call
   * @return this builder
   */
  public LeaseholdClientBuilder interceptor(ClientInterceptor interceptor) {
    this.interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
    return this;
  }

  /**
   * Where listeners run and futures complete (default: a pool of daemon threads shared by every
   * client in the JVM, up to 64 at once). Callbacks of one lease, watch or table run one at a time,
   * in order. Give an executor of your own for listeners that block for long.
   *
   * @param executor runs listeners and completes futures
   * @return this builder
   */
  public LeaseholdClientBuilder callbackExecutor(Executor executor) {
    this.callbackExecutor = Objects.requireNonNull(executor, "executor");
    return this;
  }

  /**
   * Send writes to the leader when known, saving the follower's forwarding hop (default true).
   *
   * @param preferLeader whether writes go to the leader when it is known
   * @return this builder
   */
  public LeaseholdClientBuilder preferLeader(boolean preferLeader) {
    this.preferLeader = preferLeader;
    return this;
  }

  /**
   * Add the members the cluster reports to the endpoints, for failover (default true).
   *
   * @param discover whether to add the members the cluster reports
   * @return this builder
   */
  public LeaseholdClientBuilder discoverMembers(boolean discover) {
    this.discoverMembers = discover;
    return this;
  }

  /**
   * The margin taken off every lease's validity for clock-rate drift between this machine and the
   * leader: {@code max(minimum, rate × TTL)} (default 1%, at least 50 ms).
   *
   * @param rate the drift rate, in [0, 0.5)
   * @param minimum the smallest margin, not negative
   * @return this builder
   */
  public LeaseholdClientBuilder clockDrift(double rate, Duration minimum) {
    if (!(rate >= 0 && rate < 0.5)) {
      throw new IllegalArgumentException("clockDrift rate: must be in [0, 0.5), got " + rate);
    }
    Objects.requireNonNull(minimum, "minimum");
    if (minimum.isNegative()) {
      throw new IllegalArgumentException(
          "clockDrift minimum: must not be negative, got " + minimum);
    }
    this.clockDriftRate = rate;
    this.minDriftMargin = minimum;
    return this;
  }

  /**
   * A watch stream silent this long (the server sends progress every second) is reopened elsewhere
   * (default 10 s).
   *
   * @param timeout a positive duration
   * @return this builder
   */
  public LeaseholdClientBuilder watchSilenceTimeout(Duration timeout) {
    this.watchSilenceTimeout = positive("watchSilenceTimeout", timeout);
    return this;
  }

  /**
   * Release held leases and deregister instances on {@link LeaseholdClient#close()} (default true).
   *
   * @param release whether to release and deregister on close
   * @return this builder
   */
  public LeaseholdClientBuilder releaseOnClose(boolean release) {
    this.releaseOnClose = release;
    return this;
  }

  /**
   * Whether leases acquired without a TTL of their own live with this client's session (default
   * true): the client keeps one session alive with one item per heartbeat, however many leases are
   * attached to it, and they all end together when the client stops keeping it alive. A lease
   * acquired with {@link LeaseOptions#withTtl} has its own TTL either way. With false, every lease
   * has its own TTL and is renewed item by item.
   *
   * @param sessions whether to attach leases to the client's session
   * @return this builder
   */
  public LeaseholdClientBuilder sessions(boolean sessions) {
    this.sessions = sessions;
    return this;
  }

  /**
   * The TTL of the client's session (default: the cluster's default TTL).
   *
   * @param ttl the session's time to live
   * @return this builder
   */
  public LeaseholdClientBuilder sessionTtl(Duration ttl) {
    this.sessionTtl = positive("sessionTtl", ttl);
    return this;
  }

  /**
   * The client; fails with IllegalArgumentException if no endpoint was given.
   *
   * @return the client, not yet connected
   * @throws IllegalArgumentException if no endpoint was given or the holder is empty
   */
  public LeaseholdClient build() {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException(
          "endpoints: at least one node's client address (host:port) is required");
    }
    // With a client certificate, nodes that authenticate take its identity as every lease's holder.
    String h =
        holder != null
            ? holder
            : certificateIdentity != null ? certificateIdentity : defaultHolder();
    if (h.isEmpty()) {
      throw new IllegalArgumentException("holder: must not be empty");
    }
    return new LeaseholdClient(
        new ClientSettings(
            endpoints,
            h,
            requestTimeout,
            attemptTimeout,
            retry,
            credentials,
            Optional.ofNullable(caCertFile),
            Optional.ofNullable(certFile),
            channelCustomizer,
            interceptors,
            Optional.ofNullable(callbackExecutor),
            preferLeader,
            discoverMembers,
            clockDriftRate,
            minDriftMargin,
            watchSilenceTimeout,
            releaseOnClose,
            sessions,
            Optional.ofNullable(sessionTtl)));
  }

  private static String defaultHolder() {
    String host =
        Optional.ofNullable(System.getenv("HOSTNAME"))
            .or(() -> Optional.ofNullable(System.getenv("COMPUTERNAME")))
            .filter(s -> !s.isBlank())
            .orElse("client");
    return host
        + "/"
        + ProcessHandle.current().pid()
        + "/"
        + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
  }

  private static Duration positive(String option, Duration d) {
    Objects.requireNonNull(d, option);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(option + ": must be positive, got " + d);
    }
    return d;
  }
}
