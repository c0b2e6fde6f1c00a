package io.leasehold.cli.bench;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Three Leasehold nodes on loopback, each its own OS process started as the {@code leasehold}
 * launcher starts one (the same JVM flags, {@code LEASEHOLD_JAVA_OPTS} replacing them), from this
 * command's own jar: the cluster {@code leasehold bench failover} kills and restarts.
 */
public final class LocalCluster implements Failover.Cluster {
  /**
   * The launcher's default JVM flags ({@code ./leasehold}); LocalClusterTest keeps the two the
   * same.
   */
  public static final String LAUNCHER_JVM_FLAGS =
      "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+UseStringDeduplication -Xmx512m";

  /**
   * What the launcher adds on Java 25 and later (deploy/jvm.sh, {@code leasehold_default_flags}).
   */
  public static final String LAUNCHER_JVM_FLAGS_25 = "-XX:+UseCompactObjectHeaders";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final Path dir;
  private final Path jar;
  private final List<String> jvmFlags;
  private final int[] clientPorts = new int[3];
  private final int[] peerPorts = new int[3];
  private final int[] metricsPorts = new int[3];
  private final Process[] processes = new Process[3];
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  private LocalCluster(Path dir, Path jar, List<String> jvmFlags) {
    this.dir = dir;
    this.jar = jar;
    this.jvmFlags = jvmFlags;
  }

  /**
   * Starts the three nodes in {@code dir} (their data and logs) and waits for a leader and every
   * node serving.
   */
  public static LocalCluster start(Path dir, Path jar) throws IOException, InterruptedException {
    String opts = System.getenv("LEASEHOLD_JAVA_OPTS");
    // The nodes run this command's own java, as the launcher would choose its flags for it.
    String defaults =
        Runtime.version().feature() >= 25
            ? LAUNCHER_JVM_FLAGS + " " + LAUNCHER_JVM_FLAGS_25
            : LAUNCHER_JVM_FLAGS;
    List<String> flags =
        Arrays.stream((opts == null ? defaults : opts).trim().split("\\s+"))
            .filter(f -> !f.isEmpty())
            .toList();
    LocalCluster c = new LocalCluster(dir, jar, flags);
    try {
      c.pickPorts();
      for (int i = 0; i < 3; i++) {
        c.launch(i);
      }
      for (int i = 0; i < 3; i++) {
        c.awaitServing(i);
      }
      c.leader();
    } catch (IOException | InterruptedException | RuntimeException e) {
      c.close();
      throw e;
    }
    return c;
  }

  /** The jar this command runs from. */
  public static Path ownJar() {
    try {
      return Path.of(
          LocalCluster.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot tell where this jar is", e);
    }
  }

  private void pickPorts() throws IOException {
    int[] ports = NodeProcesses.freeLoopbackPorts(9);
    for (int i = 0; i < 3; i++) {
      clientPorts[i] = ports[3 * i];
      peerPorts[i] = ports[3 * i + 1];
      metricsPorts[i] = ports[3 * i + 2];
    }
  }

  private String peers() {
    List<String> p = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      p.add("n" + (i + 1) + "=127.0.0.1:" + peerPorts[i] + ":" + clientPorts[i]);
    }
    return String.join(",", p);
  }

  private void launch(int i) throws IOException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(jvmFlags);
    cmd.addAll(
        List.of(
            "-jar",
            jar.toString(),
            "server",
            "--id",
            "n" + (i + 1),
            "--peers",
            peers(),
            "--data-dir",
            dir.resolve("n" + (i + 1)).toString(),
            "--metrics-port",
            String.valueOf(metricsPorts[i])));
    Files.createDirectories(dir);
    Path log = dir.resolve("n" + (i + 1) + ".log");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment()
        .putIfAbsent("MALLOC_ARENA_MAX", "2"); // as deploy/jvm.sh sets it for the launcher
    processes[i] = pb.start();
  }

  private void awaitServing(int i) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!processes[i].isAlive()) {
        throw new IOException(
            "node n"
                + (i + 1)
                + " exited with "
                + processes[i].exitValue()
                + "; see "
                + dir.resolve("n" + (i + 1) + ".log"));
      }
      if (get(i, "/healthz") != null) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IOException(
        "node n"
            + (i + 1)
            + " did not serve within "
            + START_TIMEOUT.toSeconds()
            + " s; see "
            + dir.resolve("n" + (i + 1) + ".log"));
  }

  /** The body at {@code path} of node {@code i}'s metrics port, or null unless it answered 200. */
  private String get(int i, String path) throws InterruptedException {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPorts[i] + path))
                  .timeout(Duration.ofSeconds(2))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? r.body() : null;
    } catch (IOException e) {
      return null;
    }
  }

  @Override
  public int leader() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      int best = -1;
      double bestTerm = -1;
      for (int i = 0; i < 3; i++) {
        if (processes[i] == null || !processes[i].isAlive()) {
          continue;
        }
        String m = get(i, "/metrics");
        if (m == null || !m.contains("leasehold_raft_role{role=\"leader\"} 1")) {
          continue;
        }
        double term = NodeStats.parse(m).getOrDefault("leasehold_raft_term", 0.0);
        if (term > bestTerm) {
          best = i;
          bestTerm = term;
        }
      }
      if (best >= 0) {
        return best;
      }
      Thread.sleep(100);
    }
    throw new IOException("no leader within " + START_TIMEOUT.toSeconds() + " s");
  }

  @Override
  public void kill(int node) throws InterruptedException {
    NodeProcesses.kill(processes[node]);
  }

  @Override
  public void restart(int node) throws IOException, InterruptedException {
    launch(node);
    awaitServing(node);
  }

  @Override
  public List<String> endpoints() {
    return NodeProcesses.loopbackAddresses(clientPorts);
  }

  public List<String> metricsAddresses() {
    return NodeProcesses.loopbackAddresses(metricsPorts);
  }

  @Override
  public void close() {
    NodeProcesses.stopAll(processes);
  }
}
