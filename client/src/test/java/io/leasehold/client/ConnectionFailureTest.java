package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client whose transport does not match the node's, or whose endpoint does not resolve, fails at
 * once with a {@link ConnectionFailedException} saying why; real nodes, one with mutual TLS and one
 * plaintext.
 */
class ConnectionFailureTest {
  /**
   * Far more than any failure here may take: a call that used it up retried instead of failing
   * fast.
   */
  static final Duration TIMEOUT = Duration.ofSeconds(60);

  static final Duration FAST = Duration.ofSeconds(30);

  @TempDir static Path dir;
  static Path certs;
  static TestCerts.Authority ca;
  static TestCluster tls;
  static TestCluster plain;

  @BeforeAll
  static void start() throws Exception {
    certs = Files.createDirectories(dir.resolve("certs"));
    ca = TestCerts.authority(certs, "ca");
    TestCerts.Authority other = TestCerts.authority(certs, "other");
    TestCerts.Identity n1 = TestCerts.node(certs, ca, "n1");
    TestCerts.node(certs, ca, "runner-1");
    TestCerts.node(certs, other, "stranger");
    TestCerts.expired(certs, ca, "expired");
    tls = TestCluster.start(1, dir.resolve("tls"), b -> TestCerts.mutualTls(b, n1, ca, "runner-1"));
    plain = TestCluster.start(1, dir.resolve("plain"));
  }

  @AfterAll
  static void stop() {
    if (tls != null) {
      tls.close();
    }
    if (plain != null) {
      plain.close();
    }
  }

  static Path file(String name) {
    return certs.resolve(name);
  }

  static LeaseholdClient client(
      List<String> endpoints, UnaryOperator<LeaseholdClientBuilder> tweak) {
    return tweak
        .apply(LeaseholdClient.builder().endpoints(endpoints).requestTimeout(TIMEOUT))
        .build();
  }

  /** The call's failure, which came well before the request timeout. */
  static ConnectionFailedException fails(Executable call) {
    long start = System.nanoTime();
    ConnectionFailedException e = assertThrows(ConnectionFailedException.class, call);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertTrue(
        took.compareTo(FAST) < 0,
        "failed at once, not after retrying for the request timeout; took " + took);
    return e;
  }

  @Test
  void withoutAClientCertificateTheNodeRequiresOne() {
    String at = tls.clientAddresses().get(0);
    try (LeaseholdClient client = client(tls.clientAddresses(), b -> b.tls(ca.pem()))) {
      ConnectionFailedException e = fails(() -> client.blocking().get("x/y"));
      assertEquals(ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED, e.reason());
      assertEquals(at, e.endpoint());
      assertEquals(Map.of(at, ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED), e.failures());
      assertTrue(
          e.getMessage()
              .startsWith(
                  "Get x/y: cannot connect to " + at + ": the node requires a client certificate"),
          e.getMessage());
      assertInstanceOf(
          ClusterUnavailableException.class,
          e,
          "callers that catch ClusterUnavailableException still do");
      assertTrue(e.statusCode().isPresent());
    }
  }

  @Test
  void aCertificateOfAnotherCaIsRejected() {
    try (LeaseholdClient client =
        client(
            tls.clientAddresses(),
            b -> b.tls(ca.pem(), file("stranger.pem"), file("stranger-key.pem")))) {
      ConnectionFailedException e = fails(() -> client.blocking().get("x/y"));
      assertEquals(ConnectionFailure.CLIENT_CERTIFICATE_REJECTED, e.reason());
      assertTrue(
          e.getMessage().contains("refused the client certificate " + file("stranger.pem")),
          e.getMessage());
    }
  }

  @Test
  void anExpiredCertificateIsRejected() {
    try (LeaseholdClient client =
        client(
            tls.clientAddresses(),
            b -> b.tls(ca.pem(), file("expired.pem"), file("expired-key.pem")))) {
      ConnectionFailedException e = fails(() -> client.blocking().get("x/y"));
      assertEquals(ConnectionFailure.CLIENT_CERTIFICATE_REJECTED, e.reason());
      assertTrue(e.detail().startsWith("expired"), e.detail());
    }
  }

