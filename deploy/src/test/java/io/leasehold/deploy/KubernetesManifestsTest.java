package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Kubernetes manifests read into the Kubernetes API's own types (no field the API does not
 * know), and the properties a three-node Raft cluster depends on: peers that find each other by the
 * StatefulSet's ordinal names through a headless service, a disruption budget that keeps a quorum,
 * readiness from the node's own health, a volume per pod, resource requests.
 */
class KubernetesManifestsTest {
  static final KubernetesSerialization API = new KubernetesSerialization();
  final Path deploy = Manifests.here().deploy;

  @ParameterizedTest
  @ValueSource(strings = {"kubernetes/leasehold.yaml", "kubernetes/tls/leasehold.yaml"})
  void everyObjectIsOfAKnownKindWithNoFieldTheApiDoesNotKnow(String file) throws IOException {
    List<HasMetadata> objects = read(file);
    assertEquals(
        Set.of(
            "Service/leasehold",
            "Service/leasehold-client",
            "StatefulSet/leasehold",
            "PodDisruptionBudget/leasehold"),
        objects.stream()
            .map(o -> o.getKind() + "/" + o.getMetadata().getName())
            .collect(Collectors.toSet()));
    for (HasMetadata o : objects) {
      List<String> unknown = new ArrayList<>();
      unknownFields(o, o.getKind(), unknown, new IdentityHashMap<>());
      assertEquals(List.of(), unknown, file + ": fields the Kubernetes API does not have");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"kubernetes/leasehold.yaml", "kubernetes/tls/leasehold.yaml"})
  void peersFindEachOtherByOrdinalNamesThroughAHeadlessService(String file) throws IOException {
    List<HasMetadata> objects = read(file);
    StatefulSet set = one(objects, StatefulSet.class);
    Map<String, String> podLabels = set.getSpec().getTemplate().getMetadata().getLabels();
    assertEquals(
        set.getSpec().getSelector().getMatchLabels(),
        podLabels,
        "the StatefulSet selects its own pods");

    Service headless = named(objects, Service.class, set.getSpec().getServiceName());
    assertEquals(
        "None",
        headless.getSpec().getClusterIP(),
        "the governing service is headless: one DNS name per pod");
    assertEquals(
        Boolean.TRUE,
        headless.getSpec().getPublishNotReadyAddresses(),
        "peers resolve each other before any is ready (readiness needs a leader, a leader needs peers)");
    assertEquals(podLabels, headless.getSpec().getSelector());

    Container node = set.getSpec().getTemplate().getSpec().getContainers().get(0);
    int peerPort = port(node, "peer");
    int clientPort = port(node, "client");
    assertTrue(
        servicePorts(headless).contains(peerPort), "the headless service carries the Raft port");
    assertTrue(servicePorts(headless).contains(clientPort), "and the client port");

    // LEASEHOLD_PEERS names exactly the pods the StatefulSet makes: <set>-<ordinal>.<service>.
    int replicas = set.getSpec().getReplicas();
    assertEquals(3, replicas);
    String expected =
        IntStream.range(0, replicas)
            .mapToObj(
                i ->
                    set.getMetadata().getName()
                        + "-"
                        + i
                        + "="
                        + set.getMetadata().getName()
                        + "-"
                        + i
                        + "."
                        + headless.getMetadata().getName()
                        + ":"
                        + peerPort
                        + ":"
                        + clientPort)
            .collect(Collectors.joining(","));
    assertEquals(expected, env(node, "LEASEHOLD_PEERS").getValue());
    // Each pod's --id is its own name, which is its ordinal name in the peer list.
    EnvVar podName = env(node, "POD_NAME");
    assertEquals("metadata.name", podName.getValueFrom().getFieldRef().getFieldPath());
    assertEquals("$(POD_NAME)", Manifests.option(node.getArgs(), "--id"));
    assertEquals(
        "Parallel",
        set.getSpec().getPodManagementPolicy(),
        "all three start together: a lone first pod never becomes ready");

    Service clients = named(objects, Service.class, "leasehold-client");
    assertEquals(podLabels, clients.getSpec().getSelector());
    assertEquals(
        List.of(clientPort),
        servicePorts(clients),
        "clients reach only the client port, of ready pods");
    assertFalse(Boolean.TRUE.equals(clients.getSpec().getPublishNotReadyAddresses()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"kubernetes/leasehold.yaml", "kubernetes/tls/leasehold.yaml"})
  void theDisruptionBudgetAllowsOneNodeDownAndNoMore(String file) throws IOException {
    List<HasMetadata> objects = read(file);
    StatefulSet set = one(objects, StatefulSet.class);
    PodDisruptionBudget pdb = one(objects, PodDisruptionBudget.class);
    assertEquals("policy/v1", pdb.getApiVersion());
    assertEquals(
        set.getSpec().getTemplate().getMetadata().getLabels(),
        pdb.getSpec().getSelector().getMatchLabels());
    int replicas = set.getSpec().getReplicas();
    int quorum = replicas / 2 + 1;
    int allowedDown =
        pdb.getSpec().getMaxUnavailable() != null
            ? intValue(pdb.getSpec().getMaxUnavailable(), replicas)
            : replicas - intValue(pdb.getSpec().getMinAvailable(), replicas);
    assertEquals(1, allowedDown, "one node down at a time by choice");
    assertTrue(replicas - allowedDown >= quorum, "a quorum stays up");
    assertEquals(
        "RollingUpdate",
        set.getSpec().getUpdateStrategy().getType(),
        "upgrades replace one pod at a time");
  }

  @ParameterizedTest
  @ValueSource(strings = {"kubernetes/leasehold.yaml", "kubernetes/tls/leasehold.yaml"})
  void readinessIsTheNodesHealthAndLivenessOnlyThatItListens(String file) throws IOException {
    StatefulSet set = one(read(file), StatefulSet.class);
    Container node = set.getSpec().getTemplate().getSpec().getContainers().get(0);
    var readiness = node.getReadinessProbe();
    assertNotNull(readiness, "a readiness probe");
    if (file.contains("tls/")) {
      // The kubelet's gRPC probe has no certificates: /healthz on the plain metrics port, the same
      // check.
      assertEquals("/healthz", readiness.getHttpGet().getPath());
      assertEquals(port(node, "metrics"), portOf(node, readiness.getHttpGet().getPort()));
      assertTrue(node.getArgs().contains("--metrics-plaintext"));
    } else {
      assertNotNull(readiness.getGrpc(), "readiness from the gRPC health service");
      assertEquals(port(node, "client"), readiness.getGrpc().getPort());
      assertEquals(
          null,
          readiness.getGrpc().getService(),
          "the server-wide status (\"\"), SERVING only with a leader");
    }
    assertNotNull(
        node.getLivenessProbe().getTcpSocket(),
        "liveness is a TCP check: a node cut off from its peers must not be restarted");
    assertEquals(
        port(node, "client"), portOf(node, node.getLivenessProbe().getTcpSocket().getPort()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"kubernetes/leasehold.yaml", "kubernetes/tls/leasehold.yaml"})
  void eachPodKeepsItsDataOnAClaimOfItsOwnAndRequestsResources(String file) throws IOException {
    StatefulSet set = one(read(file), StatefulSet.class);
    Container node = set.getSpec().getTemplate().getSpec().getContainers().get(0);
    List<PersistentVolumeClaim> claims = set.getSpec().getVolumeClaimTemplates();
    assertEquals(1, claims.size());
    PersistentVolumeClaim claim = claims.get(0);
    assertEquals(List.of("ReadWriteOnce"), claim.getSpec().getAccessModes());
    Quantity storage = claim.getSpec().getResources().getRequests().get("storage");
    assertNotNull(storage, "the claim asks for a size");
    assertTrue(
        Quantity.getAmountInBytes(storage).longValue() >= 1L << 30, "at least 1 GiB: " + storage);
    VolumeMount data =
        node.getVolumeMounts().stream()
            .filter(m -> m.getName().equals(claim.getMetadata().getName()))
            .findFirst()
            .orElseThrow(
                () ->
                    new AssertionError(
                        "the container mounts the claim " + claim.getMetadata().getName()));
    String dataDir = Manifests.option(node.getArgs(), "--data-dir");
    assertTrue(
        dataDir.startsWith(data.getMountPath() + "/"),
        "--data-dir " + dataDir + " is on the claim mounted at " + data.getMountPath());
    assertFalse(Boolean.TRUE.equals(data.getReadOnly()));

    Map<String, Quantity> requests = node.getResources().getRequests();
    assertNotNull(requests.get("cpu"), "a CPU request");
    assertNotNull(requests.get("memory"), "a memory request");
    Quantity limit = node.getResources().getLimits().get("memory");
    assertNotNull(limit, "a memory limit: the JVM sizes its heap from it");
    assertTrue(
        Quantity.getAmountInBytes(limit)
                .compareTo(Quantity.getAmountInBytes(requests.get("memory")))
            >= 0);
    assertTrue(
        env(node, "JAVA_TOOL_OPTIONS").getValue().contains("-XX:MaxRAMPercentage="),
        "the heap follows the limit");
    var security = set.getSpec().getTemplate().getSpec().getSecurityContext();
    assertEquals(Boolean.TRUE, security.getRunAsNonRoot());
    assertEquals(10001L, security.getFsGroup(), "the claim is writable by the image's user");
  }

  private List<HasMetadata> read(String file) throws IOException {
    try (InputStream in = Files.newInputStream(deploy.resolve(file))) {
      Object parsed = API.unmarshal(in);
      List<HasMetadata> out = new ArrayList<>();
      for (Object o : parsed instanceof List<?> list ? list : List.of(parsed)) {
        assertTrue(o instanceof HasMetadata, file + ": an object of a kind the API knows: " + o);
        out.add((HasMetadata) o);
      }
      return out;
    }
  }

  /** Walks the typed object and collects every field that landed in an additionalProperties map. */
  private static void unknownFields(
      Object o, String path, List<String> out, Map<Object, Boolean> seen) {
    if (o == null || seen.put(o, Boolean.TRUE) != null) {
      return;
    }
    if (o instanceof Collection<?> c) {
      int i = 0;
      for (Object e : c) {
        unknownFields(e, path + "[" + i++ + "]", out, seen);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      m.forEach((k, v) -> unknownFields(v, path + "." + k, out, seen));
      return;
    }
    if (!(o instanceof KubernetesResource)
        && !(o instanceof IntOrString)
        && !(o instanceof Quantity)) {
      return;
    }
    for (Method getter : o.getClass().getMethods()) {
      if (getter.getParameterCount() != 0
          || Modifier.isStatic(getter.getModifiers())
          || !getter.getName().startsWith("get")
          || getter.getDeclaringClass() == Object.class) {
        continue;
      }
      Object value;
      try {
        value = getter.invoke(o);
      } catch (IllegalAccessException | InvocationTargetException e) {
        continue;
      }
      if (getter.getName().equals("getAdditionalProperties")) {
        if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
          extra.keySet().forEach(k -> out.add(path + "." + k));
        }
      } else {
        unknownFields(value, path + "." + getter.getName().substring(3), out, seen);
      }
    }
  }

  private static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
    List<T> of = objects.stream().filter(type::isInstance).map(type::cast).toList();
    assertEquals(1, of.size(), "one " + type.getSimpleName());
    return of.get(0);
  }

  private static <T extends HasMetadata> T named(
      List<HasMetadata> objects, Class<T> type, String name) {
    return objects.stream()
        .filter(type::isInstance)
        .map(type::cast)
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("a " + type.getSimpleName() + " named " + name));
  }

  private static int port(Container c, String name) {
    return c.getPorts().stream()
        .filter(p -> name.equals(p.getName()))
        .map(ContainerPort::getContainerPort)
        .findFirst()
        .orElseThrow(() -> new AssertionError("a container port named " + name));
  }

  private static int portOf(Container c, IntOrString port) {
    return port.getIntVal() != null ? port.getIntVal() : port(c, port.getStrVal());
  }

  private static List<Integer> servicePorts(Service s) {
    return s.getSpec().getPorts().stream().map(ServicePort::getPort).toList();
  }

  private static EnvVar env(Container c, String name) {
    Optional<EnvVar> v = c.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst();
    return v.orElseThrow(() -> new AssertionError("the container sets " + name));
  }

  private static int intValue(IntOrString v, int of) {
    if (v.getIntVal() != null) {
      return v.getIntVal();
    }
    String s = v.getStrVal();
    return (int) Math.floor(of * Integer.parseInt(s.substring(0, s.length() - 1)) / 100.0);
  }
}
