package io.leasehold.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.netty.handler.ssl.NotSslRecordException;
import io.leasehold.client.ConnectionFailedException;
import io.leasehold.client.ConnectionFailure;
import io.leasehold.client.internal.ConnectionDiagnosis.Diagnosis;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** Which failures the client tells apart, from the shapes gRPC, the JDK and BoringSSL give them. */
class ConnectionDiagnosisTest {
  static final ChannelCredentials TLS = TlsChannelCredentials.create();
  static final ConnectionDiagnosis PLAIN =
      new ConnectionDiagnosis(
          InsecureChannelCredentials.create(), Optional.empty(), Optional.empty(), 500);
  static final ConnectionDiagnosis SERVER_TLS =
      new ConnectionDiagnosis(TLS, Optional.of(Path.of("/etc/ca.pem")), Optional.empty(), 500);

  static Status unavailable(String description, Throwable cause) {
    return Status.UNAVAILABLE.withDescription(description).withCause(cause);
  }

  static Optional<ConnectionFailure> reason(ConnectionDiagnosis d, Status s) {
    return d.classify(s).map(Diagnosis::reason);
  }

  static SSLHandshakeException handshake(String message, Throwable cause) {
    SSLHandshakeException e = new SSLHandshakeException(message);
    e.initCause(cause);
    return e;
  }

  @Test
  void aNameThatDoesNotResolve() {
    Status s =
        unavailable(
            "Unable to resolve host nosuchhost.invalid",
            new UnknownHostException("nosuchhost.invalid: Name or service not known"));
    assertEquals(Optional.of(ConnectionFailure.UNKNOWN_HOST), reason(PLAIN, s));
    assertEquals(Optional.of(ConnectionFailure.UNKNOWN_HOST), reason(SERVER_TLS, s));
    assertEquals(
        Optional.of(ConnectionFailure.UNKNOWN_HOST),
        reason(PLAIN, unavailable("Unable to resolve host nosuchhost.invalid", null)));
  }

  @Test
  void theNodesCertificateAsTheClientChecksIt() {
    Status unknownCa =
        unavailable(
            "io exception",
            handshake(
                "PKIX path building failed",
                new CertPathBuilderException(
                    "unable to find valid certification path to requested target")));
    assertEquals(
        Optional.of(ConnectionFailure.UNTRUSTED_CERTIFICATE), reason(SERVER_TLS, unknownCa));
    Status expired =
        unavailable(
            "io exception",
            handshake(
                "PKIX path validation failed",
                new CertificateExpiredException("NotAfter: Tue Dec 01 10:00:00 UTC 2026")));
    assertEquals(Optional.of(ConnectionFailure.CERTIFICATE_EXPIRED), reason(SERVER_TLS, expired));
    Status name =
        unavailable(
            "io exception",
            handshake(
                "No subject alternative DNS name matching elsewhere.example found.",
                new CertificateException(
                    "No subject alternative DNS name matching elsewhere.example found.")));
    assertEquals(
        Optional.of(ConnectionFailure.CERTIFICATE_NAME_MISMATCH), reason(SERVER_TLS, name));
  }

  @Test
  void aPortThatDoesNotSpeakTls() {
    Status s =
        unavailable(
            "io exception Channel Pipeline: [SslHandler#0, ProtocolNegotiators$ClientTlsHandler#0]",
            new NotSslRecordException("not an SSL/TLS record: 000012040000000000"));
    assertEquals(Optional.of(ConnectionFailure.NOT_TLS), reason(SERVER_TLS, s));
  }

  @Test
  void theAlertsANodeSendsAboutTheClientsCertificate() {
    // The JDK's wording, and BoringSSL's (grpc-netty-shaded's default provider).
    for (String m :
        new String[] {
          "Received fatal alert: certificate_required",
          "error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"
        }) {
      Status s = unavailable("ssl exception", new SSLException(m));
      assertEquals(
          Optional.of(ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED), reason(SERVER_TLS, s), m);
      // A client sends its certificate only if a CA the node names signed it.
      assertEquals(
          Optional.of(ConnectionFailure.CLIENT_CERTIFICATE_REJECTED),
          reason(withCertificate(), s),
          m);
    }
    Status expired =
        unavailable(
            "ssl exception",
            new SSLException(
                "error:10000415:SSL routines:OPENSSL_internal:SSLV3_ALERT_CERTIFICATE_EXPIRED"));
    assertEquals(
        Optional.of(
            new Diagnosis(
                ConnectionFailure.CLIENT_CERTIFICATE_REJECTED,
                "expired; TLS alert certificate_expired")),
        withCertificate().classify(expired));
    for (String m :
        new String[] {
          "Received fatal alert: bad_certificate",
          "error:10000412:SSL routines:OPENSSL_internal:SSLV3_ALERT_BAD_CERTIFICATE",
          "Received fatal alert: unknown_ca"
        }) {
      Status s = unavailable("ssl exception", new SSLException(m));
      // Without a certificate of its own the client was refused for not having one.
      assertEquals(
          Optional.of(ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED), reason(SERVER_TLS, s), m);
      assertEquals(
          Optional.of(ConnectionFailure.CLIENT_CERTIFICATE_REJECTED),
          reason(withCertificate(), s),
          m);
    }
    assertEquals(
        Optional.of(ConnectionFailure.TLS_HANDSHAKE_FAILED),
        reason(
            SERVER_TLS,
            unavailable(
                "ssl exception",
                new SSLHandshakeException("Received fatal alert: protocol_version"))));
  }