  @Test
  void plaintextToATlsPortIsTlsRequired() {
    try (LeaseholdClient client = client(tls.clientAddresses(), b -> b)) {
      ConnectionFailedException e = fails(() -> client.blocking().get("x/y"));
      assertEquals(ConnectionFailure.TLS_REQUIRED, e.reason());
      assertTrue(
          e.getMessage().contains("the node speaks TLS and the client plaintext"), e.getMessage());
    }
  }

  @Test
  void tlsToAPlaintextPortIsNotTls() {
    try (LeaseholdClient client = client(plain.clientAddresses(), b -> b.tls(ca.pem()))) {
      assertEquals(ConnectionFailure.NOT_TLS, fails(() -> client.blocking().get("x/y")).reason());
    }
  }

  @Test
  void theWrongCaIsAnUntrustedCertificateNamingTheFile() {
    try (LeaseholdClient client =
        client(
            tls.clientAddresses(),
            b -> b.tls(file("other.pem"), file("runner-1.pem"), file("runner-1-key.pem")))) {
      ConnectionFailedException e = fails(() -> client.blocking().get("x/y"));
      assertEquals(ConnectionFailure.UNTRUSTED_CERTIFICATE, e.reason());
      assertTrue(
          e.getMessage().contains("is not signed by the CA in " + file("other.pem")),
          e.getMessage());
    }
  }

  @Test
  void aCertificateThatDoesNotNameTheAddressIsANameMismatch() {
    try (LeaseholdClient client =
        client(
            tls.clientAddresses(),
            b ->
                b.tls(ca.pem(), file("runner-1.pem"), file("runner-1-key.pem"))
                    .channelCustomizer(c -> c.overrideAuthority("elsewhere.example:7400")))) {
      assertEquals(
          ConnectionFailure.CERTIFICATE_NAME_MISMATCH,
          fails(() -> client.blocking().get("x/y")).reason());
    }
  }

  @Test
  void aHostThatDoesNotResolveIsUnknownHost() {
    try (LeaseholdClient client = client(List.of("nosuchhost.invalid:7400"), b -> b)) {
      ConnectionFailedException e = fails(() -> client.blocking().get("x/y"));
      assertEquals(ConnectionFailure.UNKNOWN_HOST, e.reason());
      assertTrue(e.reason().mayPass());
      assertTrue(
          e.getMessage().contains("the host name nosuchhost.invalid does not resolve"),
          e.getMessage());
    }
  }

  @Test
  void oneEndpointThatCannotBeConnectedToFallsThroughToTheOthers() {
    String good = plain.clientAddresses().get(0);
    try (LeaseholdClient client = client(List.of("nosuchhost.invalid:7400", good), b -> b)) {
      assertTrue(client.blocking().tryAcquire("mixed/unknown-host", Fixtures.ttl(10)).isGranted());
    }
    try (LeaseholdClient client = client(List.of(tls.clientAddresses().get(0), good), b -> b)) {
      assertTrue(client.blocking().tryAcquire("mixed/tls-port", Fixtures.ttl(10)).isGranted());
    }
  }

  @Test
  void aWaitingAcquisitionStopsAtOnceToo() {
    try (LeaseholdClient client = client(tls.clientAddresses(), b -> b.tls(ca.pem()))) {
      ConnectionFailedException e =
          fails(
              () -> {
                try {
                  client.blocking().acquire("x/wait", Duration.ofSeconds(60));
                } catch (InterruptedException ie) {
                  throw new AssertionError(ie);
                }
              });
      assertEquals(ConnectionFailure.CLIENT_CERTIFICATE_REQUIRED, e.reason());
    }
  }

  @Test
  void aWatchThatNeverConnectedEndsWithTheReason() throws Exception {
    try (LeaseholdClient client = client(plain.clientAddresses(), b -> b.tls(ca.pem()))) {
      CompletableFuture<LeaseholdException> error = new CompletableFuture<>();
      try (Watch w =
          client.watch(
              WatchOptions.of("x/"),
              new WatchListener() {
                @Override
                public void onEvent(WatchEvent event) {}

                @Override
                public void onError(LeaseholdException e) {
                  error.complete(e);
                }
              })) {
        LeaseholdException e = error.get(FAST.toSeconds(), TimeUnit.SECONDS);
        assertEquals(
            ConnectionFailure.NOT_TLS,
            assertInstanceOf(ConnectionFailedException.class, e).reason());
        assertTrue(w.isClosed());
      }
    } catch (ExecutionException e) {
      throw new AssertionError(e);
    }
  }
}
