package io.leasehold.deploy;

import static io.leasehold.deploy.Manifests.at;
import static io.leasehold.deploy.Manifests.option;
import static io.leasehold.deploy.Manifests.strings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.testkit.LeaseholdContainer;
import io.leasehold.testkit.LeaseholdContainerCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The health checks of the container image, the compose files and the Kubernetes manifests agree
 * with each other and with the node's options, plaintext and TLS alike: the image's HEALTHCHECK
 * speaks plain HTTP to /healthz on $LEASEHOLD_METRICS_PORT, so every TLS variant runs its nodes
 * with {@code --metrics-plaintext} and mutual TLS on both transports from files it mounts.
 * (TlsHealthCheckIT runs the HEALTHCHECK itself against nodes started with these options.)
 */
class DeployManifestsTest {
  final Manifests m = Manifests.here();

  @Test
  void theImagesHealthCheckProbesHealthzOverPlainHttpOnTheMetricsPortVariable() {
    List<String> cmd = m.healthcheck();
    assertEquals("/bin/bash", cmd.get(0));
    assertEquals("-c", cmd.get(1));
    String script = cmd.get(2);
    assertTrue(
        script.contains("${LEASEHOLD_METRICS_PORT:-7402}")
            && script.contains("/dev/tcp/127.0.0.1/"),
        script);
    assertTrue(script.contains("GET /healthz HTTP/1.0"), script);
    assertTrue(
        script.contains("--metrics-plaintext"),
        "a failed check tells a TLS node what it lacks: " + script);
    assertEquals("7402", m.dockerEnv("LEASEHOLD_METRICS_PORT"));
  }

  @Test
  void theTlsComposeOverrideAddsMutualTlsAndPlaintextMetricsToEveryNodeAndNothingElse() {
    Map<String, Map<String, Object>> base = m.composeServices("docker/compose.yaml");
    Map<String, Map<String, Object>> tls = m.composeServices("docker/compose.tls.yaml");
    assertEquals(base.keySet(), tls.keySet(), "the override covers every node");
    for (String service : base.keySet()) {
      List<String> plain = strings(at(base, service, "command"));
      List<String> command = strings(at(tls, service, "command"));
      assertEquals(
          plain, Manifests.withoutTls(command), service + ": the same command, TLS options aside");
      String id = option(command, "--id");
      List<String> mounts = strings(at(tls, service, "volumes"));
      assertEquals(1, mounts.size(), service + ": " + mounts);
      String[] mount = mounts.get(0).split(":");
      assertEquals("ro", mount[mount.length - 1], "certificates are mounted read-only: " + mounts);
      assertMutualTls(service, command, mount[mount.length - 2], id);
      // The HEALTHCHECK follows LEASEHOLD_METRICS_PORT: the metrics port is not moved with the
      // option.
      assertFalse(command.contains("--metrics-port"), service + ": " + command);
    }
  }

  @Test
  void theTestKitsContainerClusterRunsTheComposeFilesNodesWithItsElectionTimeouts() {
    Map<String, Map<String, Object>> base = m.composeServices("docker/compose.yaml");
    LeaseholdContainerCluster cluster =
        LeaseholdContainer.cluster(LeaseholdContainer.DEFAULT_IMAGE_NAME, 3).withTls();
    try {
      assertEquals(
          List.copyOf(base.keySet()), cluster.nodeIds(), "n1 to n3, as compose names them");
      for (LeaseholdContainer node : cluster.nodes()) {
        String id = node.nodeId();
        List<String> command = List.of(node.getCommandParts());
        List<String> plain = new ArrayList<>(strings(at(base, id, "command")));
        plain.addAll(
            List.of("--election-timeout-min", "1000ms", "--election-timeout-max", "1900ms"));
        assertEquals(
            plain,
            Manifests.withoutTls(command),
            id + ": compose's command and the kit's timeouts");
        assertMutualTls("LeaseholdContainer " + id, command, "/certs", id);
        assertEquals(
            at(base, id, "environment", "LEASEHOLD_PEERS"),
            node.getEnvMap().get("LEASEHOLD_PEERS"),
            id + ": the same peers, known by the same names");
        assertTrue(node.getNetworkAliases().contains(id), id + ": " + node.getNetworkAliases());
      }
    } finally {
      cluster.stop();
    }
  }

