package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.NodeStatus;
import io.leasehold.testkit.LeaseholdContainer;
import io.leasehold.testkit.LeaseholdContainerCluster;
import io.leasehold.testkit.LeaseholdTls;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.utility.DockerImageName;

/**
 * The test kit's {@link LeaseholdContainer} on the image built from the packaged jar, as an
 * application's tests use it: a standalone node that serves the SDK and passes the image's own
 * HEALTHCHECK; a three-node cluster with mutual TLS on the certificates the kit makes, whose admin
 * grants a role to a client identity that then holds a lease through the loss of the leader's
 * container, while a client without a certificate is refused. Skipped where no Docker engine runs.
 */
class LeaseholdContainerIT {
  static final LeaseOptions TEN_SECONDS = LeaseOptions.defaults().withTtl(Duration.ofSeconds(10));

  @Test
  void aStandaloneNodeServesTheSdkAndPassesTheImagesHealthCheck() throws Exception {
    Containers.assumeDocker(LeaseholdContainerIT.class);
    try (LeaseholdContainer node = new LeaseholdContainer(image()).withLogConsumer(log("n1"))) {
      node.start();
      try (LeaseholdClient client = node.clientBuilder().holder("container-it").build()) {
        Lease lease = client.blocking().acquire("it/standalone", TEN_SECONDS);
        assertTrue(lease.token() > 0);
        assertEquals("container-it", lease.holder());
        NodeStatus status = client.cluster().status().get(30, TimeUnit.SECONDS);
        assertEquals(Optional.of("n1"), status.leaderId());
        assertEquals(1, status.members().size(), status.toString());
        lease.release().get(30, TimeUnit.SECONDS);
      }
      assertEquals("SERVING\n", healthz(node));
      Containers.awaitDockerHealthy("n1", node.getContainerId(), Duration.ofSeconds(60));
    }
  }

  @Test
  void aThreeNodeTlsClusterServesCertifiedClientsAndKeepsTheLeaseWhenTheLeaderGoes()
      throws Exception {
    Containers.assumeDocker(LeaseholdContainerIT.class);
    try (LeaseholdContainerCluster cluster = LeaseholdContainer.cluster(image(), 3).withTls()) {
      cluster.nodes().forEach(n -> n.withLogConsumer(log(n.nodeId())));
      cluster.start();
      assertEquals(3, cluster.addresses().size(), cluster.endpoints());
      LeaseholdTls tls = cluster.tls();

      try (LeaseholdClient admin = cluster.clientBuilder().build()) {
        NodeStatus status = admin.cluster().status().get(30, TimeUnit.SECONDS);
        assertEquals(3, status.members().size(), status.toString());
        admin.auth().grant("worker", "client").get(30, TimeUnit.SECONDS);
      }
      LeaseholdTls.Identity worker = tls.client("worker");
      try (LeaseholdClient client =
          LeaseholdClient.builder()
              .endpoints(cluster.addresses())
              .discoverMembers(false)
              .tls(tls.caCertificate(), worker.certificate(), worker.key())
              .requestTimeout(Duration.ofSeconds(30))
              .build()) {
        Lease lease = client.blocking().acquire("it/tls", TEN_SECONDS);
        assertEquals("worker", lease.holder(), "the certificate's identity holds it");

        String leader =
            client.cluster().status().get(30, TimeUnit.SECONDS).leaderId().orElseThrow();
        cluster.node(leader).stop();
        assertEquals(2, cluster.addresses().size(), "a stopped node has no endpoint");
        Containers.await(
            "a new leader among the survivors",
            Duration.ofSeconds(60),
            () ->
                client
                    .cluster()
                    .status()
                    .join()
                    .leaderId()
                    .filter(l -> !l.equals(leader))
                    .isPresent());
        assertTrue(lease.isValid(), "the lease survived the failover: " + lease.state());
        assertEquals(lease.token(), client.blocking().get("it/tls").orElseThrow().token());
        lease.release().get(30, TimeUnit.SECONDS);
      }

      try (LeaseholdClient noCertificate =
          LeaseholdClient.builder()
              .endpoints(cluster.addresses())
              .discoverMembers(false)
              .tls(tls.caCertificate())
              .requestTimeout(Duration.ofSeconds(3))
              .build()) {
        assertThrows(
            RuntimeException.class,
            () -> noCertificate.blocking().get("it/tls"),
            "a client without a certificate is refused");
      }
      // The health endpoint stays plain HTTP (--metrics-plaintext), as the image's check needs.
      // A follower of a new leader on a busy machine may miss its contact window for a moment
      // (NOT_SERVING), so each survivor is asked until it serves.
      for (LeaseholdContainer node : cluster.nodes()) {
        if (node.getContainerId() != null) {
          Containers.await(
              node.nodeId() + " to answer /healthz SERVING over plain HTTP",
              Duration.ofSeconds(30),
              () -> servingBody(node).equals("SERVING\n"));
        }
      }
    }
  }

  /** The image built from the packaged jar, declared the image LeaseholdContainer expects. */
  static DockerImageName image() throws Exception {
    return DockerImageName.parse(Containers.nodeImage("leasehold-it", Map.of()))
        .asCompatibleSubstituteFor("leasehold");
  }

  static Slf4jLogConsumer log(String node) {
    return new Slf4jLogConsumer(LoggerFactory.getLogger("container." + node))
        .withSeparateOutputStreams();
  }

  static String healthz(LeaseholdContainer node) throws Exception {
    HttpResponse<String> response = getHealthz(node);
    assertEquals(200, response.statusCode(), node.nodeId() + ": " + response.body());
    return response.body();
  }

  /** The body of /healthz if it answers 200, else an empty string (asked again by the caller). */
  private static String servingBody(LeaseholdContainer node) {
    try {
      HttpResponse<String> response = getHealthz(node);
      return response.statusCode() == 200 ? response.body() : "";
    } catch (java.io.IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static HttpResponse<String> getHealthz(LeaseholdContainer node)
      throws java.io.IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://" + node.metricsEndpoint() + "/healthz"))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }
}
