package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** deploy/local-cluster.sh up, status and down, against the packaged jar. */
class LocalClusterScriptIT {
  @TempDir Path dir;
  Path script = Path.of(System.getProperty("leasehold.deploy", ".")).resolve("local-cluster.sh");
  Path jar = Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));
  boolean up;

  record Run(int exit, String output) {}

  Run run(String... args) throws Exception {
    return run(120, args);
  }

  Run run(int upTimeoutSeconds, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("bash", script.toString()));
    command.addAll(List.of(args));
    command.addAll(List.of("--dir", dir.resolve("cluster").toString()));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("LEASEHOLD_JAR", jar.toAbsolutePath().toString());
    pb.environment().put("LEASEHOLD_UP_TIMEOUT", Integer.toString(upTimeoutSeconds));
    // No class-data cache: its training run (about 40 s) is for users' first start, not for the
    // build.
    pb.environment().put("LEASEHOLD_AOT", "off");
    Path out = Files.createTempFile(dir, "run", ".log");
    pb.redirectOutput(out.toFile());
    Process p = pb.start();
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          "local-cluster.sh "
              + String.join(" ", args)
              + " did not finish: "
              + Files.readString(out));
    }
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  /** A base port whose nine ports (three nodes: client, peer, metrics) are all free now. */
  static int freeBase() throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = 20000 + 10 * ThreadLocalRandom.current().nextInt(2000);
      if (allFree(base)) {
        return base;
      }
    }
    throw new IOException("no free range of ports found");
  }

  static boolean allFree(int base) {
    for (int node = 0; node < 3; node++) {
      for (int k = 0; k < 3; k++) {
        try (ServerSocket s = new ServerSocket()) {
          s.bind(new InetSocketAddress("127.0.0.1", base + 10 * node + k));
        } catch (IOException taken) {
          return false;
        }
      }
    }
    return true;
  }

  @AfterEach
  void down() throws Exception {
    if (up) {
      run("down");
    }
  }

  @Test
  void upStartsThreeNodesWithALeaderStatusReportsThemAndDownStopsOnlyThem() throws Exception {
    assertTrue(Files.exists(jar), "the distribution jar exists: " + jar.toAbsolutePath());
    int base = freeBase();
    up = true;
    Run started = run("up", "--base-port", Integer.toString(base));
    assertEquals(0, started.exit(), started.output());
    assertTrue(started.output().contains("n1  client 127.0.0.1:" + base), started.output());
    assertTrue(started.output().contains("n3  client 127.0.0.1:" + (base + 20)), started.output());
    assertEquals(
        1, count(started.output(), " leader\n"), "exactly one leader: " + started.output());
    Matcher endpoints = Pattern.compile("endpoints: (\\S+)").matcher(started.output());
    assertTrue(endpoints.find(), started.output());

    // Each node's line ends "  SERVING  <role>"; "NOT_SERVING" must not count. A follower that
    // missed the leader's heartbeats for an election timeout (a busy machine) is NOT_SERVING until
    // it hears again, so status is asked until every node is SERVING or 30 s have passed.
    String serving = "(?m)^n[123]  pid \\d+  client \\S+  SERVING  ";
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Run status = run("status");
    while (status.exit() == 0
        && matches(status.output(), serving) < 3
        && System.nanoTime() - deadline < 0) {
      status = run("status");
    }
    assertEquals(0, status.exit(), status.output());
    assertEquals(3, matches(status.output(), serving), status.output());
    List<Long> pids = new ArrayList<>();
    Matcher pid = Pattern.compile("pid (\\d+)").matcher(status.output());
    while (pid.find()) {
      pids.add(Long.parseLong(pid.group(1)));
    }
    assertEquals(3, pids.size(), status.output());

    try (LeaseholdClient client =
        LeaseholdClient.builder()
            .endpoints(endpoints.group(1).split(","))
            .holder("script-test")
            .build()) {
      Lease lease =
          client
              .blocking()
              .acquire(
                  "lock/local-cluster", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)));
      assertTrue(lease.isValid());
      lease.release().get(10, TimeUnit.SECONDS);
    }

    Run again = run("up", "--base-port", Integer.toString(base));
    assertEquals(1, again.exit(), "up refuses while the cluster runs: " + again.output());

    Run stopped = run("down");
    up = false;
    assertEquals(0, stopped.exit(), stopped.output());
    for (long p : pids) {
      assertFalse(
          ProcessHandle.of(p).map(ProcessHandle::isAlive).orElse(false),
          "pid " + p + " was stopped");
    }
    Run after = run("status");
    assertEquals(1, after.exit(), after.output());
    assertEquals(3, count(after.output(), "stopped"), after.output());
    assertTrue(
        Files.isDirectory(dir.resolve("cluster").resolve("n1")), "data is kept unless --purge");
  }

  /**
   * An `up` that times out stops what it started: no process of this cluster is left holding its
   * ports. One second is too short for a JVM to start and win an election.
   */
  @Test
  void upThatTimesOutStopsTheNodesItStarted() throws Exception {
    assertTrue(Files.exists(jar), "the distribution jar exists: " + jar.toAbsolutePath());
    int base = freeBase();
    up = true;
    Run started = run(1, "up", "--base-port", Integer.toString(base));
    assertEquals(1, started.exit(), started.output());
    assertTrue(
        started
            .output()
            .contains(
                "no leader with every node SERVING after 1s; stopping the nodes this run started"),
        started.output());
    String clusterDir = dir.resolve("cluster").toString();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    List<ProcessHandle> left;
    // The script waits for its nodes to exit, so none should be left; the deadline only allows
    // for the process table catching up.
    while (!(left = nodesOf(clusterDir)).isEmpty() && System.nanoTime() - deadline < 0) {
      TimeUnit.MILLISECONDS.sleep(100);
    }
    assertEquals(
        List.of(),
        left.stream().map(ph -> ph.pid() + " " + ph.info().commandLine().orElse("")).toList(),
        "no node of the timed-out cluster is left running");
    Run status = run("status");
    assertEquals(1, status.exit(), status.output());
    assertEquals(3, count(status.output(), "stopped"), status.output());
    up = false;
  }

  /**
   * make-certs.sh's files start a cluster with mutual TLS on every port: status reads the nodes
   * over HTTPS, the CLI finds its certificate through the environment, and a client without one is
   * refused.
   */
  @Test
  void upWithTlsRunsTheClusterOnMakeCertsFilesAndRefusesClientsWithoutACertificate()
      throws Exception {
    assumeTrue(onPath("openssl"), "openssl is not installed: make-certs.sh needs it");
    assumeTrue(
        onPath("curl"), "curl is not installed: local-cluster.sh --tls checks health with it");
    Path certs = dir.resolve("certs");
    Run made =
        runScript(script.resolveSibling("tls").resolve("make-certs.sh"), certs.toString(), "admin");
    assertEquals(0, made.exit(), made.output());
    for (String f :
        List.of(
            "ca.pem",
            "ca-key.pem",
            "n1.pem",
            "n1-key.pem",
            "n2.pem",
            "n3-key.pem",
            "admin.pem",
            "admin-key.pem")) {
      assertTrue(Files.isReadable(certs.resolve(f)), f + " made: " + made.output());
    }
    assertTrue(
        Files.readString(certs.resolve("admin-key.pem")).startsWith("-----BEGIN PRIVATE KEY-----"),
        "keys are PKCS#8");

    int base = freeBase();
    up = true;
    Run started = run("up", "--base-port", Integer.toString(base), "--tls", certs.toString());
    assertEquals(0, started.exit(), started.output());
    assertTrue(
        started.output().contains("metrics https://127.0.0.1:" + (base + 2)), started.output());
    assertTrue(
        started
            .output()
            .contains("tls: export LEASEHOLD_CACERT=" + certs.toRealPath().resolve("ca.pem")),
        started.output());
    Run status = run("status");
    assertEquals(0, status.exit(), status.output());
    assertEquals(
        3,
        matches(status.output(), "(?m)^n[123]  pid \\d+  client \\S+  SERVING  "),
        status.output());

    String endpoints =
        "127.0.0.1:" + base + ",127.0.0.1:" + (base + 10) + ",127.0.0.1:" + (base + 20);
    Map<String, String> env =
        new HashMap<>(
            Map.of(
                "LEASEHOLD_ENDPOINTS",
                endpoints,
                "LEASEHOLD_CACERT",
                certs.resolve("ca.pem").toString(),
                "LEASEHOLD_CERT",
                certs.resolve("admin.pem").toString(),
                "LEASEHOLD_KEY",
                certs.resolve("admin-key.pem").toString()));
    // A TTL that outlives the two CLI runs that follow, however slowly their JVMs start: this test
    // is about TLS, not expiry.
    Run cli = runCli(env, "lease", "acquire", "lock/tls", "--ttl", "5m", "--holder", "admin");
    assertEquals(0, cli.exit(), cli.output());
    env.remove("LEASEHOLD_CERT");
    env.remove("LEASEHOLD_KEY");
    Run refused = runCli(env, "--timeout", "3s", "lease", "get", "lock/tls");
    assertEquals(
        2,
        refused.exit(),
        "no client certificate: a TLS refusal, not an unreachable cluster: " + refused.output());
    assertTrue(
        refused.output().contains("requires a client certificate: give --cert and --key"),
        refused.output());

    try (LeaseholdClient client =
        LeaseholdClient.builder()
            .endpoints(endpoints.split(","))
            .holder("admin")
            .tls(
                certs.resolve("ca.pem"), certs.resolve("admin.pem"), certs.resolve("admin-key.pem"))
            .build()) {
      assertTrue(client.blocking().get("lock/tls").isPresent(), "the SDK reads what the CLI wrote");
    }
  }

  Run runScript(Path file, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("bash", file.toString()));
    command.addAll(List.of(args));
    return runProcess(new ProcessBuilder(command), Map.of());
  }

  Run runCli(Map<String, String> env, String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("java-tmp")),
                "-jar",
                jar.toAbsolutePath().toString()));
    command.addAll(List.of(args));
    return runProcess(new ProcessBuilder(command), env);
  }

  Run runProcess(ProcessBuilder pb, Map<String, String> env) throws Exception {
    pb.redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("LEASEHOLD_"));
    pb.environment().putAll(env);
    Path out = Files.createTempFile(dir, "run", ".log");
    pb.redirectOutput(out.toFile());
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          String.join(" ", pb.command()) + " did not finish: " + Files.readString(out));
    }
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  static boolean onPath(String program) {
    return java.util.Arrays.stream(
            System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
        .anyMatch(d -> Files.isExecutable(Path.of(d, program)));
  }

  /** Live processes whose command line names a data dir of the cluster in {@code clusterDir}. */
  static List<ProcessHandle> nodesOf(String clusterDir) {
    return ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .filter(
            ph ->
                ph.info()
                    .commandLine()
                    .map(c -> c.contains("--data-dir " + clusterDir + "/n"))
                    .orElse(false))
        .toList();
  }

  static int matches(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }
}
