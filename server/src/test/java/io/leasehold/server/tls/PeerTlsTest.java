package io.leasehold.server.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutual TLS between members: a member that is not in it cannot take part. */
class PeerTlsTest {
  /**
   * How long a member that should be cut off is watched: many heartbeat intervals (300 ms here).
   */
  static final Duration CUT_OFF = Duration.ofSeconds(3);

  enum Transport {
    TRUSTED,
    PLAINTEXT,
    UNTRUSTED
  }

  @TempDir Path dir;
  TestCluster cluster;
  volatile Transport n3 = Transport.TRUSTED;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aMemberWithAPlaintextOrUntrustedPeerTransportGetsNothingUntilATrustedCertificateIsRotatedIn()
      throws Exception {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    Path live = Files.createDirectories(dir.resolve("live"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    TestCerts.Authority otherCa =
        TestCerts.authority(Files.createDirectories(dir.resolve("other")), "ca");
    for (String id : new String[] {"n1", "n2", "n3"}) {
      TestCerts.node(certs, ca, id);
    }
    TestCerts.Identity impostor =
        TestCerts.node(Files.createDirectories(dir.resolve("impostor")), otherCa, "n3");
    // n3's files are copies, so that its certificate can be rotated in place.
    Files.copy(certs.resolve("n3.pem"), live.resolve("n3.pem"));
    Files.copy(certs.resolve("n3-key.pem"), live.resolve("n3-key.pem"));
    cluster = TestCluster.start(3, dir.resolve("data"), (id, b) -> peerTls(b, id, certs, live, ca));

    cluster.stopNode("n3");
    n3 = Transport.PLAINTEXT;
    cluster.startNode("n3");
    Map<String, Long> first = cluster.acquireMany("n1", "plain/", 2);
    assertCutOff(first);

    cluster.stopNode("n3");
    n3 = Transport.UNTRUSTED;
    TestCerts.replace(impostor.certFile(), live.resolve("n3.pem"));
    TestCerts.replace(impostor.keyFile(), live.resolve("n3-key.pem"));
    cluster.startNode("n3");
    Map<String, Long> second = cluster.acquireMany("n1", "untrusted/", 2);
    assertCutOff(second);

    // The same running n3 with its own certificate back on disk: the next handshakes succeed.
    TestCerts.replace(certs.resolve("n3.pem"), live.resolve("n3.pem"));
    TestCerts.replace(certs.resolve("n3-key.pem"), live.resolve("n3-key.pem"));
    first.putAll(second);
    TestCluster.await(
        "n3 catches up once its certificate is trusted",
        Duration.ofSeconds(90),
        () ->
            first.entrySet().stream()
                .allMatch(
                    e -> {
                      var r = cluster.leases("n3").get(Requests.staleGet(e.getKey()));
                      return r.getFound() && r.getLease().getToken() == e.getValue();
                    }));
    assertEquals(
        Outcome.GRANTED,
        cluster.leases("n3").acquire(Requests.acquire("after/x", "runner-1", 30)).getOutcome());
  }

  NodeConfig.Builder peerTls(
      NodeConfig.Builder b, String id, Path certs, Path live, TestCerts.Authority ca) {
    b.tlsReloadInterval(Duration.ofMillis(100));
    if (!id.equals("n3")) {
      return b.peerTlsCertFile(certs.resolve(id + ".pem"))
          .peerTlsKeyFile(certs.resolve(id + "-key.pem"))
          .peerTlsCaFile(ca.pem());
    }
    return switch (n3) {
      case PLAINTEXT -> b;
      case TRUSTED, UNTRUSTED ->
          b.peerTlsCertFile(live.resolve("n3.pem"))
              .peerTlsKeyFile(live.resolve("n3-key.pem"))
              .peerTlsCaFile(ca.pem());
    };
  }

  /**
   * n1 and n2 applied {@code leases}; n3, which is running and answers on its client port, never
   * does.
   */
  void assertCutOff(Map<String, Long> leases) {
    cluster.awaitHeldOn("n1", leases);
    cluster.awaitHeldOn("n2", leases);
    long deadline = System.nanoTime() + CUT_OFF.toNanos();
    while (System.nanoTime() - deadline < 0) {
      for (String name : leases.keySet()) {
        assertFalse(
            cluster.leases("n3").get(Requests.staleGet(name)).getFound(),
            "n3 (" + n3 + ") applied " + name);
      }
    }
  }
}
