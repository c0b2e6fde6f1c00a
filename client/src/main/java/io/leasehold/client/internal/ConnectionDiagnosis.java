package io.leasehold.client.internal;

import io.grpc.ChannelCredentials;
import io.grpc.ChoiceChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.leasehold.client.ConnectionFailedException;
import io.leasehold.client.ConnectionFailure;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * Tells why a connection to a node failed, where the failure shows it: a host name that does not
 * resolve, or a TLS handshake that cannot succeed with the client's settings. Such a failure is a
 * {@link ConnectionFailure}, which every node gives alike, so a request stops retrying once every
 * endpoint gave one. Anything else (a node down, a connection reset) is not diagnosed and is
 * retried as before. Internal.
 */
public final class ConnectionDiagnosis {
  /** A diagnosed failure: why, and what the resolver or the TLS library said, made readable. */
  public record Diagnosis(ConnectionFailure reason, String detail) {}

  /**
   * The TLS alerts a node sends when it refuses the client's certificate, and what each says of it.
   */
  private static final Map<String, String> CERTIFICATE_ALERTS =
      Map.of(
          "bad_certificate", "a bad certificate",
          "unknown_ca", "not signed by a CA the node trusts",
          "certificate_unknown", "not accepted",
          "certificate_expired", "expired",
          "certificate_revoked", "revoked",
          "unsupported_certificate", "of a kind the node does not support",
          "access_denied", "access denied");

  /** The alerts of a handshake that failed over versions or ciphers. */
  private static final List<String> HANDSHAKE_ALERTS =
      List.of(
          "handshake_failure",
          "protocol_version",
          "insufficient_security",
          "no_application_protocol",
          "illegal_parameter");

  private static final Pattern ALERT =
      Pattern.compile("(?:received fatal alert: |alert[_ ]?)([a-z_]+)");
  private static final Pattern RESOLVE = Pattern.compile("Unable to resolve host (\\S+)");
  private static final long PROBE_REUSE_NANOS = 5_000_000_000L;

  private enum Transport {
    PLAINTEXT,
    TLS,
    UNKNOWN
  }

  private final Transport transport;

  /** Whether the client presents a certificate; null if its credentials do not say. */
  private final Boolean presentsCertificate;

  private final Optional<Path> caCert;
  private final Optional<Path> cert;
  private final long probeTimeoutMillis;

  public ConnectionDiagnosis(ClientSettings settings) {
    this(
        settings.credentials(),
        settings.caCertFile(),
        settings.certFile(),
        Math.max(100, Math.min(2_000, settings.attemptTimeout().toMillis())));
  }

  /**
   * For channels of the caller's own, built with {@code credentials} from the PEM files {@code
   * caCert} and {@code cert} (empty if none, or not from files).
   */
  public ConnectionDiagnosis(
      ChannelCredentials credentials, Optional<Path> caCert, Optional<Path> cert) {
    this(credentials, caCert, cert, 2_000);
  }

  ConnectionDiagnosis(
      ChannelCredentials credentials,
      Optional<Path> caCert,
      Optional<Path> cert,
      long probeTimeoutMillis) {
    this.transport = transport(credentials);
    this.presentsCertificate = presentsCertificate(credentials);
    this.caCert = caCert;
    this.cert = cert;
    this.probeTimeoutMillis = probeTimeoutMillis;
  }

  /**
   * The diagnosis of a failed call to {@code endpoint}, if the failure is one the client can tell;
   * at once, or after a probe of the endpoint's port where only one can tell (a plaintext client
   * whose connection a TLS port closed without a word).
   */
  public CompletableFuture<Optional<Diagnosis>> diagnose(Endpoint endpoint, Status status) {
    Optional<Diagnosis> d = classify(status);
    if (d.isPresent() || !closedWithoutAWord(status)) {
      return CompletableFuture.completedFuture(d);
    }
    return endpoint
        .tlsProbe(PROBE_REUSE_NANOS, () -> probe(endpoint.address()))
        .thenApply(ConnectionDiagnosis::tlsRequired);
  }

