package io.leasehold.deploy;

import static io.leasehold.deploy.Manifests.at;
import static io.leasehold.deploy.Manifests.strings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image's HEALTHCHECK and the TLS Kubernetes readiness probe against real nodes, without
 * Docker: a node of the packaged jar runs with the TLS options of compose.tls.yaml (certificates
 * from make-certs.sh, so it needs openssl) and its metrics port from LEASEHOLD_METRICS_PORT, as in
 * the image; the HEALTHCHECK command, taken from the Dockerfile, passes once it is SERVING, GET
 * /healthz answers over plain HTTP, and the client port still requires a client certificate. A node
 * without {@code --metrics-plaintext} fails the check, which says what it lacks.
 */
class TlsHealthCheckIT {
  @TempDir Path dir;
  final Manifests manifests = Manifests.here();
  final Path jar = Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));
  final List<Process> nodes = new ArrayList<>();

  record Node(Path log, int clientPort, int metricsPort) {}

  record Run(int exit, String output) {}

  @AfterEach
  void stop() throws InterruptedException {
    LocalProcesses.stopAll(nodes);
  }

  @Test
  void
      theImagesHealthCheckPassesOnANodeWithTheComposeTlsOptionsAndExplainsItselfWithoutPlaintextMetrics()
          throws Exception {
    assumeTrue(
        LocalClusterScriptIT.onPath("openssl"), "openssl is not installed: make-certs.sh needs it");
    Path certs = dir.resolve("certs");
    Run made =
        run(
            new ProcessBuilder(
                "bash",
                manifests.deploy.resolve("tls/make-certs.sh").toString(),
                certs.toString(),
                "admin"),
            List.of());
    assertEquals(0, made.exit(), made.output());
    // n1's TLS options as compose.tls.yaml gives them, its /certs mount here.
    List<String> tls = new ArrayList<>();
    for (String a :
        Manifests.tlsOnly(
            strings(at(manifests.composeServices("docker/compose.tls.yaml"), "n1", "command")))) {
      tls.add(
          a.startsWith("/certs/") ? certs.resolve(a.substring("/certs/".length())).toString() : a);
    }
    assertTrue(tls.contains("--metrics-plaintext"), tls.toString());
    List<String> withoutPlaintextMetrics = new ArrayList<>(tls);
    withoutPlaintextMetrics.remove("--metrics-plaintext");

    Node node = start("compose-tls", tls);
    Node https = start("https-metrics", withoutPlaintextMetrics);
    await(
        "the node's HTTP metrics port is up",
        Duration.ofSeconds(120),
        () -> log(node).contains("metrics on http://"));
    await(
        "the other node's HTTPS metrics port is up",
        Duration.ofSeconds(120),
        () -> log(https).contains("metrics on https://"));

    // The image's HEALTHCHECK, as Docker runs it: healthy once the node is SERVING.
    Run[] last = {null};
    await(
        "the HEALTHCHECK passes",
        Duration.ofSeconds(60),
        () -> (last[0] = healthcheck(node)).exit() == 0);
    // The Kubernetes TLS manifest's readiness probe: GET /healthz on the metrics port, plain HTTP,
    // no certificate.
    HttpResponse<String> health =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + node.metricsPort() + "/healthz"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode());
    assertEquals("SERVING\n", health.body());

    // The client port still speaks mutual TLS and requires a client certificate.
    try (LeaseholdClient client =
        LeaseholdClient.builder()
            .endpoints("127.0.0.1:" + node.clientPort())
            .holder("admin")
            .tls(
                certs.resolve("ca.pem"), certs.resolve("admin.pem"), certs.resolve("admin-key.pem"))
            .requestTimeout(Duration.ofSeconds(30))
            .build()) {
      assertTrue(
          client
                  .blocking()
                  .acquire(
                      "lock/tls-probe", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)))
                  .token()
              > 0);
    }
    try (LeaseholdClient noCert =
        LeaseholdClient.builder()
            .endpoints("127.0.0.1:" + node.clientPort())
            .holder("nobody")
            .tls(certs.resolve("ca.pem"))
            .requestTimeout(Duration.ofSeconds(3))
            .build()) {
      assertThrows(
          RuntimeException.class,
          () -> noCert.blocking().get("lock/tls-probe"),
          "a client without a certificate is refused");
    }

    // Without --metrics-plaintext the metrics port speaks HTTPS: the check fails and says why.
    Run refused = healthcheck(https);
    assertEquals(1, refused.exit(), refused.output());
    assertTrue(
        refused.output().contains("run the node with --metrics-plaintext"), refused.output());
  }

  /**
   * A standalone node with {@code extra} options, its metrics port from LEASEHOLD_METRICS_PORT as
   * in the image.
   */
  Node start(String name, List<String> extra) throws IOException {
    int client = LocalProcesses.freePort();
    int peer = LocalProcesses.freePort();
    int metrics = LocalProcesses.freePort();
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp-" + name)),
                "-jar",
                jar.toAbsolutePath().toString(),
                "server",
                "--standalone",
                "--client-port",
                Integer.toString(client),
                "--peer-port",
                Integer.toString(peer),
                "--data-dir",
                dir.resolve("data-" + name).toString()));
    cmd.addAll(extra);
    Path log = dir.resolve(name + ".log");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("LEASEHOLD_"));
    pb.environment().put("LEASEHOLD_METRICS_PORT", Integer.toString(metrics));
    nodes.add(pb.start());
    return new Node(log, client, metrics);
  }

  /** The Dockerfile's HEALTHCHECK command, run as Docker runs it in the container. */
  Run healthcheck(Node node) {
    try {
      return run(
          new ProcessBuilder(manifests.healthcheck()),
          List.of("LEASEHOLD_METRICS_PORT=" + node.metricsPort()));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  Run run(ProcessBuilder pb, List<String> env) throws Exception {
    pb.redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("LEASEHOLD_"));
    for (String kv : env) {
      pb.environment().put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
    }
    Path out = Files.createTempFile(dir, "run", ".log");
    pb.redirectOutput(out.toFile());
    Process p = pb.start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(pb.command() + " did not finish: " + Files.readString(out));
    }
    return new Run(p.exitValue(), Files.readString(out));
  }

  static String log(Node node) {
    try {
      return Files.readString(node.log());
    } catch (IOException e) {
      return "";
    }
  }

  static void await(String what, Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "timed out after " + timeout.toSeconds() + " s waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
  }
}
