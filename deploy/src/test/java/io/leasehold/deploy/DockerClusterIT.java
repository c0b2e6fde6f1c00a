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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.lifecycle.Startables;

/**
 * The container image, three containers on one network: Docker's own HEALTHCHECK reports each
 * healthy, acquire, renew and watch through the SDK, stop the leader's container, and the cluster
 * fails over with the lease and the watch intact. Skipped where no Docker engine runs.
 */
class DockerClusterIT {
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
    Containers.assumeDocker(DockerClusterIT.class);
    String image = Containers.nodeImage("leasehold-it", Map.of());
    network = Network.newNetwork();
    String peers = "n1=n1:7401:7400,n2=n2:7401:7400,n3=n3:7401:7400";
    for (String id : List.of("n1", "n2", "n3")) {
      // n1 keeps the image's metrics port (7402); n2 and n3 move it with LEASEHOLD_METRICS_PORT,
      // which both the node and the HEALTHCHECK read, so Docker's health status covers both ways.
      int metricsPort = id.equals("n1") ? 7402 : 7412;
      GenericContainer<?> c =
          new GenericContainer<>(image)
              .withNetwork(network)
              .withNetworkAliases(id)
              .withEnv("LEASEHOLD_PEERS", peers)
              .withEnv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Xmx256m")
              .withCommand(Containers.serverCommand(id))
              .withExposedPorts(7400, metricsPort)
              .withLogConsumer(
                  new Slf4jLogConsumer(LoggerFactory.getLogger("container." + id))
                      .withSeparateOutputStreams())
              .waitingFor(
                  Wait.forHttp("/healthz")
                      .forPort(metricsPort)
                      .forStatusCode(200)
                      .withStartupTimeout(Duration.ofMinutes(3)));
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
      Containers.awaitDockerHealthy(
          "n" + (i + 1), nodes.get(i).getContainerId(), Duration.ofSeconds(60));
    }

    List<String> endpoints =
        nodes.stream().map(c -> c.getHost() + ":" + c.getMappedPort(7400)).toList();
    try (LeaseholdClient client =
        LeaseholdClient.builder()
            .endpoints(endpoints)
            .holder("container-test")
            // The members' own addresses (n1:7400...) are container names the host cannot resolve.
            .discoverMembers(false)
            .requestTimeout(Duration.ofSeconds(30))
            .build()) {
      List<WatchEvent> events = new CopyOnWriteArrayList<>();
      // From the listing's revision on: a watch "from now" may be positioned after the grant below.
      Watch watch =
          client.watch("lock/", client.blocking().list("lock/").revision() + 1, events::add);
      Lease lease =
          client
              .blocking()
              .acquire("lock/docker", LeaseOptions.defaults().withTtl(Duration.ofSeconds(6)));
      Containers.await(
          "the watch sees the grant",
          Duration.ofSeconds(30),
          () ->
              events.stream()
                  .anyMatch(e -> e.type() == EventType.ACQUIRED && e.name().equals("lock/docker")));
      long renewedBefore = client.blocking().get("lock/docker").orElseThrow().renewCount();
      Containers.await(
          "the SDK renews the lease",
          Duration.ofSeconds(30),
          () -> client.blocking().get("lock/docker").orElseThrow().renewCount() > renewedBefore);

      NodeStatus status = client.cluster().status().join();
      String leader = status.leaderId().orElseThrow();
      GenericContainer<?> leaderContainer = nodes.get(List.of("n1", "n2", "n3").indexOf(leader));
      leaderContainer.stop();

      Containers.await(
          "a new leader among the survivors",
          Duration.ofSeconds(60),
          () -> {
            try {
              return client
                  .cluster()
                  .status()
                  .get(10, TimeUnit.SECONDS)
                  .leaderId()
                  .filter(l -> !l.equals(leader))
                  .isPresent();
            } catch (Exception e) {
              return false;
            }
          });
      Lease after =
          client
              .blocking()
              .acquire(
                  "lock/after-failover", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)));
      assertTrue(after.token() > lease.token(), "tokens keep increasing across leaders");
      Containers.await(
          "the watch resumed on a surviving node",
          Duration.ofSeconds(60),
          () ->
              events.stream()
                  .anyMatch(
                      e ->
                          e.type() == EventType.ACQUIRED
                              && e.name().equals("lock/after-failover")));
      assertTrue(lease.isValid(), "the lease survived the failover: " + lease.state());
      assertEquals(lease.token(), client.blocking().get("lock/docker").orElseThrow().token());
      long renewedAfter = client.blocking().get("lock/docker").orElseThrow().renewCount();
      Containers.await(
          "renewals go on under the new leader",
          Duration.ofSeconds(30),
          () -> client.blocking().get("lock/docker").orElseThrow().renewCount() > renewedAfter);
      watch.close();
      lease.release().get(30, TimeUnit.SECONDS);
    }
    // The survivors follow the new leader: Docker still (or again) reports them healthy.
    for (int i = 0; i < nodes.size(); i++) {
      if (nodes.get(i).isRunning()) {
        Containers.awaitDockerHealthy(
            "n" + (i + 1), nodes.get(i).getContainerId(), Duration.ofSeconds(60));
      }
    }
    for (GenericContainer<?> c : nodes) {
      if (c != null && c.isRunning()) {
        assertTrue(
            c.getDockerClient()
                .inspectContainerCmd(c.getContainerId())
                .exec()
                .getConfig()
                .getUser()
                .startsWith("10001"),
            "the node runs as the non-root user");
      }
    }
  }
}
