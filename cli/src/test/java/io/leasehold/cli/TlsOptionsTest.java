package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --cacert, --cert and --key against a node that requires client certificates. */
class TlsOptionsTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static Path certs;

  @BeforeAll
  static void start() throws Exception {
    certs = Files.createDirectories(dir.resolve("certs"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    TestCerts.Identity n1 = TestCerts.node(certs, ca, "n1");
    TestCerts.node(certs, ca, "admin");
    cluster =
        TestCluster.start(
            1,
            dir.resolve("data"),
            b ->
                TestCerts.mutualTls(b.metricsPort(0), n1, ca, "admin")
                    .peerTlsCertFile(certs.resolve("n1.pem"))
                    .peerTlsKeyFile(certs.resolve("n1-key.pem"))
                    .peerTlsCaFile(ca.pem()));
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static String[] withTls(String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--cacert",
                certs.resolve("ca.pem").toString(),
                "--cert",
                certs.resolve("admin.pem").toString(),
                "--key",
                certs.resolve("admin-key.pem").toString()));
    all.addAll(List.of(args));
    return Cli.at(cluster, all.toArray(String[]::new));
  }

  @Test
  void commandsWorkWithTheCaAndAClientCertificate() {
    JsonObject acquired =
        run(withTls(
                "lease", "acquire", "tls/cli", "--ttl", "30s", "--holder", "admin", "-o", "json"))
            .ok()
            .object();
    assertEquals("admin", acquired.get("holder").getAsString());
    Cli.Run status = run(withTls("cluster", "status", "-o", "json")).ok();
    assertTrue(status.out().contains("\"n1\""), status.out());
    Cli.Run backup =
        run(
                "--endpoints",
                Cli.endpoints(cluster),
                "--cacert",
                certs.resolve("ca.pem").toString(),
                "--cert",
                certs.resolve("admin.pem").toString(),
                "--key",
                certs.resolve("admin-key.pem").toString(),
                "backup",
                dir.resolve("backup").toString())
            .ok();
    assertTrue(backup.out().startsWith("backup of node n1 "), backup.out());
  }

  @Test
  void benchLoadsTheClusterAndReadsTheNodesMetricsOverHttps() {
    String metrics = "127.0.0.1:" + cluster.node("n1").metricsPort().orElseThrow();
    JsonObject r =
        run(withTls(
                "bench",
                "acquire-release",
                "--clients",
                "2",
                "--duration",
                "3s",
                "--warmup",
                "0s",
                "--metrics",
                metrics,
                "-o",
                "json"))
            .ok()
            .object();
    // Calls went through over TLS (a busy machine finished no whole cycle within the 3 s).
    assertTrue(
        r.getAsJsonObject("results").getAsJsonObject("acquire").get("count").getAsDouble() > 0,
        r.toString());
    assertEquals(0, r.getAsJsonObject("results").get("failed").getAsInt(), r.toString());
    JsonElement node = r.getAsJsonArray("nodes").get(0);
    assertTrue(
        node.getAsJsonObject().get("rss_mib").getAsDouble() > 0,
        "the node's memory read from its HTTPS metrics: " + node);
  }

  @Test
  void withoutAClientCertificateOrTlsTheNodeSaysWhatIsMissing() {
    // ConnectionErrorsTest has every case; these are the two this cluster shows.
    run(
            "--endpoints",
            Cli.endpoints(cluster),
            "--timeout",
            "20s",
            "--cacert",
            certs.resolve("ca.pem").toString(),
            "lease",
            "get",
            "tls/cli")
        .failed(
            LeaseholdCommand.EXIT_USAGE, "requires a client certificate: give --cert and --key");
    run("--endpoints", Cli.endpoints(cluster), "--timeout", "20s", "lease", "get", "tls/cli")
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "speaks TLS and this client plaintext: give --cacert FILE");
  }

  @Test
  void aWrongCombinationOrAnUnreadableFileIsAUsageErrorNamingTheOption() {
    String ca = certs.resolve("ca.pem").toString();
    String cert = certs.resolve("admin.pem").toString();
    String key = certs.resolve("admin-key.pem").toString();
    run(Cli.at(cluster, "--cacert", ca, "--cert", cert, "lease", "get", "x"))
        .failed(LeaseholdCommand.EXIT_USAGE, "--cert: needs --key (the certificate's private key)");
    run(Cli.at(cluster, "--cacert", ca, "--key", key, "lease", "get", "x"))
        .failed(LeaseholdCommand.EXIT_USAGE, "--key: needs --cert (the certificate it belongs to)");
    run(Cli.at(cluster, "--cert", cert, "--key", key, "lease", "get", "x"))
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "--cert: needs --cacert (the CA that verifies the nodes' certificates)");
    run(Cli.at(cluster, "--cacert", dir.resolve("nope.pem").toString(), "lease", "get", "x"))
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "--cacert: cannot read " + dir.resolve("nope.pem") + " (no such file)");
    run(Cli.at(
            cluster,
            "--cacert",
            ca,
            "--cert",
            cert,
            "--key",
            key,
            "bench",
            "acquire-release",
            "--cert",
            dir.toString()))
        .failed(
            LeaseholdCommand.EXIT_USAGE, "--cert: cannot read " + dir + " (not a readable file)");
  }
}
