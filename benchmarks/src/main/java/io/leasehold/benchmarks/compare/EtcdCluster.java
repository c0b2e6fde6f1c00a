package io.leasehold.benchmarks.compare;

import io.leasehold.cli.bench.Failover;
import io.leasehold.cli.bench.NodeProcesses;
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

/**
 * Three etcd members on loopback, each its own process, with etcd's default settings: the failover
 * run's other cluster.
 */
final class EtcdCluster implements Failover.Cluster {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private final Path dir;
  private final String etcd;
  private final int[] clientPorts = new int[3];
  private final int[] peerPorts = new int[3];
  private final Process[] processes = new Process[3];
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  private EtcdCluster(Path dir, String etcd) {
    this.dir = dir;
    this.etcd = etcd;
  }

  static EtcdCluster start(Path dir, String etcd) throws IOException, InterruptedException {
    EtcdCluster c = new EtcdCluster(dir, etcd);
    try {
      int[] ports = NodeProcesses.freeLoopbackPorts(6);
      for (int i = 0; i < 3; i++) {
        c.clientPorts[i] = ports[2 * i];
        c.peerPorts[i] = ports[2 * i + 1];
      }
      for (int i = 0; i < 3; i++) {
        c.launch(i);
      }
      for (int i = 0; i < 3; i++) {
        c.awaitHealthy(i);
      }
      c.leader();
    } catch (IOException | InterruptedException | RuntimeException e) {
      c.close();
      throw e;
    }
    return c;
  }

  private void launch(int i) throws IOException {
    List<String> cluster = new ArrayList<>();
    for (int j = 0; j < 3; j++) {
      cluster.add("e" + (j + 1) + "=http://127.0.0.1:" + peerPorts[j]);
    }
    Files.createDirectories(dir);
    List<String> cmd =
        List.of(
            etcd,
            "--name",
            "e" + (i + 1),
            "--data-dir",
            dir.resolve("e" + (i + 1)).toString(),
            "--listen-client-urls",
            "http://127.0.0.1:" + clientPorts[i],
            "--advertise-client-urls",
            "http://127.0.0.1:" + clientPorts[i],
            "--listen-peer-urls",
            "http://127.0.0.1:" + peerPorts[i],
            "--initial-advertise-peer-urls",
            "http://127.0.0.1:" + peerPorts[i],
            "--initial-cluster",
            String.join(",", cluster),
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            "bench-failover");
    processes[i] =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dir.resolve("e" + (i + 1) + ".log").toFile()))
            .start();
  }

  private String get(int i, String path) throws InterruptedException {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPorts[i] + path))
                  .timeout(Duration.ofSeconds(2))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? r.body() : null;
    } catch (IOException e) {
      return null;
    }
  }

  private void awaitHealthy(int i) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!processes[i].isAlive()) {
        throw new IOException(
            "etcd e" + (i + 1) + " exited; see " + dir.resolve("e" + (i + 1) + ".log"));
      }
      String h = get(i, "/health");
      if (h != null && h.contains("\"true\"")) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IOException(
        "etcd e" + (i + 1) + " not healthy within " + START_TIMEOUT.toSeconds() + " s");
  }

  @Override
  public int leader() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      for (int i = 0; i < 3; i++) {
        if (processes[i] == null || !processes[i].isAlive()) {
          continue;
        }
        String m = get(i, "/metrics");
        if (m != null && m.contains("\netcd_server_is_leader 1")) {
          return i;
        }
      }
      Thread.sleep(100);
    }
    throw new IOException("no etcd leader within " + START_TIMEOUT.toSeconds() + " s");
  }

  @Override
  public void kill(int node) throws InterruptedException {
    NodeProcesses.kill(processes[node]);
  }

  @Override
  public void restart(int node) throws IOException, InterruptedException {
    launch(node); // an existing data dir: etcd ignores the initial-cluster flags and rejoins
    awaitHealthy(node);
  }

  @Override
  public List<String> endpoints() {
    return NodeProcesses.loopbackAddresses(clientPorts);
  }

  @Override
  public void close() {
    NodeProcesses.stopAll(processes);
  }
}
