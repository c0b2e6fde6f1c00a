package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.server.TestCluster;
import io.leasehold.statemachine.core.Limits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code lock NAME -- COMMAND}: a real child process runs while the lease is held. */
class LockCommandTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(1, dir.resolve("cluster"));
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static LeaseholdClient client(String holder) {
    return LeaseholdClient.builder().endpoints(Cli.endpoints(cluster)).holder(holder).build();
  }

  @Test
  void theCommandSeesTokenNameAndHolderAndTheLeaseIsReleasedAfterIt() throws Exception {
    Path seen = dir.resolve("seen.txt");
    Cli.Run r =
        run(
                cluster,
                "lock",
                "lock/env",
                "--holder",
                "job-runner",
                "--",
                "sh",
                "-c",
                "echo \"$LEASEHOLD_LEASE $LEASEHOLD_TOKEN $LEASEHOLD_HOLDER\" > \"$1\"",
                "sh",
                seen.toString())
            .ok();
    String[] words = Files.readString(seen).strip().split(" ");
    assertEquals("lock/env", words[0]);
    assertTrue(Long.parseLong(words[1]) > 0, r.toString());
    assertEquals("job-runner", words[2]);
    run(cluster, "lease", "get", "lock/env").failed(LeaseholdCommand.EXIT_FAILED, "not held");
    String history =
        run(cluster, "lease", "history", "lock/env", "-o", "json")
            .ok()
            .array()
            .get(0)
            .getAsJsonObject()
            .toString();
    assertTrue(history.contains("\"token\":" + words[1]) && history.contains("RELEASED"), history);
  }

  @Test
  void exitsWithTheCommandsExitCode() {
    assertEquals(7, run(cluster, "lock", "lock/code", "--", "sh", "-c", "exit 7").exit());
    assertEquals(0, run(cluster, "lock", "lock/code", "--", "true").exit());
  }

  @Test
  void aCommandThatCannotStartExitsOne() {
    run(cluster, "lock", "lock/nocmd", "--", dir.resolve("no-such-program").toString())
        .failed(LeaseholdCommand.EXIT_FAILED, "cannot run");
  }

  @Test
  void waitsForTheHolderShowingWhoHoldsItThenRuns() throws Exception {
    Path seen = dir.resolve("waited.txt");
    try (LeaseholdClient other = client("other-job")) {
      Lease held =
          other
              .blocking()
              .acquire("lock/wait", LeaseOptions.defaults().withTtl(Duration.ofSeconds(30)));
      Cli.Background lock =
          new Cli.Background(
              Cli.at(
                  cluster,
                  "lock",
                  "lock/wait",
                  "--ttl",
                  "5s",
                  "--",
                  "sh",
                  "-c",
                  "echo $LEASEHOLD_TOKEN > \"$1\"",
                  "sh",
                  seen.toString()));
      lock.awaitErr(
          "waiting for lock/wait: held by other-job (token " + held.token() + "), expires in ",
          seconds(30));
      assertTrue(!Files.exists(seen), "the command does not run while someone else holds the lock");
      held.release().get();
      assertEquals(0, lock.awaitExit(seconds(30)), lock.err());
      assertTrue(lock.err().contains("acquired lock/wait (token "), lock.err());
      assertTrue(
          Long.parseLong(Files.readString(seen).strip()) > held.token(),
          "a later grant has a larger token");
    }
  }

  @Test
  void givesUpAfterWaitWithExitOne() {
    try (LeaseholdClient other = client("other-job-2")) {
      other
          .blocking()
          .tryAcquire("lock/busy", LeaseOptions.defaults().withTtl(Duration.ofSeconds(30)));
      Cli.Run r = run(cluster, "lock", "lock/busy", "--wait", "1s", "--", "true");
      assertEquals(LeaseholdCommand.EXIT_FAILED, r.exit(), r.toString());
      assertTrue(
          r.err()
              .lines()
              .anyMatch(
                  l ->
                      l.startsWith(
                          "leasehold lock: lock/busy: not acquired within 1s; held by other-job")),
          r.err());
    }
  }

  @Test
  void aLostLeaseStopsTheCommandAndExitsOne() throws Exception {
    Path pidFile = dir.resolve("pid.txt");
    Cli.Background lock =
        new Cli.Background(
            Cli.at(
                cluster,
                "lock",
                "lock/lost",
                "--ttl",
                "3s",
                "--kill-grace",
                "5s",
                "--",
                "sh",
                "-c",
                "echo $$ > \"$1\"; exec sleep 600",
                "sh",
                pidFile.toString()));
    TestCluster.await(
        () -> "the command started; err: " + lock.err(),
        seconds(30),
        () -> Files.exists(pidFile) && readPid(pidFile).isPresent());
    long pid = readPid(pidFile).orElseThrow();
    assertTrue(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));

    run(cluster, "lease", "revoke", "lock/lost", "--reason", "test: take it away").ok();
    assertEquals(LeaseholdCommand.EXIT_FAILED, lock.awaitExit(seconds(30)), lock.err());
    assertTrue(lock.err().contains("leasehold lock: lost the lease on lock/lost"), lock.err());
    TestCluster.await(
        "the command was stopped",
        seconds(10),
        () -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
  }

  @Test
  void keepsRenewingTheSameLeaseWhileTheCommandRunsPastItsTtl() throws Exception {
    Duration ttl =
        Limits.MIN_TTL; // the shortest the default policy allows: the test waits only a few of them
    Path stop = dir.resolve("renew-stop");
    // The command runs until the test has seen what it waits for; its own bound (60 s) only keeps a
    // failing test from hanging.
    Cli.Background lock =
        new Cli.Background(
            Cli.at(
                cluster,
                "lock",
                "lock/renew",
                "--ttl",
                ttl.toMillis() + "ms",
                "--holder",
                "long-job",
                "--",
                "sh",
                "-c",
                "i=0; while [ ! -e \"$1\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done",
                "sh",
                stop.toString()));
    try (LeaseholdClient observer = client("observer")) {
      LeaseInfo first =
          TestCluster.eventually(
              "lock/renew is held; err: " + lock.err(),
              seconds(30),
              () -> observer.blocking().get("lock/renew"));
      assertEquals("long-job", first.holder());
      long start = System.nanoTime();
      List<String> changes = new ArrayList<>();
      long[] renewCount = {first.renewCount()};
      TestCluster.await(
          () ->
              "renewed past twice its TTL; renewCount "
                  + renewCount[0]
                  + ", changes "
                  + changes
                  + ", err: "
                  + lock.err(),
          seconds(30),
          () -> {
            Optional<LeaseInfo> now = observer.blocking().get("lock/renew");
            if (now.isEmpty() || now.get().token() != first.token()) {
              changes.add(now.map(l -> "token " + l.token()).orElse("not held"));
              return false;
            }
            renewCount[0] = now.get().renewCount();
            return Duration.ofNanos(System.nanoTime() - start).compareTo(ttl.multipliedBy(2)) > 0
                && renewCount[0] >= first.renewCount() + 3;
          });
      assertEquals(List.of(), changes, "the lease was held with the same token all along");
      assertTrue(lock.exit.getNow(null) == null, "the command is still running: " + lock.err());

      Files.createFile(stop);
      assertEquals(0, lock.awaitExit(seconds(30)), lock.err());
      JsonArray history = run(cluster, "lease", "history", "lock/renew", "-o", "json").ok().array();
      assertEquals(
          1, history.size(), "one lease from start to end, none expired on the way: " + history);
      JsonObject ended = history.get(0).getAsJsonObject();
      assertEquals(first.token(), ended.get("token").getAsLong());
      assertEquals("RELEASED", ended.get("reason").getAsString());
      assertTrue(ended.get("heldMs").getAsLong() > 2 * ttl.toMillis(), ended.toString());
      assertTrue(ended.get("renewCount").getAsLong() >= first.renewCount() + 3, ended.toString());
    }
  }

  private static Optional<Long> readPid(Path f) {
    try {
      String s = Files.readString(f).strip();
      return s.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(s));
    } catch (Exception e) {
      return Optional.empty();
    }
  }
}
