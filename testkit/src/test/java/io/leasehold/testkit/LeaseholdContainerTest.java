package io.leasehold.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.testcontainers.utility.DockerImageName;

/**
 * What a {@link LeaseholdContainer} and a {@link LeaseholdContainerCluster} ask Docker to run, read
 * before anything starts: no Docker engine needed. The containers themselves run in the deploy
 * module's {@code LeaseholdContainerIT}, on the image it builds.
 */
class LeaseholdContainerTest {
  static final DockerImageName IMAGE = LeaseholdContainer.DEFAULT_IMAGE_NAME;
  static final List<String> ELECTION =
      List.of("--election-timeout-min", "1000ms", "--election-timeout-max", "1900ms");

  @Test
  void theDefaultImageIsTheOneBuildImageShBuilds() throws Exception {
    assertEquals("leasehold:dev", IMAGE.asCanonicalNameString());
    String script =
        Files.readString(
            Path.of("").toAbsolutePath().getParent().resolve("deploy/docker/build-image.sh"));
    assertTrue(
        script.contains("image=\"${1:-" + LeaseholdContainer.DEFAULT_IMAGE + "}\""),
        "build-image.sh tags " + LeaseholdContainer.DEFAULT_IMAGE + " by default");
  }

  @Test
  void anotherTagOrADeclaredSubstituteIsAcceptedAndAnotherImageIsNot() {
    new LeaseholdContainer("leasehold:0.1.0");
    new LeaseholdContainer(
        DockerImageName.parse("registry.example/team/leasehold-it:1")
            .asCompatibleSubstituteFor("leasehold"));
    assertThrows(IllegalStateException.class, () -> new LeaseholdContainer("postgres:16"));
  }

  @Test
  void aStandaloneNodeRunsAsTheImageDoesWithTheKitsElectionTimeouts() {
    try (LeaseholdContainer node = new LeaseholdContainer(IMAGE)) {
      assertEquals("n1", node.nodeId());
      assertEquals(
          concat(
              List.of(
                  "server", "--standalone", "--listen-host", "0.0.0.0", "--data-dir", "/data/n1"),
              ELECTION),
          List.of(node.getCommandParts()));
      assertEquals(List.of(7400, 7402), node.getExposedPorts());
      assertEquals("-Xmx256m", node.getEnvMap().get("JDK_JAVA_OPTIONS"));
      assertFalse(node.getEnvMap().containsKey("LEASEHOLD_PEERS"), "standalone: no peers");
      assertFalse(node.isTls());
      IllegalStateException notStarted = assertThrows(IllegalStateException.class, node::endpoint);
      assertEquals("n1: the container has not started", notStarted.getMessage());
      assertThrows(IllegalStateException.class, node::metricsEndpoint);
      IllegalStateException off = assertThrows(IllegalStateException.class, node::tls);
      assertEquals("TLS is off: call withTls() before the container starts", off.getMessage());
    }
  }

  @Test
  void withTlsAddsTheOptionsOfComposeTlsYamlOnTheCopiedCertificates() {
    try (LeaseholdContainer node = new LeaseholdContainer(IMAGE).withTls()) {
      assertTrue(node.isTls());
      List<String> command = List.of(node.getCommandParts());
      assertEquals(
          concat(
              List.of(
                  "server", "--standalone", "--listen-host", "0.0.0.0", "--data-dir", "/data/n1"),
              ELECTION,
              List.of(
                  "--tls-cert-file",
                  "/certs/n1.pem",
                  "--tls-key-file",
                  "/certs/n1-key.pem",
                  "--tls-ca-file",
                  "/certs/ca.pem",
                  "--client-cert-auth",
                  "--initial-admin",
                  "admin",
                  "--peer-tls-cert-file",
                  "/certs/n1.pem",
                  "--peer-tls-key-file",
                  "/certs/n1-key.pem",
                  "--peer-tls-ca-file",
                  "/certs/ca.pem",
                  "--metrics-plaintext")),
          command);
      IllegalStateException notYet = assertThrows(IllegalStateException.class, node::tls);
      assertEquals("the certificates are made when the container starts", notYet.getMessage());
    }
  }