  @Test
  void
      theTlsStatefulSetIsThePlaintextOneWithMutualTlsAnHttpReadinessProbeAndTheCertificateSecret() {
    Map<String, Map<String, Object>> base = m.kubernetes("kubernetes/leasehold.yaml");
    Map<String, Map<String, Object>> tls = m.kubernetes("kubernetes/tls/leasehold.yaml");
    assertEquals(base.keySet(), tls.keySet());
    for (String object : base.keySet()) {
      if (!object.equals("StatefulSet/leasehold")) {
        assertEquals(base.get(object), tls.get(object), object + " is the same in both manifests");
      }
    }
    Map<String, Object> plainSet = base.get("StatefulSet/leasehold");
    Map<String, Object> tlsSet = tls.get("StatefulSet/leasehold");
    assertEquals(plainSet.get("metadata"), tlsSet.get("metadata"));
    assertEquals(
        without(at(plainSet, "spec"), "template"), without(at(tlsSet, "spec"), "template"));
    assertEquals(
        at(plainSet, "spec", "template", "metadata"),
        (Object) at(tlsSet, "spec", "template", "metadata"));
    assertEquals(
        without(at(plainSet, "spec", "template", "spec"), "containers", "volumes"),
        without(at(tlsSet, "spec", "template", "spec"), "containers", "volumes"));
    Map<String, Object> plainPod =
        at(base.get("StatefulSet/leasehold"), "spec", "template", "spec");
    Map<String, Object> tlsPod = at(tls.get("StatefulSet/leasehold"), "spec", "template", "spec");
    Map<String, Object> plain = at(plainPod, "containers", 0);
    Map<String, Object> container = at(tlsPod, "containers", 0);

    // The plaintext readiness probe: the gRPC health service on the client port.
    assertEquals(7400, (Integer) at(plain, "readinessProbe", "grpc", "port"));
    // With TLS: GET /healthz on the metrics port, which the node keeps plain (--metrics-plaintext).
    Map<String, Object> probe = at(container, "readinessProbe");
    assertNull(probe.get("grpc"), "the kubelet's gRPC probe cannot speak TLS");
    assertEquals("/healthz", (Object) at(probe, "httpGet", "path"));
    assertNull(at(probe, "httpGet", "scheme"), "plain HTTP");
    int metricsPort = containerPort(container, at(probe, "httpGet", "port"));
    assertEquals(
        String.valueOf(metricsPort),
        env(container).get("LEASEHOLD_METRICS_PORT"),
        "the node's metrics port is the probed one");
    assertEquals(
        String.valueOf(metricsPort),
        (Object)
            at(
                tls.get("StatefulSet/leasehold"),
                "spec",
                "template",
                "metadata",
                "annotations",
                "prometheus.io/port"),
        "Prometheus scrapes the same plain port");
    // Liveness stays a TCP check of the client port, which works whatever the port speaks.
    assertEquals(plain.get("livenessProbe"), container.get("livenessProbe"));

    List<String> args = strings(container.get("args"));
    assertEquals(
        strings(plain.get("args")),
        Manifests.withoutTls(args),
        "the same arguments, TLS options aside");
    String certs = null;
    for (Object v : (List<?>) tlsPod.get("volumes")) {
      if (at(v, "secret") != null) {
        certs = at(v, "name");
      }
    }
    assertNotNull(certs, "a Secret volume holds the certificates");
    final String certsVolume = certs;
    String mountPath = null;
    for (Object vm : (List<?>) container.get("volumeMounts")) {
      if (certsVolume.equals(at(vm, "name"))) {
        mountPath = at(vm, "mountPath");
        assertEquals(Boolean.TRUE, (Object) at(vm, "readOnly"));
      }
    }
    assertNotNull(mountPath, "the certificate volume is mounted");
    assertMutualTls("StatefulSet", args, mountPath, "$(POD_NAME)");
    // Everything else in the container and the pod is unchanged.
    Map<String, Object> rest = new HashMap<>(container);
    Map<String, Object> plainRest = new HashMap<>(plain);
    for (String k : List.of("args", "readinessProbe", "volumeMounts")) {
      rest.remove(k);
      plainRest.remove(k);
    }
    assertEquals(plainRest, rest);
    List<Object> mounts = new ArrayList<>((List<?>) container.get("volumeMounts"));
    mounts.removeIf(vm -> certsVolume.equals(at(vm, "name")));
    assertEquals(plain.get("volumeMounts"), mounts);
  }

  /**
   * Mutual TLS on both transports with client certificates required, the node's own certificate and
   * key on both, the CA beside them, every file in {@code dir}; and plaintext metrics.
   */
  static void assertMutualTls(String where, List<String> args, String dir, String node) {
    String d = dir.endsWith("/") ? dir : dir + "/";
    assertEquals(d + node + ".pem", option(args, "--tls-cert-file"), where + ": " + args);
    assertEquals(d + node + "-key.pem", option(args, "--tls-key-file"), where + ": " + args);
    assertEquals(d + "ca.pem", option(args, "--tls-ca-file"), where + ": " + args);
    assertEquals(
        option(args, "--tls-cert-file"), option(args, "--peer-tls-cert-file"), where + ": " + args);
    assertEquals(
        option(args, "--tls-key-file"), option(args, "--peer-tls-key-file"), where + ": " + args);
    assertEquals(
        option(args, "--tls-ca-file"), option(args, "--peer-tls-ca-file"), where + ": " + args);
    assertTrue(
        args.contains("--client-cert-auth"), where + ": client certificates required: " + args);
    assertEquals(
        "admin",
        option(args, "--initial-admin"),
        where + ": the identity of make-certs.sh's admin certificate administers it: " + args);
    assertTrue(
        args.contains("--metrics-plaintext"),
        where + ": the health probe holds no certificate: " + args);
  }

  static Map<String, Object> without(Map<String, Object> map, String... keys) {
    Map<String, Object> out = new HashMap<>(map);
    for (String k : keys) {
      out.remove(k);
    }
    return out;
  }

  static int containerPort(Map<String, Object> container, Object port) {
    if (port instanceof Integer i) {
      return i;
    }
    for (Object p : (List<?>) container.get("ports")) {
      if (port.equals(at(p, "name"))) {
        return at(p, "containerPort");
      }
    }
    throw new AssertionError("no container port named " + port);
  }

  static Map<String, String> env(Map<String, Object> container) {
    Map<String, String> out = new HashMap<>();
    for (Object e : (List<?>) container.get("env")) {
      Object v = at(e, "value");
      if (v != null) {
        out.put(at(e, "name"), String.valueOf(v));
      }
    }
    return out;
  }
}
