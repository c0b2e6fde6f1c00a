package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.Volume;
import io.leasehold.client.EventType;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.NodeStatus;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import io.leasehold.jepsen.checker.ExclusionChecker;
import io.leasehold.jepsen.checker.FencingChecker;
import io.leasehold.jepsen.checker.Verdict;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.workload.FencedLockWorkload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.lifecycle.Startables;

/**
 * A three-node cluster of containers run as an operator runs one: each node on a named volume of
 * its own, on one user-defined network, published on fixed host ports that survive a container's
 * replacement. The SDK works from the host through those ports. In order: the leader's container
 * killed and started again from its volume; the leader cut off with Docker's own network disconnect
 * under the fault suite's fenced-lock workload, judged by its fencing and exclusion checkers; a
 * rolling upgrade to a newly built image, one container at a time, with a client renewing and
 * writing throughout and losing nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ContainerClusterIT {
  static final List<String> IDS = List.of("n1", "n2", "n3");
  static final String PEERS = "n1=n1:7401:7400,n2=n2:7401:7400,n3=n3:7401:7400";

  final String run =
      "leasehold-it-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
  final Map<String, GenericContainer<?>> nodes = new LinkedHashMap<>();
  final Map<String, Integer> clientPorts = new LinkedHashMap<>();
  final Map<String, Integer> metricsPorts = new LinkedHashMap<>();
  DockerClient docker;
  Network network;
  String image;
  LeaseholdClient client;

  @BeforeAll
  void start() throws Exception {
    Containers.assumeDocker(ContainerClusterIT.class);
    docker = DockerClientFactory.instance().client();
    image = Containers.nodeImage("leasehold-it", Map.of());
    network = Network.newNetwork();
    for (String id : IDS) {
      clientPorts.put(id, LocalProcesses.freePort());
      metricsPorts.put(id, LocalProcesses.freePort());
      nodes.put(id, node(id, image));
    }
    Startables.deepStart(nodes.values()).get(5, TimeUnit.MINUTES);
    client = client("container-test");
  }

  @AfterAll
  void stop() {
    if (client != null) {
      client.close();
    }
    nodes.values().forEach(GenericContainer::stop);
    if (network != null) {
      network.close();
    }
    if (docker != null) {
      for (String id : IDS) {
        try {
          docker.removeVolumeCmd(volume(id)).exec();
        } catch (RuntimeException alreadyGone) {
          // never made: the test was skipped or failed before
        }
      }
    }
  }

  /**
   * A node's container: its own named volume at /data, its fixed host ports, the alias its peers
   * know.
   */
  GenericContainer<?> node(String id, String nodeImage) {
    return new GenericContainer<>(nodeImage)
        .withNetwork(network)
        .withNetworkAliases(id)
        .withEnv("LEASEHOLD_PEERS", PEERS)
        .withEnv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Xmx256m")
        .withCommand(Containers.serverCommand(id))
        .withExposedPorts(7400, 7402)
        .withCreateContainerCmdModifier(
            cmd -> {
              cmd.withName(run + "-" + id);
              cmd.getHostConfig()
                  .withBinds(new Bind(volume(id), new Volume("/data")))
                  .withPortBindings(
                      new PortBinding(
                          Ports.Binding.bindIpAndPort("127.0.0.1", clientPorts.get(id)),
                          ExposedPort.tcp(7400)),
                      new PortBinding(
                          Ports.Binding.bindIpAndPort("127.0.0.1", metricsPorts.get(id)),
                          ExposedPort.tcp(7402)));
            })
        .withLogConsumer(
            new Slf4jLogConsumer(LoggerFactory.getLogger("container." + id))
                .withSeparateOutputStreams())
        .waitingFor(
            Wait.forHttp("/healthz")
                .forPort(7402)
                .forStatusCode(200)
                .withStartupTimeout(Duration.ofMinutes(3)));
  }

  String volume(String id) {
    return run + "-" + id + "-data";
  }

  LeaseholdClient client(String holder) {
    return LeaseholdClient.builder()
        .endpoints(IDS.stream().map(id -> "127.0.0.1:" + clientPorts.get(id)).toList())
        .holder(holder)
        // The members' own addresses (n1:7400...) are container names the host cannot resolve.
        .discoverMembers(false)
        .requestTimeout(Duration.ofSeconds(30))
        .build();
  }

  String leader() throws InterruptedException {
    String[] leader = {null};
    Containers.await(
        "a leader",
        Duration.ofSeconds(60),
        () -> {
          leader[0] = status().leaderId().orElse(null);
          return leader[0] != null;
        });
    return leader[0];
  }

  NodeStatus status() {
    try {
      return client.cluster().status().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Every node healthy by Docker's own check and caught up with the leader's commit index. */
  void awaitAllCaughtUp() throws Exception {
    for (String id : IDS) {
      Containers.awaitDockerHealthy(id, nodes.get(id).getContainerId(), Duration.ofMinutes(2));
    }
    long commit = status().commitIndex();
    for (String id : IDS) {
      try (LeaseholdClient only =
          LeaseholdClient.builder()
              .endpoints("127.0.0.1:" + clientPorts.get(id))
              .discoverMembers(false)
              .requestTimeout(Duration.ofSeconds(10))
              .build()) {
        Containers.await(
            id + " applied up to " + commit,
            Duration.ofSeconds(60),
            () -> only.cluster().status().join().appliedIndex() >= commit);
      }
    }
  }

  @Test
  @Order(1)
  void theLeadersContainerKilledAndStartedAgainFromItsVolumeLosesNothing() throws Exception {
    Map<String, Long> durable = new LinkedHashMap<>();
    for (int i = 0; i < 20; i++) {
      Lease l =
          client
              .blocking()
              .acquire("durable/" + i, LeaseOptions.defaults().withTtl(Duration.ofMinutes(5)));
      durable.put(l.name(), l.token());
    }
    Lease held =
        client
            .blocking()
            .acquire("lock/kill", LeaseOptions.defaults().withTtl(Duration.ofSeconds(8)));
    String leader = leader();
    GenericContainer<?> killed = nodes.get(leader);
    docker.killContainerCmd(killed.getContainerId()).exec(); // SIGKILL: no clean shutdown

    Containers.await(
        "a new leader among the survivors",
        Duration.ofSeconds(60),
        () -> status().leaderId().filter(l -> !l.equals(leader)).isPresent());
    Lease after =
        client
            .blocking()
            .acquire("lock/after-kill", LeaseOptions.defaults().withTtl(Duration.ofSeconds(30)));
    assertTrue(after.token() > held.token(), "tokens keep increasing across leaders");

    // The same container (its volume, its ports) started again, as `docker start` or a restart
    // policy does.
    docker.startContainerCmd(killed.getContainerId()).exec();
    awaitAllCaughtUp();
    try (LeaseholdClient restarted =
        LeaseholdClient.builder()
            .endpoints("127.0.0.1:" + clientPorts.get(leader))
            .discoverMembers(false)
            .requestTimeout(Duration.ofSeconds(30))
            .build()) {
      for (Map.Entry<String, Long> e : durable.entrySet()) {
        assertEquals(
            e.getValue(),
            restarted.blocking().get(e.getKey()).orElseThrow().token(),
            e.getKey() + " read through the restarted node");
      }
    }
    assertEquals(LeaseState.HELD, held.state(), "the lease held through the kill was kept alive");
    assertEquals(held.token(), client.blocking().get("lock/kill").orElseThrow().token());
    held.release().get(30, TimeUnit.SECONDS);
    after.release().get(30, TimeUnit.SECONDS);
  }

  @Test
  @Order(2)
  void aLeaderCutOffByDockersNetworkDisconnectKeepsFencingAndExclusion() throws Exception {
    Recorder recorder = new Recorder();
    FencedLockWorkload workload = new FencedLockWorkload(4, 2);
    workload.start(
        recorder,
        holder ->
            LeaseholdClient.builder()
                .endpoints(IDS.stream().map(id -> "127.0.0.1:" + clientPorts.get(id)).toList())
                .holder(holder)
                .discoverMembers(false)
                .requestTimeout(Duration.ofSeconds(5))
                .attemptTimeout(Duration.ofSeconds(2))
                .releaseOnClose(false)
                .build());
    String leader;
    try {
      Containers.await(
          "the workload under way",
          Duration.ofSeconds(60),
          () -> recorder.snapshot().validities().size() >= 3);
      leader = leader();
      String container = nodes.get(leader).getContainerId();
      docker
          .disconnectFromNetworkCmd()
          .withNetworkId(network.getId())
          .withContainerId(container)
          .withForce(true)
          .exec();
      Containers.await(
          "a leader elected without " + leader,
          Duration.ofSeconds(60),
          () -> status().leaderId().filter(l -> !l.equals(leader)).isPresent());
      int before = recorder.snapshot().validities().size();
      Containers.await(
          "the workload goes on with the majority",
          Duration.ofSeconds(60),
          () -> recorder.snapshot().validities().size() >= before + 3);
      docker
          .connectToNetworkCmd()
          .withNetworkId(network.getId())
          .withContainerId(container)
          .withContainerNetwork(new ContainerNetwork().withAliases(leader))
          .exec();
      awaitAllCaughtUp();
      int healed = recorder.snapshot().validities().size();
      Containers.await(
          "the workload goes on after the heal",
          Duration.ofSeconds(60),
          () -> recorder.snapshot().validities().size() >= healed + 3);
    } finally {
      workload.stop();
    }
    History history = recorder.snapshot();
    assertFalse(history.registerWrites().isEmpty(), "the fenced register was written");
    for (Verdict v :
        List.of(new FencingChecker().check(history), new ExclusionChecker().check(history))) {
      LoggerFactory.getLogger(ContainerClusterIT.class).info("{}", v);
      assertEquals(Verdict.Result.VALID, v.result(), v.toString());
    }
  }

  @Test
  @Order(3)
  void aRollingUpgradeToANewImageLosesNothingWhileAClientRenewsAndWrites() throws Exception {
    String next = Containers.nodeImage("leasehold-it-next", Map.of("io.leasehold.it.build", run));
    String oldId = docker.inspectImageCmd(image).exec().getId();
    String nextId = docker.inspectImageCmd(next).exec().getId();
    assertNotEquals(oldId, nextId, "the upgrade's image is a new build");

    Lease held =
        client
            .blocking()
            .acquire("lock/rolling", LeaseOptions.defaults().withTtl(Duration.ofSeconds(6)));
    List<LeaseState> states = new CopyOnWriteArrayList<>();
    // Each transition with the step it happened in and when, so a failure says what caused it.
    List<String> transitions = new CopyOnWriteArrayList<>();
    AtomicReference<String> step = new AtomicReference<>("before the upgrade");
    long began = System.nanoTime();
    held.addListener(
        t -> {
          states.add(t.to());
          transitions.add(
              String.format(
                  "%s at %d ms, %s", t, (System.nanoTime() - began) / 1_000_000, step.get()));
        });
    List<WatchEvent> events = new CopyOnWriteArrayList<>();
    Watch watch =
        client.watch("rolling/", client.blocking().list("rolling/").revision() + 1, events::add);
    // A writer acquiring a new name every few hundred milliseconds; what was acknowledged must
    // survive.
    Map<String, Long> acknowledged = new ConcurrentHashMap<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    Thread writer =
        new Thread(
            () -> {
              for (int i = 0; writing.get(); i++) {
                try {
                  Lease l =
                      client
                          .acquire(
                              "rolling/" + i,
                              LeaseOptions.defaults().withTtl(Duration.ofMinutes(5)))
                          .get(30, TimeUnit.SECONDS);
                  acknowledged.put(l.name(), l.token());
                  TimeUnit.MILLISECONDS.sleep(200);
                } catch (InterruptedException e) {
                  return;
                } catch (Exception unknown) {
                  // Not acknowledged: it may or may not have been applied, and is not counted
                  // either way.
                }
              }
            },
            "rolling-writer");
    writer.start();
    try {
      // Followers first, the leader last: one leader change, as an operator upgrades.
      String leader = leader();
      List<String> order = new ArrayList<>(IDS);
      order.remove(leader);
      order.add(leader);
      for (String id : order) {
        step.set("stopping " + id + " at " + (System.nanoTime() - began) / 1_000_000 + " ms");
        GenericContainer<?> old = nodes.get(id);
        docker
            .stopContainerCmd(old.getContainerId())
            .withTimeout(30)
            .exec(); // SIGTERM: a clean stop
        docker.removeContainerCmd(old.getContainerId()).exec(); // its named volume stays
        GenericContainer<?> upgraded = node(id, next);
        nodes.put(id, upgraded);
        step.set("starting " + id + " at " + (System.nanoTime() - began) / 1_000_000 + " ms");
        upgraded.start();
        step.set("catching up " + id + " at " + (System.nanoTime() - began) / 1_000_000 + " ms");
        awaitAllCaughtUp();
        step.set("upgraded " + id + " at " + (System.nanoTime() - began) / 1_000_000 + " ms");
        int seen = acknowledged.size();
        Containers.await(
            "writes go on after " + id + " was upgraded",
            Duration.ofSeconds(60),
            () -> acknowledged.size() > seen);
      }
    } finally {
      writing.set(false);
      writer.join(TimeUnit.SECONDS.toMillis(60));
    }
    for (String id : IDS) {
      assertEquals(
          nextId,
          docker.inspectContainerCmd(nodes.get(id).getContainerId()).exec().getImageId(),
          id + " runs the new image");
    }
    assertTrue(
        acknowledged.size() >= 3, "writes were acknowledged throughout: " + acknowledged.size());
    for (Map.Entry<String, Long> e : acknowledged.entrySet()) {
      Optional<Long> token = client.blocking().get(e.getKey()).map(l -> l.token());
      assertEquals(Optional.of(e.getValue()), token, e.getKey() + " acknowledged and kept");
    }
    long lastRevision = client.blocking().list("rolling/").revision();
    Containers.await(
        "the watch delivered every write",
        Duration.ofSeconds(60),
        () -> watch.revision() >= lastRevision);
    for (String name : acknowledged.keySet()) {
      assertTrue(
          events.stream().anyMatch(e -> e.type() == EventType.ACQUIRED && e.name().equals(name)),
          "the watch saw " + name);
    }
    watch.close();
    LoggerFactory.getLogger(ContainerClusterIT.class)
        .info("the renewed lease through the upgrade: {}", transitions);
    assertFalse(
        states.contains(LeaseState.LOST), "the renewed lease was never lost: " + transitions);
    assertEquals(
        held.token(),
        client.blocking().get("lock/rolling").orElseThrow().token(),
        "the same lease throughout");
    held.release().get(30, TimeUnit.SECONDS);
  }
}