  /**
   * As {@link #diagnose(Endpoint, Status)}, for a channel of the caller's own to {@code address}
   * (host:port), waiting for the probe if one is needed.
   */
  public Optional<Diagnosis> diagnose(String address, Status status) {
    Optional<Diagnosis> d = classify(status);
    return d.isPresent() || !closedWithoutAWord(status) ? d : tlsRequired(probe(address));
  }

  private static Optional<Diagnosis> tlsRequired(boolean speaksTls) {
    return speaksTls
        ? Optional.of(
            new Diagnosis(ConnectionFailure.TLS_REQUIRED, "the port answered a TLS handshake"))
        : Optional.empty();
  }

  /** The diagnosis the failure itself shows, without asking the node anything more. */
  Optional<Diagnosis> classify(Status status) {
    if (status.getCode() != Status.Code.UNAVAILABLE) {
      return Optional.empty();
    }
    List<Throwable> causes = causes(status.getCause());
    for (Throwable t : causes) {
      if (t instanceof UnknownHostException) {
        return Optional.of(
            new Diagnosis(ConnectionFailure.UNKNOWN_HOST, String.valueOf(t.getMessage())));
      }
    }
    Matcher resolve = RESOLVE.matcher(String.valueOf(status.getDescription()));
    if (resolve.find()) {
      return Optional.of(new Diagnosis(ConnectionFailure.UNKNOWN_HOST, resolve.group(1)));
    }
    if (transport == Transport.PLAINTEXT) {
      return Optional.empty();
    }
    // The TLS client's own checks of the node's certificate.
    for (Throwable t : causes) {
      if (t instanceof CertificateExpiredException
          || t instanceof CertificateNotYetValidException
          || t instanceof CertPathValidatorException v
              && v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
        return Optional.of(new Diagnosis(ConnectionFailure.CERTIFICATE_EXPIRED, message(t)));
      }
    }
    for (Throwable t : causes) {
      String m = message(t);
      if (t instanceof CertPathBuilderException
          || t instanceof CertPathValidatorException
          || m.contains("unable to find valid certification path")
          || m.contains("PKIX path")) {
        return Optional.of(
            new Diagnosis(
                ConnectionFailure.UNTRUSTED_CERTIFICATE, message(causes.get(causes.size() - 1))));
      }
      if (m.startsWith("No subject alternative") || m.startsWith("No name matching")) {
        return Optional.of(new Diagnosis(ConnectionFailure.CERTIFICATE_NAME_MISMATCH, m));
      }
    }
    for (Throwable t : causes) {
      if (t.getClass().getSimpleName().equals("NotSslRecordException")) {
        return Optional.of(
            new Diagnosis(
                ConnectionFailure.NOT_TLS, "the port answered with something other than TLS"));
      }
    }
    // What the node said of the handshake: a TLS alert.
    for (Throwable t : causes) {
      if (!(t instanceof SSLException)) {
        continue;
      }
      Optional<String> alert = alert(message(t));
      if (alert.isEmpty()) {
        continue;
      }
      String a = alert.get();
      boolean hasCertificate = Boolean.TRUE.equals(presentsCertificate);
      if (a.equals("certificate_required")) {
        // A client sends its certificate only if a CA the node names signed it: one that has a
        // certificate and was asked for one has the wrong one.
        return Optional.of(
            hasCertificate
                ? new Diagnosis(
                    ConnectionFailure.CLIENT_CERTIFICATE_REJECTED,
                    "not signed by a CA the node accepts; TLS alert " + a)
                : new Diagnosis(ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED, "TLS alert " + a));
      }
      if (CERTIFICATE_ALERTS.containsKey(a)) {
        return Optional.of(
            Boolean.FALSE.equals(presentsCertificate)
                ? new Diagnosis(ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED, "TLS alert " + a)
                : new Diagnosis(
                    ConnectionFailure.CLIENT_CERTIFICATE_REJECTED,
                    CERTIFICATE_ALERTS.get(a) + "; TLS alert " + a));
      }
      if (HANDSHAKE_ALERTS.contains(a)) {
        return Optional.of(new Diagnosis(ConnectionFailure.TLS_HANDSHAKE_FAILED, "TLS alert " + a));
      }
    }
    return Optional.empty();
  }

