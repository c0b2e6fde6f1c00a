package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.leasehold.cli.command.ServerCommand;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ServerCommandTest {
  static Cli.Run run(String... args) {
    return Cli.run(args);
  }

  static NodeConfig parse(String... args) {
    CommandLine cl = new CommandLine(new ServerCommand());
    cl.parseArgs(args);
    return ((ServerCommand) cl.getCommand()).build();
  }

  @Test
  void standaloneUsesDefaultPortsAndDataDir() {
    NodeConfig c = parse("--standalone");
    assertEquals("n1", c.id());
    assertEquals(1, c.peers().size());
    assertEquals("127.0.0.1:7400", c.self().clientAddress());
    assertEquals(Path.of("leasehold-data", "n1"), c.dataDir());
    assertEquals(Duration.ofMillis(100), c.tickInterval());
    assertEquals(Duration.ofMillis(400), c.electionTimeoutMin());
    assertEquals(Duration.ofMillis(650), c.electionTimeoutMax());
    assertEquals(Duration.ofSeconds(30), c.grpcKeepaliveInterval());
    assertEquals(Duration.ofSeconds(10), c.grpcKeepaliveTimeout());
  }

  @Test
  void clusterMemberTakesIdPeersAndDurations() {
    NodeConfig c =
        parse(
            "--id",
            "n2",
            "--peers",
            "n1=127.0.0.1:7401:7400,n2=127.0.0.1:7411:7410,n3=127.0.0.1:7421:7420",
            "--data-dir",
            "/var/lib/leasehold",
            "--election-timeout-min",
            "500ms",
            "--election-timeout-max",
            "1500ms",
            "--tick-interval",
            "50ms",
            "--history-max-events",
            "5000",
            "--history-max-age",
            "10m",
            "--watch-queue-limit",
            "300",
            "--watch-progress-interval",
            "500ms",
            "--watch-message-rate",
            "2500",
            "--watch-max-delay",
            "400ms",
            "--grpc-keepalive-interval",
            "1m",
            "--grpc-keepalive-timeout",
            "2s");
    assertEquals("n2", c.id());
    assertEquals(3, c.peers().size());
    assertEquals(7410, c.self().clientPort());
    assertEquals(Path.of("/var/lib/leasehold"), c.dataDir());
    assertEquals(Duration.ofMillis(1500), c.electionTimeoutMax());
    assertEquals(Duration.ofMillis(50), c.tickInterval());
    assertEquals(5000, c.historyMaxEvents());
    assertEquals(Duration.ofMinutes(10), c.historyMaxAge());
    assertEquals(300, c.watchQueueLimit());
    assertEquals(Duration.ofMillis(500), c.watchProgressInterval());
    assertEquals(2500, c.watchMessageRate());
    assertEquals(Duration.ofMillis(400), c.watchMaxDelay());
    assertEquals(Duration.ofMinutes(1), c.grpcKeepaliveInterval());
    assertEquals(Duration.ofSeconds(2), c.grpcKeepaliveTimeout());
  }

  @Test
  void limitsHaveDefaultsAndOptions() {
    assertEquals(NodeConfig.ApiLimits.defaults(), parse("--standalone").limits());
    NodeConfig c =
        parse(
            "--standalone",
            "--max-acquires-per-second",
            "50",
            "--max-watches-per-connection",
            "10",
            "--max-watches-per-identity",
            "20",
            "--max-renew-items",
            "500",
            "--max-request-bytes",
            "2097152",
            "--max-metadata-bytes",
            "4096");
    assertEquals(new NodeConfig.ApiLimits(50, 10, 20, 500, 2 << 20, 4096), c.limits());

    Cli.Run r = run("server", "--standalone", "--max-renew-items", "20000");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: max-renew-items: must be from 1 to 10000, got 20000", r.err().strip());
    r = run("server", "--standalone", "--max-acquires-per-second", "0");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: max-acquires-per-second: must be positive, got 0", r.err().strip());
    r = run("server", "--standalone", "--max-request-bytes", "1000");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertTrue(
        r.err().contains("max-request-bytes: must be from 1048576 (1 MiB) to 33554432 (32 MiB)"),
        r.err());
  }

  @Test
  void badConfigurationIsOneLineAndExitCodeTwo() {
    Cli.Run r = run("server", "--id", "n9", "--peers", "n1=127.0.0.1:7401:7400");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals("leasehold server: id: n9 is not one of the peers [n1]", r.err().strip());

    r = run("server");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertTrue(r.err().contains("--peers is required"), r.err());
    assertFalse(r.err().contains("\tat "), "no stack trace");

    // An election as long as the shortest lease (2 s) would leave its holder no time to renew.
    r = run("server", "--standalone", "--election-timeout-max", "2s");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: election-timeout-max: must be below the minimum lease TTL (2000ms), got 2000ms",
        r.err().strip());

    r = run("server", "--standalone", "--tick-interval", "fast");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertTrue(r.err().contains("'fast' is not a duration"), r.err());

    r = run("server", "--standalone", "--grpc-keepalive-interval", "0s");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: grpc-keepalive-interval: must be positive, got PT0S", r.err().strip());

    r = run("server", "--standalone", "--grpc-keepalive-timeout", "0ms");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: grpc-keepalive-timeout: must be positive, got PT0S", r.err().strip());

    r = run("server", "--standalone", "--watch-max-delay", "2s");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: watch-max-delay: must be from 1ms to the watch progress interval (1000ms), got 2000ms",
        r.err().strip());
  }

  @Test
  void tlsOptionsReachTheNodeConfigurationAndTheirErrorsNameTheOption(@TempDir Path dir)
      throws Exception {
    Path cert = java.nio.file.Files.writeString(dir.resolve("n1.pem"), "x");
    Path key = java.nio.file.Files.writeString(dir.resolve("n1-key.pem"), "x");
    Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "x");
    NodeConfig c =
        parse(
            "--standalone",
            "--metrics-port",
            "off",
            "--tls-cert-file",
            cert.toString(),
            "--tls-key-file",
            key.toString(),
            "--tls-ca-file",
            ca.toString(),
            "--client-cert-auth",
            "--peer-tls-cert-file",
            cert.toString(),
            "--peer-tls-key-file",
            key.toString(),
            "--peer-tls-ca-file",
            ca.toString());
    assertEquals(
        new io.leasehold.server.TlsFiles(cert, key, java.util.Optional.of(ca)),
        c.clientTls().orElseThrow());
    assertEquals(
        new io.leasehold.server.TlsFiles(cert, key, java.util.Optional.of(ca)),
        c.peerTls().orElseThrow());
    assertTrue(c.clientCertAuth());
    assertFalse(
        c.metricsPlaintext(), "the metrics port follows the client port's TLS unless asked");
    assertTrue(
        parse("--standalone", "--metrics-port", "off").clientTls().isEmpty(),
        "plaintext unless asked");
    assertTrue(
        parse(
                "--standalone",
                "--tls-cert-file",
                cert.toString(),
                "--tls-key-file",
                key.toString(),
                "--metrics-plaintext")
            .metricsPlaintext());
    assertTrue(
        parse("--standalone", "--metrics-port", "off").ui(), "the dashboard is on unless asked");
    assertFalse(parse("--standalone", "--metrics-port", "off", "--ui=off").ui());
    assertEquals(LeaseholdCommand.EXIT_USAGE, run("server", "--standalone", "--ui=maybe").exit());

    Cli.Run r = run("server", "--standalone", "--tls-cert-file", cert.toString());
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: tls-cert-file: needs --tls-key-file (the certificate's private key)",
        r.err().strip());
    r =
        run(
            "server",
            "--standalone",
            "--tls-cert-file",
            cert.toString(),
            "--tls-key-file",
            key.toString(),
            "--client-cert-auth");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: client-cert-auth: needs --tls-ca-file (the CA that verifies client certificates)",
        r.err().strip());
    r =
        run(
            "server",
            "--standalone",
            "--peer-tls-cert-file",
            cert.toString(),
            "--peer-tls-key-file",
            dir.resolve("nope.pem").toString(),
            "--peer-tls-ca-file",
            ca.toString());
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: peer-tls-key-file: cannot read "
            + dir.resolve("nope.pem")
            + " (no such file)",
        r.err().strip());
    // Files that exist but do not hold a certificate are found when the node loads them.
    r =
        run(
            "server",
            "--standalone",
            "--metrics-port",
            "off",
            "--data-dir",
            dir.resolve("data").toString(),
            "--tls-cert-file",
            cert.toString(),
            "--tls-key-file",
            key.toString());
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals(
        "leasehold server: tls-cert-file: "
            + cert
            + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        r.err().strip());
  }

  @Test
  void helpListsExitCodes() {
    Cli.Run r = run("--help");
    assertEquals(0, r.exit());
    assertTrue(
        r.out().contains("3   cluster unreachable")
            || r.out().contains("3:cluster unreachable")
            || r.out().contains("cluster unreachable"),
        r.out());
    assertTrue(r.out().contains("server"), r.out());
  }

  /**
   * The server command is node n3 of a cluster; once n3 is removed, Ratis closes its division and
   * the command exits with 75, the code a supervisor restarts on.
   */
  @Test
  void exitsWithRestartCodeWhenRatisClosesItsDivision(@TempDir Path dir) throws Exception {
    try (TestCluster cluster = TestCluster.start(3, dir)) {
      String victim = cluster.followers().get(0).id();
      Path data = cluster.configFor(victim).dataDir();
      String peers =
          cluster.ids().stream()
              .map(id -> cluster.peer(id).toString())
              .collect(Collectors.joining(","));
      cluster.stopNode(victim);
      CompletableFuture<Cli.Run> server =
          CompletableFuture.supplyAsync(
              () ->
                  run(
                      "server",
                      "--id",
                      victim,
                      "--peers",
                      peers,
                      "--data-dir",
                      data.toString(),
                      "--election-timeout-min",
                      "600ms",
                      "--election-timeout-max",
                      "1200ms"));
      String leader = cluster.awaitLeader().id();
      ManagedChannel toVictim =
          ManagedChannelBuilder.forTarget(cluster.peer(victim).clientAddress())
              .usePlaintext()
              .build();
      try {
        TestCluster.await(
            victim + " (the server command) is back and follows",
            Duration.ofSeconds(30),
            () ->
                cluster
                            .leases(leader)
                            .acquire(Requests.acquire("lock/probe", "probe", 60))
                            .getOutcome()
                        == Outcome.GRANTED
                    && ClusterGrpc.newBlockingStub(toVictim)
                        .withDeadlineAfter(2, TimeUnit.SECONDS)
                        .status(StatusRequest.getDefaultInstance())
                        .getLeaderId()
                        .equals(leader));
      } finally {
        toVictim.shutdownNow();
      }
      cluster.cluster(leader).removeMember(RemoveMemberRequest.newBuilder().setId(victim).build());

      Cli.Run r = server.get(60, TimeUnit.SECONDS);
      assertEquals(ServerCommand.EXIT_RESTART, r.exit(), r.err());
      assertTrue(r.err().contains("Ratis closed the Raft division of node " + victim), r.err());
      assertTrue(
          r.err()
              .contains("exiting with code 75 so that a supervisor restarts it from its data dir"),
          r.err());
    }
  }
}
