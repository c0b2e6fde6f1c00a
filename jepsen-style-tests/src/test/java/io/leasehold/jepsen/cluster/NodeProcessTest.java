package io.leasehold.jepsen.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness restarts a node that exits with 75, as systemd's Restart=on-failure would, and
 * nothing else.
 */
class NodeProcessTest {
  @TempDir Path dir;

  NodeProcess node(String script) {
    return new NodeProcess(
        0,
        "n1",
        List.of("sh", "-c", script),
        List.of(),
        dir.resolve("n1.log"),
        dir.resolve("n1.pid"),
        dir.resolve("n1.faketime"),
        dir.resolve("data"));
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void exitWithTheRestartCodeIsRestartedAndRecorded() throws Exception {
    // First run: exit 75. The restart finds the marker and stays up.
    Path marker = dir.resolve("ran-once");
    NodeProcess n =
        node(
            "if [ -e '"
                + marker
                + "' ]; then exec sleep 60; else touch '"
                + marker
                + "'; exit 75; fi");
    try {
      n.start();
      await(
          "the node exited once and runs again", () -> n.selfExits().size() == 1 && n.isRunning());
      NodeProcess.SelfExit exit = n.selfExits().get(0);
      assertEquals(75, exit.code());
      assertTrue(exit.restarted(), exit::toString);
    } finally {
      n.retire();
    }
  }

  @Test
  void anotherExitCodeLeavesTheNodeDownAndAKillIsNotASelfExit() throws Exception {
    NodeProcess crash = node("exit 3");
    crash.start();
    await("the crash is recorded", () -> crash.selfExits().size() == 1);
    assertFalse(crash.selfExits().get(0).restarted());
    // selfExits() waits for the exit handler, which would have scheduled any restart by now.
    NodeProcess.awaitScheduledRestarts();
    assertFalse(crash.isRunning(), "a crash is left down for the report, not restarted");

    NodeProcess killed = node("exec sleep 60");
    killed.start();
    killed.kill();
    killed.start();
    try {
      assertTrue(killed.isRunning());
      assertEquals(List.of(), killed.selfExits(), "a nemesis's kill -9 is not an exit on its own");
    } finally {
      killed.retire();
    }
    assertEquals(List.of(), killed.selfExits(), "nor is the harness retiring it");
  }
}