  static ConnectionDiagnosis withCertificate() {
    // Any key manager will do: the diagnosis only asks whether there is one.
    ChannelCredentials mutual =
        TlsChannelCredentials.newBuilder()
            .keyManager(
                new javax.net.ssl.X509ExtendedKeyManager() {
                  @Override
                  public String[] getClientAliases(
                      String keyType, java.security.Principal[] issuers) {
                    return null;
                  }

                  @Override
                  public String chooseClientAlias(
                      String[] keyType, java.security.Principal[] issuers, Socket socket) {
                    return null;
                  }

                  @Override
                  public String[] getServerAliases(
                      String keyType, java.security.Principal[] issuers) {
                    return null;
                  }

                  @Override
                  public String chooseServerAlias(
                      String keyType, java.security.Principal[] issuers, Socket socket) {
                    return null;
                  }

                  @Override
                  public java.security.cert.X509Certificate[] getCertificateChain(String alias) {
                    return null;
                  }

                  @Override
                  public java.security.PrivateKey getPrivateKey(String alias) {
                    return null;
                  }
                })
            .build();
    return new ConnectionDiagnosis(
        mutual, Optional.of(Path.of("/etc/ca.pem")), Optional.of(Path.of("/etc/me.pem")), 500);
  }

  @Test
  void whatMayBeANodeGoingAwayIsNotDiagnosed() {
    // A node that stops mid-handshake, refuses, or resets: retried on other nodes as before.
    assertFalse(
        SERVER_TLS
            .classify(
                unavailable(
                    "ssl exception",
                    new SSLHandshakeException("Remote host terminated the handshake")))
            .isPresent());
    assertFalse(
        SERVER_TLS
            .classify(
                unavailable("io exception", new java.net.ConnectException("Connection refused")))
            .isPresent());
    assertFalse(PLAIN.classify(unavailable("Network closed for unknown reason", null)).isPresent());
    assertFalse(
        SERVER_TLS
            .classify(Status.DEADLINE_EXCEEDED.withCause(new UnknownHostException("x")))
            .isPresent());
    // TLS failures mean nothing to a plaintext client.
    assertFalse(
        PLAIN.classify(unavailable("io exception", new NotSslRecordException("x"))).isPresent());
  }

  @Test
  void theProbeTellsATlsPortFromOneThatClosesOrIsClosed() throws Exception {
    try (ServerSocket closes = new ServerSocket(0)) {
      Thread t =
          new Thread(
              () -> {
                try (Socket s = closes.accept()) {
                  s.getInputStream().read();
                } catch (IOException ignored) {
                  // the probe is done
                }
              });
      t.setDaemon(true);
      t.start();
      assertFalse(
          PLAIN.probe("127.0.0.1:" + closes.getLocalPort()), "a port that closes without a word");
      t.join(10_000);
    }
    int free;
    try (ServerSocket s = new ServerSocket(0)) {
      free = s.getLocalPort();
    }
    assertFalse(PLAIN.probe("127.0.0.1:" + free), "a port nobody listens on");
    try (ServerSocket tls = new ServerSocket(0)) {
      Thread t =
          new Thread(
              () -> {
                try (Socket s = tls.accept()) {
                  InputStream in = s.getInputStream();
                  if (in.read() == 22) {
                    // A TLS alert record, as a TLS port answers a hello it does not like.
                    s.getOutputStream().write(new byte[] {21, 3, 3, 0, 2, 2, 40});
                    s.getOutputStream().flush();
                  }
                } catch (IOException ignored) {
                  // the probe is done
                }
              });
      t.setDaemon(true);
      t.start();
      assertTrue(PLAIN.probe("127.0.0.1:" + tls.getLocalPort()), "a port that answers TLS");
      t.join(10_000);
    }
  }

  @Test
  void theMessageNamesTheEndpointTheFileAndTheOthers() {
    Map<String, Diagnosis> failures = new LinkedHashMap<>();
    failures.put(
        "10.0.0.1:7400",
        new Diagnosis(ConnectionFailure.UNTRUSTED_CERTIFICATE, "PKIX path building failed"));
    failures.put(
        "10.0.0.2:7400",
        new Diagnosis(ConnectionFailure.UNTRUSTED_CERTIFICATE, "PKIX path building failed"));
    failures.put("10.0.0.3:7400", new Diagnosis(ConnectionFailure.UNKNOWN_HOST, "x"));
    ConnectionFailedException e = SERVER_TLS.exception("Get a/b", failures, Status.UNAVAILABLE);
    assertEquals(ConnectionFailure.UNTRUSTED_CERTIFICATE, e.reason());
    assertEquals("10.0.0.1:7400", e.endpoint());
    assertEquals(
        "Get a/b: cannot connect to 10.0.0.1:7400: the node's certificate is not signed by the CA in /etc/ca.pem; "
            + "give tls(...) the CA that signed the nodes' certificates; nor to 10.0.0.2:7400, 10.0.0.3:7400 (UNKNOWN_HOST)",
        e.getMessage());
    assertEquals("PKIX path building failed", e.detail());
    assertEquals(3, e.failures().size());
  }
}
