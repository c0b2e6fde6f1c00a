package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.leasehold.cli.bench.LocalCluster;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.TestCluster;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged jar, run as a real OS process the way the launcher runs it. */
class DistributionIT {
  @TempDir Path dir;
  final List<Process> processes = new ArrayList<>();

  // A -Dtest pattern that matches *IT makes surefire run this class too, before the jar is
  // packaged;
  // only failsafe (after package) sets leasehold.jar.
  @BeforeEach
  void packaged() {
    assumeTrue(
        System.getProperty("leasehold.jar") != null, "run by failsafe, after the package phase");
  }

  @AfterEach
  void killAll() {
    processes.forEach(Process::destroyForcibly);
  }

  /**
   * The child JVM's java.io.tmpdir, under this test's temp dir. RocksDB and lz4-java unpack their
   * native libraries there (15 MB a server) and delete them at a clean exit; a process that {@link
   * #killAll} ends with SIGKILL leaves them, and they would pile up in the machine's /tmp.
   */
  String tmpDirOption() throws IOException {
    return "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("java-tmp"));
  }

  Process server(int clientPort, int peerPort) throws IOException {
    Path jar = Path.of(System.getProperty("leasehold.jar", "target/leasehold.jar"));
    assertTrue(Files.exists(jar), "the distribution jar exists: " + jar.toAbsolutePath());
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                tmpDirOption(),
                "-jar",
                jar.toString(),
                "server",
                "--standalone",
                "--client-port",
                "" + clientPort,
                "--peer-port",
                "" + peerPort,
                "--data-dir",
                dir.resolve("n1").toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("server-" + processes.size() + ".log").toFile())
            .start();
    processes.add(p);
    return p;
  }

  /** The CLI as its own process, finding the cluster through LEASEHOLD_ENDPOINTS. */
  ProcessBuilder cli(int clientPort, String... args) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                tmpDirOption(),
                "-jar",
                System.getProperty("leasehold.jar", "target/leasehold.jar")));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().put("LEASEHOLD_ENDPOINTS", "127.0.0.1:" + clientPort);
    pb.environment().remove("LEASEHOLD_ENDPOINT"); // it would point backup elsewhere
    return pb;
  }

  record Result(int exit, String out, String err) {}

  Result runCli(int clientPort, String... args) throws Exception {
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p =
        cli(clientPort, args).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    processes.add(p);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI exits: " + String.join(" ", args));
    return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  /**
   * The CLI run by util-linux {@code script}, so its stdin and stdout are a terminal (a pty); its
   * stderr goes to {@code errFile}, or with null to the terminal too. out is what the terminal
   * showed.
   */
  Result runCliOnATerminal(int clientPort, Path errFile, String... args) throws Exception {
    StringBuilder shell = new StringBuilder();
    ProcessBuilder pb = cli(clientPort, args);
    for (String word : pb.command()) {
      shell.append(shellQuote(word)).append(' ');
    }
    if (errFile != null) {
      shell.append("2>").append(shellQuote(errFile.toString()));
    }
    Path out = Files.createTempFile(dir, "tty", ".txt");
    Process p =
        pb.command("script", "-qec", shell.toString(), "/dev/null")
            .redirectInput(new File("/dev/null"))
            .redirectOutput(out.toFile())
            .redirectErrorStream(true)
            .start();
    processes.add(p);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI exits: " + String.join(" ", args));
    return new Result(
        p.exitValue(), Files.readString(out), errFile == null ? "" : Files.readString(errFile));
  }

  static String shellQuote(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }

  void awaitServer(int clientPort) {
    TestCluster.await(
        "the packaged server answers the CLI",
        Duration.ofSeconds(60),
        () -> {
          try {
            return runCli(clientPort, "cluster", "status").exit() == 0;
          } catch (Exception e) {
            return false;
          }
        });
  }

  @Test
  void theCliFindsTheClusterThroughTheEnvironmentAndSigtermReleasesAHeldLease() throws Exception {
    int clientPort = freePort();
    server(clientPort, freePort());
    awaitServer(clientPort);

    Result version = runCli(clientPort, "--version");
    assertEquals(0, version.exit(), version.err());
    assertTrue(
        version.out().strip().matches("leasehold \\d+\\.\\d+\\.\\d+\\S*"),
        "the jar's version: " + version.out());

    // The CLI cache's training run (deploy/jvm.sh): every command it runs still exists and gets
    // the answer it is there to record.
    List<String> training =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                tmpDirOption(),
                "-cp",
                System.getProperty("leasehold.jar", "target/leasehold.jar"),
                "io.leasehold.cli.CliTraining",
                "127.0.0.1:" + clientPort));
    Process trainingRun = new ProcessBuilder(training).redirectErrorStream(true).start();
    processes.add(trainingRun);
    String trained = new String(trainingRun.getInputStream().readAllBytes());
    assertTrue(trainingRun.waitFor(60, TimeUnit.SECONDS), "the training run ends");
    assertEquals(0, trainingRun.exitValue(), trained);
    for (String line : trained.lines().toList()) {
      String[] codeAndCall = line.split("\t", 2);
      String call = codeAndCall[1];
      int expected = LeaseholdCommand.EXIT_OK;
      if (call.contains("--holder other") || call.endsWith("lease get training/none")) {
        expected = LeaseholdCommand.EXIT_FAILED;
      } else if (call.endsWith("lease get")) {
        expected = LeaseholdCommand.EXIT_USAGE;
      } else if (call.startsWith("--endpoints 127.0.0.1:1 ")) {
        expected = LeaseholdCommand.EXIT_UNREACHABLE;
      }
      assertEquals(expected, Integer.parseInt(codeAndCall[0]), line + "\n" + trained);
    }

    Path seen = dir.resolve("seen.txt");
    Result lock =
        runCli(
            clientPort,
            "lock",
            "lock/e2e",
            "--",
            "sh",
            "-c",
            "echo \"$LEASEHOLD_LEASE $LEASEHOLD_TOKEN\" > \"$1\"; exit 5",
            "sh",
            seen.toString());
    assertEquals(5, lock.exit(), lock.err());
    assertTrue(Files.readString(seen).startsWith("lock/e2e "), Files.readString(seen));

    Result backup = runCli(clientPort, "backup", dir.resolve("backup").toString());
    assertEquals(
        0, backup.exit(), "backup finds the node through LEASEHOLD_ENDPOINTS too: " + backup.err());
    assertTrue(backup.out().startsWith("backup of node n1 "), backup.out());

    Path holdErr = dir.resolve("hold-err.txt");
    Process hold =
        cli(clientPort, "lease", "acquire", "hold/e2e", "--ttl", "3s", "--hold", "-o", "json")
            .redirectOutput(dir.resolve("hold-out.txt").toFile())
            .redirectError(holdErr.toFile())
            .start();
    processes.add(hold);
    TestCluster.await(
        "the lease is held",
        Duration.ofSeconds(60),
        () -> {
          try {
            return Files.readString(holdErr).contains("holding hold/e2e");
          } catch (IOException e) {
            return false;
          }
        });
    hold.destroy(); // SIGTERM, as Ctrl-C would: the lease is released, not left to expire
    assertTrue(hold.waitFor(30, TimeUnit.SECONDS), "acquire --hold exits on SIGTERM");
    Result history = runCli(clientPort, "lease", "history", "hold/e2e", "-o", "json");
    assertEquals(0, history.exit(), history.err());
    assertTrue(history.out().contains("\"reason\": \"RELEASED\""), history.out());
  }

  @Test
  void waitProgressRewritesItsLineOnlyWhenStderrIsATerminal() throws Exception {
    assumeTrue(
        Files.isExecutable(Path.of("/usr/bin/script")), "util-linux script makes a terminal");
    int clientPort = freePort();
    server(clientPort, freePort());
    awaitServer(clientPort);
    Result held =
        runCli(clientPort, "lease", "acquire", "lock/tty", "--ttl", "1m", "--holder", "other-job");
    assertEquals(0, held.exit(), held.err());

    // stdin and stdout are the terminal (so System.console() is there), stderr a file: lines, no
    // escape codes.
    Path errFile = dir.resolve("tty-err.txt");
    Result toFile =
        runCliOnATerminal(clientPort, errFile, "lock", "lock/tty", "--wait", "2s", "--", "true");
    assertEquals(1, toFile.exit(), toFile.toString());
    assertTrue(
        toFile.err().startsWith("waiting for lock/tty: held by other-job (token "),
        toFile.toString());
    assertFalse(toFile.err().contains("\033"), "no escape codes in a file: " + toFile);

    // Everything on the terminal: the line is rewritten in place.
    Result onTerminal =
        runCliOnATerminal(clientPort, null, "lock", "lock/tty", "--wait", "2s", "--", "true");
    assertEquals(1, onTerminal.exit(), onTerminal.toString());
    assertTrue(
        onTerminal.out().contains("\r\033[Kwaiting for lock/tty: held by other-job (token "),
        onTerminal.toString());
  }

  @Test
  void benchFailoverKillsTheLeaderOfAClusterOfItsOwnAndLosesNoHeldLease() throws Exception {
    ProcessBuilder pb =
        cli(
            freePort(),
            "bench",
            "failover",
            "--kills",
            "1",
            "--interval",
            "2s",
            "--leases",
            "5",
            "--ttl",
            "15s",
            "--dir",
            dir.resolve("failover").toString(),
            "-o",
            "json");
    // The nodes it starts take the launcher's flags from here, and unpack native libraries under
    // this test's dir.
    pb.environment()
        .put("LEASEHOLD_JAVA_OPTS", LocalCluster.LAUNCHER_JVM_FLAGS + " " + tmpDirOption());
    Path out = dir.resolve("failover-out.txt");
    Path err = dir.resolve("failover-err.txt");
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    processes.add(p);
    assertTrue(p.waitFor(240, TimeUnit.SECONDS), "bench failover finishes");
    assertEquals(0, p.exitValue(), Files.readString(err));
    JsonObject r = JsonParser.parseString(Files.readString(out)).getAsJsonObject();
    JsonObject results = r.getAsJsonObject("results");
    assertEquals(0, results.get("leases_lost").getAsLong(), r.toString());
    assertEquals(1, results.getAsJsonArray("kill_to_acquire_ms").size(), r.toString());
    double recovery = results.get("median_kill_to_acquire_ms").getAsDouble();
    assertTrue(recovery > 0 && recovery < 30_000, "an acquisition succeeded after the kill: " + r);
    assertTrue(
        Files.readString(dir.resolve("failover").resolve("n1.log")).contains("started"),
        "the nodes ran from --dir");
  }

  static int freePort() throws IOException {
    return TestCluster.freePorts(1)[0]; // below the ephemeral range, as for in-JVM clusters
  }

  @Test
  void standaloneServerServesLeasesAndKeepsThemAcrossARestart() throws Exception {
    int clientPort = freePort();
    int peerPort = freePort();
    Process first = server(clientPort, peerPort);
    ManagedChannel channel =
        ManagedChannelBuilder.forAddress("127.0.0.1", clientPort).usePlaintext().build();
    try {
      LeasesGrpc.LeasesBlockingStub leases = LeasesGrpc.newBlockingStub(channel);
      AcquireRequest acquire =
          AcquireRequest.newBuilder()
              .setName("lock/e2e")
              .setHolder("runner-1")
              .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(3600))
              .build();
      AcquireResponse granted =
          TestCluster.eventually(
              "the packaged server answers",
              Duration.ofSeconds(60),
              () ->
                  java.util.Optional.of(
                      leases.withDeadlineAfter(5, TimeUnit.SECONDS).acquire(acquire)));
      assertEquals(Outcome.GRANTED, granted.getOutcome());
      String log = Files.readString(dir.resolve("server-0.log"));
      assertTrue(log.contains("leasehold node n1: clients on 127.0.0.1:" + clientPort), log);

      first.destroy(); // SIGTERM: the shutdown hook closes the node cleanly
      assertTrue(first.waitFor(30, TimeUnit.SECONDS), "the server exits on SIGTERM");
      assertEquals(143, first.exitValue(), "killed by SIGTERM after a clean shutdown");

      server(clientPort, peerPort);
      GetResponse after =
          TestCluster.eventually(
              "the restarted server answers",
              Duration.ofSeconds(60),
              () ->
                  java.util.Optional.of(
                      leases
                          .withDeadlineAfter(5, TimeUnit.SECONDS)
                          .get(GetRequest.newBuilder().setName("lock/e2e").build())));
      assertTrue(after.getFound(), "the lease survives a restart from the data dir");
      assertEquals(granted.getLease().getToken(), after.getLease().getToken());
    } finally {
      channel.shutdownNow();
    }
  }
}
