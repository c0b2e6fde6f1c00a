package io.leasehold.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class NodeConfigTest {
  private static String error(Runnable r) {
    return assertThrows(IllegalArgumentException.class, r::run).getMessage();
  }

  @Test
  void parsesPeerListWithIpv4AndIpv6Hosts() {
    NodeConfig c =
        NodeConfig.builder()
            .id("n2")
            .dataDir(Path.of("d"))
            .peers("n1=10.0.0.1:7401:7400, n2=[::1]:7411:7410,n3=node-3.example:7421:7420")
            .build();
    assertEquals(3, c.peers().size());
    assertEquals(new Peer("n2", "::1", 7411, 7410), c.self());
    assertEquals("[::1]:7410", c.self().clientAddress());
    assertEquals("::1", c.bindHost());
  }

  @Test
  void leaseGroupsAreOneByDefaultAtMostSixteenAndAlsoForAJoiningNode() {
    assertEquals(1, NodeConfig.standalone().dataDir(Path.of("d")).build().leaseGroups());
    assertEquals(
        16, NodeConfig.standalone().dataDir(Path.of("d")).leaseGroups(16).build().leaseGroups());
    assertEquals(
        "lease-groups: must be between 1 and 16, got 0",
        error(() -> NodeConfig.standalone().dataDir(Path.of("d")).leaseGroups(0).build()));
    assertEquals(
        "lease-groups: must be between 1 and 16, got 17",
        error(() -> NodeConfig.standalone().dataDir(Path.of("d")).leaseGroups(17).build()));
    // A joining node hosts the lease groups too, empty until a member adds it to each.
    assertEquals(
        3,
        NodeConfig.builder()
            .id("n4")
            .dataDir(Path.of("d"))
            .peers("n4=127.0.0.1:7431:7430")
            .join(true)
            .leaseGroups(3)
            .build()
            .leaseGroups());
  }

  @Test
  void aLeaseGroupSizeIsAnOddNumberOfThePeersAndNeedsLeaseGroups() {
    java.util.function.IntFunction<NodeConfig.Builder> ofFive =
        size ->
            NodeConfig.builder()
                .id("n1")
                .dataDir(Path.of("d"))
                .peers(
                    "n1=127.0.0.1:7401:7400,n2=127.0.0.1:7411:7410,n3=127.0.0.1:7421:7420,"
                        + "n4=127.0.0.1:7431:7430,n5=127.0.0.1:7441:7440")
                .leaseGroupSize(size);
    assertEquals(
        0, NodeConfig.standalone().dataDir(Path.of("d")).build().leaseGroupSize(), "every peer");
    assertEquals(3, ofFive.apply(3).leaseGroups(2).build().leaseGroupSize());
    for (int size : new int[] {1, 2, 4, 7}) {
      assertEquals(
          "lease-group-size: must be 0 (every peer) or an odd number from 3 up to the number of"
              + " peers (5), got "
              + size,
          error(() -> ofFive.apply(size).leaseGroups(2).build()));
    }
    assertEquals(
        "lease-group-size: needs --lease-groups above 1, got --lease-groups 1",
        error(() -> ofFive.apply(3).build()));
    // A joining node names only itself: the size is the cluster's.
    assertEquals(
        3,
        NodeConfig.builder()
            .id("n6")
            .dataDir(Path.of("d"))
            .peers("n6=127.0.0.1:7451:7450")
            .join(true)
            .leaseGroups(2)
            .leaseGroupSize(3)
            .build()
            .leaseGroupSize());
  }

  @Test
  void standaloneDefaultsToOneLoopbackNode() {
    NodeConfig c = NodeConfig.standalone().dataDir(Path.of("d")).build();
    assertEquals("n1", c.id());
    assertEquals("127.0.0.1:" + NodeConfig.DEFAULT_CLIENT_PORT, c.self().clientAddress());
  }

  @Test
  void electionTimeoutsDefaultWellBelowTheMinimumTtlWhichTheMaxMustNotReach() {
    NodeConfig c = NodeConfig.standalone().dataDir(Path.of("d")).build();
    assertEquals(Duration.ofMillis(400), c.electionTimeoutMin());
    assertEquals(Duration.ofMillis(650), c.electionTimeoutMax());
    // A follower may notice a silent leader only after about twice the max (it checks once per
    // timeout); by default even that fits in the minimum TTL.
    assertTrue(
        c.electionTimeoutMax()
                .multipliedBy(2)
                .compareTo(io.leasehold.statemachine.core.Limits.MIN_TTL)
            <= 0);
    // Equal to the minimum TTL is refused too: an election as long as the shortest lease leaves
    // its holder no time to renew.
    assertEquals(
        "election-timeout-max: must be below the minimum lease TTL (2000ms), got 2000ms",
        error(
            () ->
                NodeConfig.standalone()
                    .dataDir(Path.of("d"))
                    .electionTimeout(Duration.ofMillis(1000), Duration.ofMillis(2000))
                    .build()));
    assertEquals(
        Duration.ofMillis(1999),
        NodeConfig.standalone()
            .dataDir(Path.of("d"))
            .electionTimeout(Duration.ofMillis(1000), Duration.ofMillis(1999))
            .build()
            .electionTimeoutMax());
  }

  @Test
  void errorsNameTheOption() {
    assertTrue(
        error(() -> NodeConfig.builder().dataDir(Path.of("d")).peers("n1=h:1:2").build())
            .startsWith("id:"));
    assertTrue(
        error(() -> NodeConfig.builder().id("n9").dataDir(Path.of("d")).peers("n1=h:1:2").build())
            .startsWith("id: n9 is not one of the peers"));
    assertTrue(
        error(() -> NodeConfig.builder().id("n1").peers("n1=h:1:2").build())
            .startsWith("data-dir:"));
    assertTrue(error(() -> Peer.parse("n1=h:1")).contains("expected id=host:peerPort:clientPort"));
    assertTrue(error(() -> Peer.parse("n1=h:x:2")).contains("peer port must be a number"));
    assertTrue(error(() -> Peer.parse("n1=h:1:70000")).contains("client port must be 1-65535"));
    assertTrue(error(() -> Peer.parse("bad id=h:1:2")).startsWith("peer id:"));
    assertTrue(
        error(
                () ->
                    NodeConfig.builder()
                        .id("n1")
                        .dataDir(Path.of("d"))
                        .peers("n1=h:1:2,n1=g:3:4")
                        .build())
            .contains("appears twice"));
    assertTrue(
        error(
                () ->
                    NodeConfig.builder()
                        .id("n1")
                        .dataDir(Path.of("d"))
                        .peers("n1=h:1:2,n2=h:1:4")
                        .build())
            .contains("used twice"));
    assertTrue(
        error(
                () ->
                    NodeConfig.standalone()
                        .dataDir(Path.of("d"))
                        .electionTimeout(Duration.ofSeconds(2), Duration.ofSeconds(1))
                        .build())
            .startsWith("election-timeout:"));
    assertTrue(
        error(
                () ->
                    NodeConfig.standalone()
                        .dataDir(Path.of("d"))
                        .electionTimeout(Duration.ofSeconds(1), Duration.ofSeconds(5))
                        .build())
            .startsWith("election-timeout-max: must be below the minimum lease TTL"));
    assertTrue(
        error(
                () ->
                    NodeConfig.standalone()
                        .dataDir(Path.of("d"))
                        .tickInterval(Duration.ZERO)
                        .build())
            .startsWith("tick-interval:"));
    assertEquals(
        "watch-senders: must be 1-256, got 0",
        error(() -> NodeConfig.standalone().dataDir(Path.of("d")).watchSenders(0).build()));
    assertEquals(
        "watch-senders: must be 1-256, got 257",
        error(() -> NodeConfig.standalone().dataDir(Path.of("d")).watchSenders(257).build()));
    assertEquals(
        "watch-max-delay: must be from 1ms to the watch progress interval (1000ms), got 0ms",
        error(
            () ->
                NodeConfig.standalone()
                    .dataDir(Path.of("d"))
                    .watchMaxDelay(Duration.ofNanos(999_999))
                    .build()));
    assertEquals(
        "watch-max-delay: must be from 1ms to the watch progress interval (500ms), got 600ms",
        error(
            () ->
                NodeConfig.standalone()
                    .dataDir(Path.of("d"))
                    .watchProgressInterval(Duration.ofMillis(500))
                    .watchMaxDelay(Duration.ofMillis(600))
                    .build()));
    assertEquals(
        "grpc-keepalive-interval: must be positive, got PT0S",
        error(
            () ->
                NodeConfig.standalone()
                    .dataDir(Path.of("d"))
                    .grpcKeepaliveInterval(Duration.ZERO)
                    .build()));
    assertEquals(
        "grpc-keepalive-timeout: must be positive, got PT-1S",
        error(
            () ->
                NodeConfig.standalone()
                    .dataDir(Path.of("d"))
                    .grpcKeepaliveTimeout(Duration.ofSeconds(-1))
                    .build()));
  }

  @Test
  void grpcKeepaliveDefaultsTo30sPingsAnd10sForTheirAck() {
    NodeConfig c = NodeConfig.standalone().dataDir(Path.of("d")).build();
    assertEquals(Duration.ofSeconds(30), c.grpcKeepaliveInterval());
    assertEquals(Duration.ofSeconds(10), c.grpcKeepaliveTimeout());
  }

  @Test
  void watchMaxDelayDefaultsTo100msAndTakesTheProgressIntervalAsItsCeiling() {
    assertEquals(
        Duration.ofMillis(100),
        NodeConfig.standalone().dataDir(Path.of("d")).build().watchMaxDelay());
    assertEquals(
        Duration.ofSeconds(1),
        NodeConfig.standalone()
            .dataDir(Path.of("d"))
            .watchMaxDelay(Duration.ofSeconds(1))
            .build()
            .watchMaxDelay());
  }

  @Test
  void watchSendersDefaultToHalfTheCoresAndAtLeastOne() {
    int cores = Runtime.getRuntime().availableProcessors();
    assertEquals(
        Math.max(1, cores / 2),
        NodeConfig.standalone().dataDir(Path.of("d")).build().watchSenders());
    assertEquals(
        3, NodeConfig.standalone().dataDir(Path.of("d")).watchSenders(3).build().watchSenders());
  }

  @Test
  void tlsOptionsComeInTheirPairsAndTheirFilesMustBeReadable(
      @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Path cert = java.nio.file.Files.writeString(dir.resolve("n1.pem"), "x");
    Path key = java.nio.file.Files.writeString(dir.resolve("n1-key.pem"), "x");
    Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "x");
    Path missing = dir.resolve("missing.pem");
    java.util.function.Supplier<NodeConfig.Builder> base =
        () -> NodeConfig.standalone().dataDir(Path.of("d"));
    assertEquals(
        "tls-cert-file: needs --tls-key-file (the certificate's private key)",
        error(() -> base.get().tlsCertFile(cert).build()));
    assertEquals(
        "tls-key-file: needs --tls-cert-file (the certificate it belongs to)",
        error(() -> base.get().tlsKeyFile(key).build()));
    assertTrue(
        error(() -> base.get().tlsCaFile(ca).build())
            .startsWith("tls-ca-file: needs --tls-cert-file and --tls-key-file"));
    assertEquals(
        "client-cert-auth: needs --tls-ca-file (the CA that verifies client certificates)",
        error(() -> base.get().tlsCertFile(cert).tlsKeyFile(key).clientCertAuth(true).build()));
    assertEquals(
        "tls-key-file: cannot read " + missing + " (no such file)",
        error(() -> base.get().tlsCertFile(cert).tlsKeyFile(missing).build()));
    assertEquals(
        "tls-ca-file: cannot read " + dir + " (not a readable file)",
        error(() -> base.get().tlsCertFile(cert).tlsKeyFile(key).tlsCaFile(dir).build()));
    assertTrue(
        error(() -> base.get().peerTlsKeyFile(key).peerTlsCaFile(ca).build())
            .startsWith("peer-tls-cert-file: required"));
    assertTrue(
        error(() -> base.get().peerTlsCertFile(cert).peerTlsCaFile(ca).build())
            .startsWith("peer-tls-key-file: required"));
    assertEquals(
        "peer-tls-ca-file: required with --peer-tls-cert-file (peers verify each other's certificates)",
        error(() -> base.get().peerTlsCertFile(cert).peerTlsKeyFile(key).build()));
    assertEquals(
        "peer-tls-cert-file: cannot read " + missing + " (no such file)",
        error(
            () ->
                base.get().peerTlsCertFile(missing).peerTlsKeyFile(key).peerTlsCaFile(ca).build()));

    NodeConfig c =
        base.get()
            .tlsCertFile(cert)
            .tlsKeyFile(key)
            .tlsCaFile(ca)
            .clientCertAuth(true)
            .peerTlsCertFile(cert)
            .peerTlsKeyFile(key)
            .peerTlsCaFile(ca)
            .build();
    assertEquals(new TlsFiles(cert, key, java.util.Optional.of(ca)), c.clientTls().orElseThrow());
    assertEquals(new TlsFiles(cert, key, java.util.Optional.of(ca)), c.peerTls().orElseThrow());
    assertTrue(c.clientCertAuth());
    NodeConfig plain = base.get().build();
    assertTrue(plain.clientTls().isEmpty() && plain.peerTls().isEmpty() && !plain.clientCertAuth());
  }
}