  /**
   * A plaintext connection the node closed before it said anything: what a TLS port does with an
   * HTTP/2 preface, and also what a node that stops does; a probe tells them apart.
   */
  private boolean closedWithoutAWord(Status status) {
    return transport == Transport.PLAINTEXT
        && status.getCode() == Status.Code.UNAVAILABLE
        && String.valueOf(status.getDescription()).startsWith("Network closed for unknown reason");
  }

  /**
   * Whether the port at {@code address} answers a TLS ClientHello with a TLS record: certain, where
   * a closed connection is not. False if it cannot be reached or answers otherwise.
   */
  boolean probe(String address) {
    Optional<InetSocketAddress> at = socketAddress(address);
    if (at.isEmpty()) {
      return false;
    }
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(at.get().getHostString());
    } catch (UnknownHostException e) {
      return false;
    }
    // The first address that accepts a connection decides, as gRPC connects to the first that does.
    for (InetAddress a : addresses) {
      try (Socket socket = new Socket()) {
        try {
          socket.connect(new InetSocketAddress(a, at.get().getPort()), (int) probeTimeoutMillis);
        } catch (IOException refused) {
          continue;
        }
        socket.setSoTimeout((int) probeTimeoutMillis);
        OutputStream out = socket.getOutputStream();
        out.write(clientHello(at.get()));
        out.flush();
        InputStream in = socket.getInputStream();
        int type = in.read();
        int major = in.read();
        // A handshake (22) or alert (21) record of TLS/SSL 3.x; an HTTP/2 port sends a frame
        // header.
        return (type == 22 || type == 21) && major == 3;
      } catch (IOException | GeneralSecurityException | RuntimeException e) {
        return false;
      }
    }
    return false;
  }

  private static byte[] clientHello(InetSocketAddress at)
      throws GeneralSecurityException, SSLException {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, null, null);
    SSLEngine engine = context.createSSLEngine(at.getHostString(), at.getPort());
    engine.setUseClientMode(true);
    ByteBuffer hello = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
    engine.beginHandshake();
    engine.wrap(ByteBuffer.allocate(0), hello);
    hello.flip();
    byte[] bytes = new byte[hello.remaining()];
    hello.get(bytes);
    return bytes;
  }

  /** {@code host:port} (or {@code [v6]:port}); empty for a target gRPC resolves some other way. */
  static Optional<InetSocketAddress> socketAddress(String address) {
    if (address.contains("://") || address.contains(":///")) {
      return Optional.empty();
    }
    try {
      URI u = new URI("tcp://" + address);
      if (u.getHost() == null || u.getPort() < 0) {
        return Optional.empty();
      }
      String host =
          u.getHost().startsWith("[")
              ? u.getHost().substring(1, u.getHost().length() - 1)
              : u.getHost();
      return Optional.of(InetSocketAddress.createUnresolved(host, u.getPort()));
    } catch (java.net.URISyntaxException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * The exception of a request {@code what} that no endpoint could connect to: {@code failures}
   * holds each endpoint's diagnosis, in the order tried.
   */
  public ConnectionFailedException exception(
      String what, Map<String, Diagnosis> failures, Status last) {
    Map.Entry<String, Diagnosis> first = failures.entrySet().iterator().next();
    Map<String, ConnectionFailure> reasons = new java.util.LinkedHashMap<>();
    failures.forEach((e, d) -> reasons.put(e, d.reason()));
    String message =
        what
            + ": cannot connect to "
            + first.getKey()
            + ": "
            + explain(first.getKey(), first.getValue());
    if (failures.size() > 1) {
      List<String> others = new ArrayList<>();
      failures.forEach(
          (e, d) -> {
            if (!e.equals(first.getKey())) {
              others.add(
                  e + (d.reason() == first.getValue().reason() ? "" : " (" + d.reason() + ")"));
            }
          });
      message += "; nor to " + String.join(", ", others);
    }
    return new ConnectionFailedException(
        message,
        first.getValue().reason(),
        first.getKey(),
        first.getValue().detail(),
        reasons,
        last.asRuntimeException());
  }

  /**
   * What went wrong at {@code endpoint} and what to do, naming the builder's methods and the
   * client's files.
   */
  String explain(String endpoint, Diagnosis d) {
    String ca = caCert.map(p -> "the CA in " + p).orElse("the CA the client trusts");
    return switch (d.reason()) {
      case UNKNOWN_HOST ->
          "the host name "
              + host(endpoint)
              + " does not resolve ("
              + d.detail()
              + "); check the name and the DNS";
      case TLS_REQUIRED ->
          "the node speaks TLS and the client plaintext; build the client with tls(caCert), "
              + "or tls(caCert, cert, key) where the nodes require client certificates";
      case NOT_TLS ->
          "the port does not speak TLS; the node runs without TLS (build the client without tls), or it is not a node's client port";
      case UNTRUSTED_CERTIFICATE ->
          "the node's certificate is not signed by "
              + ca
              + "; give tls(...) the CA that signed the nodes' certificates";
      case CERTIFICATE_EXPIRED ->
          "the node's certificate has expired or is not valid yet ("
              + d.detail()
              + "); the node needs a current certificate";
      case CERTIFICATE_NAME_MISMATCH ->
          "the node's certificate does not name "
              + host(endpoint)
              + " ("
              + d.detail()
              + "); connect by a name the certificate holds, or reissue it with this one";
      case CLIENT_CERTIFICATE_REQUIRED ->
          "the node requires a client certificate; build the client with tls(caCert, cert, key)";
      case CLIENT_CERTIFICATE_REJECTED ->
          "the node refused the client certificate"
              + cert.map(p -> " " + p).orElse("")
              + " ("
              + d.detail()
              + "); it must be current and signed by a CA the node trusts";
      case TLS_HANDSHAKE_FAILED ->
          "the TLS handshake failed ("
              + d.detail()
              + ")"
              + (Boolean.FALSE.equals(presentsCertificate)
                  ? "; if the node requires client certificates, give one with tls(caCert, cert, key)"
                  : "");
    };
  }

  /** The host part of {@code host:port}. */
  public static String host(String endpoint) {
    return socketAddress(endpoint).map(InetSocketAddress::getHostString).orElse(endpoint);
  }

  /**
   * The name of the alert in a TLS library's message (the JDK's "Received fatal alert: x",
   * BoringSSL's "..._ALERT_X"), lower case.
   */
  static Optional<String> alert(String message) {
    Matcher m = ALERT.matcher(message.toLowerCase(Locale.ROOT));
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  private static String message(Throwable t) {
    return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
  }

  private static List<Throwable> causes(Throwable t) {
    List<Throwable> out = new ArrayList<>();
    for (Throwable c = t; c != null && out.size() < 16 && !out.contains(c); c = c.getCause()) {
      out.add(c);
    }
    return out;
  }

  private static Transport transport(ChannelCredentials c) {
    if (c instanceof InsecureChannelCredentials) {
      return Transport.PLAINTEXT;
    }
    if (c instanceof TlsChannelCredentials) {
      return Transport.TLS;
    }
    if (c instanceof CompositeChannelCredentials composite) {
      return transport(composite.getChannelCredentials());
    }
    // A Netty SslContext of the caller's (NettySslContextChannelCredentials) is TLS; a choice may
    // be either.
    return c instanceof ChoiceChannelCredentials
        ? Transport.UNKNOWN
        : c.getClass().getSimpleName().contains("Ssl")
                || c.getClass().getSimpleName().contains("Tls")
            ? Transport.TLS
            : Transport.UNKNOWN;
  }

  private static Boolean presentsCertificate(ChannelCredentials c) {
    if (c instanceof TlsChannelCredentials tls) {
      return tls.getKeyManagers() != null || tls.getCertificateChain() != null;
    }
    if (c instanceof CompositeChannelCredentials composite) {
      return presentsCertificate(composite.getChannelCredentials());
    }
    return c instanceof InsecureChannelCredentials ? Boolean.FALSE : null;
  }
}
