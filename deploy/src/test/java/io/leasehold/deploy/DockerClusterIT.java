package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.EventType;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.NodeStatus;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.lifecycle.Startables;

/**
 * The container image, three containers on one network: Docker's own HEALTHCHECK reports each
 * healthy, acquire, renew and watch through the SDK, stop the leader's container, and the cluster
 * fails over with the lease and the watch intact. Skipped where no Docker engine runs.
 */
class DockerClusterIT {
  static final String BASE_IMAGE = "leasehold-base:jre17";
  final Path deploy = Path.of(System.getProperty("leasehold.deploy", "."));
  final Path jar = Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));
  final List<GenericContainer<?>> nodes = new ArrayList<>();
  Network network;

  @AfterEach
  void stop() {
    nodes.forEach(GenericContainer::stop);
    if (network != null) {
      network.close();
    }
  }

  @Test
  void threeContainersServeLeasesAndFailOverWhenTheLeadersContainerStops() throws Exception {
    if (!dockerAvailable()) {
      String why = "no Docker engine reachable (DOCKER_HOST or /var/run/docker.sock): DockerClusterIT is skipped";
      LoggerFactory.getLogger(DockerClusterIT.class).warn(why);
      Assumptions.abort(why);
    }
    assertTrue(Files.exists(jar), "the distribution jar exists: " + jar.toAbsolutePath());
    ensureBaseImage();
    ImageFromDockerfile image = new ImageFromDockerfile("leasehold-it", true)
        .withFileFromPath("Dockerfile", deploy.resolve("docker/Dockerfile"))
        .withFileFromPath("leasehold.jar", jar)
        .withBuildArg("BASE_IMAGE", BASE_IMAGE);
    network = Network.newNetwork();
    String peers = "n1=n1:7401:7400,n2=n2:7401:7400,n3=n3:7401:7400";
    for (String id : List.of("n1", "n2", "n3")) {
      // n1 keeps the image's metrics port (7402); n2 and n3 move it with LEASEHOLD_METRICS_PORT,
      // which both the node and the HEALTHCHECK read, so Docker's health status covers both ways.
      int metricsPort = id.equals("n1") ? 7402 : 7412;
      GenericContainer<?> c = new GenericContainer<>(image)
          .withNetwork(network)
          .withNetworkAliases(id)
          .withEnv("LEASEHOLD_PEERS", peers)
          .withEnv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+UnlockExperimentalVMOptions -XX:G1NewSizePercent=1 -Xmx256m")
          .withCommand("server", "--id", id, "--listen-host", "0.0.0.0", "--data-dir", "/data/" + id)
          .withExposedPorts(7400, metricsPort)
          .withLogConsumer(new Slf4jLogConsumer(LoggerFactory.getLogger("container." + id)).withSeparateOutputStreams())
          .waitingFor(Wait.forHttp("/healthz").forPort(metricsPort).forStatusCode(200).withStartupTimeout(Duration.ofMinutes(3)));
      if (metricsPort != 7402) {
        c.withEnv("LEASEHOLD_METRICS_PORT", String.valueOf(metricsPort));
      }
      nodes.add(c);
    }
    // Together: none is healthy until a quorum runs.
    Startables.deepStart(nodes).get(5, TimeUnit.MINUTES);
    // /healthz answers 200 on every node now; the HEALTHCHECK runs every 5 s and one pass makes
    // a container healthy, so a few intervals are plenty.
    for (int i = 0; i < nodes.size(); i++) {
      awaitDockerHealthy("n" + (i + 1), nodes.get(i), Duration.ofSeconds(60));
    }

    List<String> endpoints = nodes.stream().map(c -> c.getHost() + ":" + c.getMappedPort(7400)).toList();
    try (LeaseholdClient client = LeaseholdClient.builder().endpoints(endpoints).holder("container-test")
        // The members' own addresses (n1:7400...) are container names the host cannot resolve.
        .discoverMembers(false)
        .requestTimeout(Duration.ofSeconds(30))
        .build()) {
      List<WatchEvent> events = new CopyOnWriteArrayList<>();
      Watch watch = client.watch("lock/", 0, events::add);
      Lease lease = client.blocking().acquire("lock/docker", LeaseOptions.defaults().withTtl(Duration.ofSeconds(6)));
      await("the watch sees the grant", Duration.ofSeconds(30), () -> events.stream()
          .anyMatch(e -> e.type() == EventType.ACQUIRED && e.name().equals("lock/docker")));
      long renewedBefore = client.blocking().get("lock/docker").orElseThrow().renewCount();
      await("the SDK renews the lease", Duration.ofSeconds(30),
          () -> client.blocking().get("lock/docker").orElseThrow().renewCount() > renewedBefore);

      NodeStatus status = client.cluster().status().join();
      String leader = status.leaderId().orElseThrow();
      GenericContainer<?> leaderContainer = nodes.get(List.of("n1", "n2", "n3").indexOf(leader));
      leaderContainer.stop();

      await("a new leader among the survivors", Duration.ofSeconds(60), () -> {
        try {
          return client.cluster().status().get(10, TimeUnit.SECONDS).leaderId().filter(l -> !l.equals(leader)).isPresent();
        } catch (Exception e) {
          return false;
        }
      });
      Lease after = client.blocking().acquire("lock/after-failover", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)));
      assertTrue(after.token() > lease.token(), "tokens keep increasing across leaders");
      await("the watch resumed on a surviving node", Duration.ofSeconds(60), () -> events.stream()
          .anyMatch(e -> e.type() == EventType.ACQUIRED && e.name().equals("lock/after-failover")));
      assertTrue(lease.isValid(), "the lease survived the failover: " + lease.state());
      assertEquals(lease.token(), client.blocking().get("lock/docker").orElseThrow().token());
      long renewedAfter = client.blocking().get("lock/docker").orElseThrow().renewCount();
      await("renewals go on under the new leader", Duration.ofSeconds(30),
          () -> client.blocking().get("lock/docker").orElseThrow().renewCount() > renewedAfter);
      watch.close();
      lease.release().get(30, TimeUnit.SECONDS);
    }
    // The survivors follow the new leader: Docker still (or again) reports them healthy.
    for (int i = 0; i < nodes.size(); i++) {
      if (nodes.get(i).isRunning()) {
        awaitDockerHealthy("n" + (i + 1), nodes.get(i), Duration.ofSeconds(60));
      }
    }
    for (GenericContainer<?> c : nodes) {
      if (c != null && c.isRunning()) {
        assertTrue(c.getDockerClient().inspectContainerCmd(c.getContainerId()).exec().getConfig().getUser().startsWith("10001"),
            "the node runs as the non-root user");
      }
    }
  }

  /** Waits until Docker's health status of the container, set by the image's HEALTHCHECK, is "healthy". */
  static void awaitDockerHealthy(String name, GenericContainer<?> c, Duration timeout) throws InterruptedException {
    String[] last = {"none"};
    try {
      await("Docker reports " + name + " healthy", timeout, () -> {
        var health = c.getDockerClient().inspectContainerCmd(c.getContainerId()).exec().getState().getHealth();
        last[0] = health == null ? "no health check" : health.getStatus();
        return "healthy".equals(last[0]);
      });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + " (last status: " + last[0] + ")", e);
    }
  }

  static boolean dockerAvailable() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The base image is made offline from this machine's JDK (nothing can be pulled here). */
  void ensureBaseImage() throws Exception {
    try {
      DockerClientFactory.instance().client().inspectImageCmd(BASE_IMAGE).exec();
      return;
    } catch (RuntimeException missing) {
      // build it below
    }
    Process p = new ProcessBuilder("bash", deploy.resolve("docker/build-base-image.sh").toString(), BASE_IMAGE)
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
    assertTrue(p.waitFor(10, TimeUnit.MINUTES), "the base image build finished");
    assertEquals(0, p.exitValue(), "the base image build succeeded");
  }

  static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException notYet) {
        // a call failed mid-failover: ask again
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
  }
}
