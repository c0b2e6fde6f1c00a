package io.leasehold.server.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With TLS and client certificates, the dashboard is on HTTPS and its caller is the certificate's
 * identity.
 */
class DashboardTlsTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static TestCerts.Authority ca;
  static TestCerts.Identity admin;
  static TestCerts.Identity roleless;

  @BeforeAll
  static void start() throws IOException {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    ca = TestCerts.authority(certs, "ca");
    for (String id : new String[] {"n1", "n2", "n3"}) {
      TestCerts.node(certs, ca, id);
    }
    admin = TestCerts.node(certs, ca, "ops");
    roleless = TestCerts.node(certs, ca, "visitor");
    // Mutual TLS on every port: the Cluster page asks the other members over the peer port's.
    cluster =
        TestCluster.start(
            3,
            dir.resolve("data"),
            (id, b) ->
                b.metricsPort(0)
                    .tlsCertFile(certs.resolve(id + ".pem"))
                    .tlsKeyFile(certs.resolve(id + "-key.pem"))
                    .tlsCaFile(ca.pem())
                    .clientCertAuth(true)
                    .initialAdmin("ops")
                    .peerTlsCertFile(certs.resolve(id + ".pem"))
                    .peerTlsKeyFile(certs.resolve(id + "-key.pem"))
                    .peerTlsCaFile(ca.pem()));
    cluster.useCredentials(TestCerts.credentials(ca, admin));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static HttpResponse<String> get(SSLContext tls, String scheme, String path)
      throws IOException, InterruptedException {
    return get(cluster.awaitLeader(), tls, scheme, path);
  }

  static HttpResponse<String> get(LeaseholdNode node, SSLContext tls, String scheme, String path)
      throws IOException, InterruptedException {
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
    if (tls != null) {
      b.sslContext(tls);
    }
    URI uri = URI.create(scheme + "://127.0.0.1:" + node.metricsPort().orElseThrow() + path);
    return b.build()
        .send(
            HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theCertificatesIdentityNeedsAReaderRole() throws Exception {
    TestCluster.await(
        "the initial admin holds the admin role",
        Duration.ofSeconds(20),
        () -> {
          try {
            return get(TestCerts.sslContext(ca, admin), "https", "/ui/api/cluster").statusCode()
                == 200;
          } catch (IOException | InterruptedException e) {
            return false;
          }
        });
    HttpResponse<String> page = get(TestCerts.sslContext(ca, admin), "https", "/ui/");
    assertEquals(200, page.statusCode());
    assertTrue(page.body().contains("x-data=\"dashboard()\""), "the page itself");
    HttpResponse<String> visitor =
        get(TestCerts.sslContext(ca, roleless), "https", "/ui/api/leases");
    assertEquals(403, visitor.statusCode(), visitor::body);
    assertTrue(visitor.body().contains("visitor"), visitor::body);
    assertThrows(
        IOException.class,
        () -> get(TestCerts.sslContext(ca, null), "https", "/ui/"),
        "no client certificate");
    assertThrows(IOException.class, () -> get(null, "http", "/ui/"), "no plaintext beside TLS");
  }

  @Test
  void aFollowersClusterPageReachesEveryMemberOverThePeersTls() throws Exception {
    LeaseholdNode follower =
        cluster.awaitLeader() == cluster.node("n1") ? cluster.node("n2") : cluster.node("n1");
    SSLContext tls = TestCerts.sslContext(ca, admin);
    TestCluster.await(
        "every member OK on " + follower.id() + "'s Cluster page",
        Duration.ofSeconds(20),
        () -> {
          try {
            HttpResponse<String> r = get(follower, tls, "https", "/ui/api/cluster");
            return r.statusCode() == 200 && r.body().split("\"health\":\"OK\"", -1).length - 1 == 3;
          } catch (IOException | InterruptedException e) {
            return false;
          }
        });
  }
}
