package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import io.leasehold.client.ClusterMember;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.NodeStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.DockerClientFactory;

/**
 * deploy/docker/compose.yaml brought up as a user runs it ({@code docker compose} or Debian's
 * {@code docker-compose}), with the node image built from the Dockerfile: the three services turn
 * healthy by the image's health check on /healthz, elect a leader, and serve an acquisition through
 * the published ports. Only the published host ports are moved (to free ones), through the file's
 * own variables.
 */
class ComposeIT {
  @TempDir Path dir;
  List<String> compose;
  String project;
  final Map<String, String> env = new HashMap<>();

  @AfterEach
  void down() throws Exception {
    if (project != null) {
      run(Duration.ofMinutes(2), "down", "--volumes", "--timeout", "10");
    }
  }

  @Test
  void theComposeFileBringsUpAHealthyClusterThatServes() throws Exception {
    Containers.assumeDocker(ComposeIT.class);
    Optional<List<String>> command = Containers.composeCommand();
    Assumptions.assumeTrue(
        command.isPresent(),
        "neither `docker compose` nor `docker-compose` runs here: ComposeIT is skipped");
    compose = command.get();
    env.put("LEASEHOLD_IMAGE", Containers.nodeImage("leasehold-compose-it", Map.of()));
    List<String> endpoints = new ArrayList<>();
    List<Integer> metrics = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      int client = LocalProcesses.freePort();
      int metricsPort = LocalProcesses.freePort();
      env.put("LEASEHOLD_N" + i + "_PORT", String.valueOf(client));
      env.put("LEASEHOLD_N" + i + "_METRICS_PORT", String.valueOf(metricsPort));
      endpoints.add("127.0.0.1:" + client);
      metrics.add(metricsPort);
    }
    project =
        "leasehold-it-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
    run(Duration.ofMinutes(3), "up", "-d");

    DockerClient docker = DockerClientFactory.instance().client();
    List<Container> services =
        docker
            .listContainersCmd()
            .withShowAll(true)
            .withLabelFilter(Map.of("com.docker.compose.project", project))
            .exec();
    assertEquals(
        3,
        services.size(),
        "three services: " + services.stream().map(c -> List.of(c.getNames())).toList());
    for (Container c : services) {
      String service = c.getLabels().get("com.docker.compose.service");
      List<String> check =
          docker.inspectContainerCmd(c.getId()).exec().getConfig().getHealthcheck().getTest();
      assertTrue(
          String.join(" ", check).contains("GET /healthz"),
          service + "'s health check asks the node's /healthz: " + check);
      Containers.awaitDockerHealthy(service, c.getId(), Duration.ofMinutes(3));
    }

    try (LeaseholdClient client =
        LeaseholdClient.builder()
            .endpoints(endpoints)
            .holder("compose-test")
            // The members' own addresses (n1:7400...) are service names the host cannot resolve.
            .discoverMembers(false)
            .requestTimeout(Duration.ofSeconds(30))
            .build()) {
      // Asked of the node the client reached (the members' own addresses are not the host's).
      NodeStatus status = client.cluster().status().get(30, TimeUnit.SECONDS);
      assertEquals(
          List.of("n1", "n2", "n3"),
          status.members().stream().map(ClusterMember::id).sorted().toList(),
          "members: " + status);
      assertTrue(status.leaderId().isPresent(), "a leader: " + status);
      Lease lease =
          client
              .blocking()
              .acquire("lock/compose", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)));
      assertEquals(lease.token(), client.blocking().get("lock/compose").orElseThrow().token());
      lease.release().get(30, TimeUnit.SECONDS);
    }
  }

  private void run(Duration timeout, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(compose);
    cmd.addAll(
        List.of("-p", project, "-f", Containers.DEPLOY.resolve("docker/compose.yaml").toString()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "compose", ".log");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().putAll(env);
    Process p = pb.start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          String.join(" ", cmd) + " did not finish in " + timeout + ": " + Files.readString(out));
    }
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + Files.readString(out));
  }
}
