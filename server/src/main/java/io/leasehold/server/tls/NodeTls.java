package io.leasehold.server.tls;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.leasehold.server.LifecycleLog;
import io.leasehold.server.NodeConfig;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's TLS: the client port's and the metrics port's credentials ({@code --tls-*}), the Raft
 * port's ({@code --peer-tls-*}), and the thread that reloads their files. Each transport gets the
 * same reloadable managers, so a rotation reaches grpc-java, Ratis's shaded gRPC and the JDK's
 * HTTPS server alike.
 */
public final class NodeTls implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeTls.class);

  private final Optional<ReloadingTls> client;
  private final Optional<ReloadingTls> peer;
  private final boolean clientCertAuth;
  private final ScheduledExecutorService reloader;
  private final Map<String, String> lastRefusal = new HashMap<>();

  private NodeTls(
      Optional<ReloadingTls> client,
      Optional<ReloadingTls> peer,
      boolean clientCertAuth,
      ScheduledExecutorService reloader) {
    this.client = client;
    this.peer = peer;
    this.clientCertAuth = clientCertAuth;
    this.reloader = reloader;
  }

  /**
   * Loads the files {@code config} names and reads them again every reload interval.
   *
   * @throws IllegalArgumentException naming the option whose file does not load
   */
  public static NodeTls start(NodeConfig config, LifecycleLog events) {
    Optional<ReloadingTls> client = config.clientTls().map(f -> ReloadingTls.load("tls", f));
    Optional<ReloadingTls> peer = config.peerTls().map(f -> ReloadingTls.load("peer-tls", f));
    ScheduledThreadPoolExecutor reloader = null;
    if (client.isPresent() || peer.isPresent()) {
      reloader =
          new ScheduledThreadPoolExecutor(
              1,
              r -> {
                Thread t = new Thread(r, "leasehold-" + config.id() + "-tls-reload");
                t.setDaemon(true);
                return t;
              });
    }
    NodeTls tls = new NodeTls(client, peer, config.clientCertAuth(), reloader);
    if (reloader != null) {
      long period = config.tlsReloadInterval().toNanos();
      reloader.scheduleWithFixedDelay(
          () -> tls.reloadAll(events), period, period, TimeUnit.NANOSECONDS);
    }
    return tls;
  }

  /** Reads every transport's files again now; what the reload thread does each interval. */
  public void reloadAll(LifecycleLog events) {
    List<ReloadingTls> all = new ArrayList<>();
    client.ifPresent(all::add);
    peer.ifPresent(all::add);
    for (ReloadingTls t : all) {
      String transport = t == client.orElse(null) ? "client" : "peer";
      try {
        if (t.reload()) {
          lastRefusal.remove(transport);
          events.event("tls_reloaded", "transport", transport, "cert", t.files().cert());
        }
      } catch (IllegalArgumentException e) {
        // Once per distinct problem: a file missing for a while is not a line every interval.
        if (!e.getMessage().equals(lastRefusal.put(transport, e.getMessage()))) {
          LOG.warn("{}; the node keeps the {} certificates it has", e.getMessage(), transport);
        }
      } catch (RuntimeException e) {
        LOG.warn("reloading the {} TLS files: {}", transport, e.toString());
      }
    }
  }

  public boolean clientPortTls() {
    return client.isPresent();
  }

  public boolean peerTls() {
    return peer.isPresent();
  }

  /**
   * The client port's credentials: a client certificate is required with {@code
   * --client-cert-auth}, otherwise verified when one is presented and a CA is set.
   */
  public Optional<ServerCredentials> clientPort() {
    return client.map(
        t -> {
          TlsServerCredentials.Builder b =
              TlsServerCredentials.newBuilder().keyManager(t.keyManager());
          t.trustManager()
              .ifPresent(
                  tm ->
                      b.trustManager(tm)
                          .clientAuth(
                              clientCertAuth
                                  ? TlsServerCredentials.ClientAuth.REQUIRE
                                  : TlsServerCredentials.ClientAuth.OPTIONAL));
          return b.build();
        });
  }

  /** HTTPS for the metrics port, with the client port's certificate and client-certificate rule. */
  public Optional<HttpsConfigurator> metricsPort() {
    return client.map(
        t -> {
          SSLContext context;
          try {
            context = SSLContext.getInstance("TLS");
            context.init(
                new KeyManager[] {t.keyManager()},
                t.trustManager().map(tm -> new TrustManager[] {tm}).orElse(null),
                null);
          } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no TLS SSLContext", e);
          }
          boolean verify = t.trustManager().isPresent();
          return new HttpsConfigurator(context) {
            @Override
            public void configure(HttpsParameters params) {
              SSLParameters p = context.getDefaultSSLParameters();
              if (clientCertAuth) {
                p.setNeedClientAuth(true);
              } else if (verify) {
                p.setWantClientAuth(true);
              }
              params.setSSLParameters(p);
            }
          };
        });
  }

  /**
   * The peer port's mutual TLS, for the consensus layer's gRPC (server, peer client and Raft client
   * alike), which converts it to its own configuration. The managers reload here, and keep doing so
   * once handed on as they are.
   */
  public Optional<ReloadingTls> peerPort() {
    return peer;
  }

  @Override
  public void close() {
    if (reloader != null) {
      reloader.shutdownNow();
    }
  }
}