  @Test
  void serverOptionsComeLastAndElectionTimeoutsOfTheTestsOwnReplaceTheKits() {
    try (LeaseholdContainer node =
        new LeaseholdContainer(IMAGE).withServerOptions("--max-renew-items", "10")) {
      List<String> command = List.of(node.getCommandParts());
      assertEquals(
          List.of("--max-renew-items", "10"), command.subList(command.size() - 2, command.size()));
      assertTrue(command.containsAll(ELECTION), command.toString());
    }
    try (LeaseholdContainer node =
        new LeaseholdContainer(IMAGE).withServerOptions("--election-timeout-min", "2s")) {
      List<String> command = List.of(node.getCommandParts());
      assertEquals(
          1, command.stream().filter(a -> a.startsWith("--election")).count(), "" + command);
      assertEquals("2s", command.get(command.size() - 1));
    }
  }

  @Test
  void aClusterOfThreeIsThreeMembersOnOneNetworkKnownByTheirIds() {
    LeaseholdContainerCluster cluster = LeaseholdContainer.cluster(IMAGE, 3);
    try {
      assertEquals(List.of("n1", "n2", "n3"), cluster.nodeIds());
      assertEquals(List.of(), cluster.addresses(), "no node runs yet");
      for (LeaseholdContainer node : cluster.nodes()) {
        String id = node.nodeId();
        assertSame(node, cluster.node(id));
        assertSame(cluster.network(), node.getNetwork(), id);
        assertTrue(node.getNetworkAliases().contains(id), id + ": " + node.getNetworkAliases());
        assertEquals(
            "n1=n1:7401:7400,n2=n2:7401:7400,n3=n3:7401:7400",
            node.getEnvMap().get("LEASEHOLD_PEERS"),
            id);
        assertEquals(
            concat(
                List.of(
                    "server", "--id", id, "--listen-host", "0.0.0.0", "--data-dir", "/data/" + id),
                ELECTION),
            List.of(node.getCommandParts()));
        // Its certificate would name its aliases and the Docker host besides its id.
        assertTrue(
            LeaseholdTls.subjectAltNames(id, node.getNetworkAliases())
                .containsAll(node.getNetworkAliases()));
      }
      assertThrows(IllegalArgumentException.class, () -> cluster.node("n4"));
      assertThrows(IllegalStateException.class, cluster::tls);
    } finally {
      cluster.stop();
    }
  }

  @Test
  void aTlsClusterRunsEveryMemberWithMutualTlsOnItsOwnCertificate() {
    LeaseholdContainerCluster cluster = LeaseholdContainer.cluster(IMAGE, 3).withTls();
    try {
      for (LeaseholdContainer node : cluster.nodes()) {
        String id = node.nodeId();
        List<String> command = List.of(node.getCommandParts());
        assertTrue(node.isTls(), id);
        assertEquals("/certs/" + id + ".pem", after(command, "--tls-cert-file"));
        assertEquals("/certs/" + id + "-key.pem", after(command, "--tls-key-file"));
        assertEquals("/certs/" + id + ".pem", after(command, "--peer-tls-cert-file"));
        assertEquals("/certs/ca.pem", after(command, "--peer-tls-ca-file"));
        assertEquals("admin", after(command, "--initial-admin"));
        assertTrue(command.contains("--client-cert-auth"), id);
        assertTrue(command.contains("--metrics-plaintext"), id);
      }
      IllegalStateException notYet = assertThrows(IllegalStateException.class, cluster::tls);
      assertEquals("the certificates are made when the cluster starts", notYet.getMessage());
    } finally {
      cluster.stop();
    }
  }

  @Test
  void aClusterHasOneToNineNodes() {
    assertThrows(IllegalArgumentException.class, () -> LeaseholdContainer.cluster(IMAGE, 0));
    assertThrows(IllegalArgumentException.class, () -> LeaseholdContainer.cluster(IMAGE, 10));
    LeaseholdContainerCluster one = LeaseholdContainer.cluster(IMAGE, 1);
    one.stop();
    assertEquals("n1=n1:7401:7400", one.node("n1").getEnvMap().get("LEASEHOLD_PEERS"));
  }

  static String after(List<String> args, String option) {
    int i = args.indexOf(option);
    return i < 0 || i + 1 >= args.size() ? null : args.get(i + 1);
  }

  @SafeVarargs
  static List<String> concat(List<String>... parts) {
    List<String> out = new ArrayList<>();
    for (List<String> p : parts) {
      out.addAll(p);
    }
    return out;
  }
}
