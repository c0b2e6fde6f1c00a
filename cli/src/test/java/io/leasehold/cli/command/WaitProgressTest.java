package io.leasehold.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Conflict;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a waiting command prints, on a terminal and not. */
class WaitProgressTest {
  final StringWriter text = new StringWriter();

  WaitProgress progress(boolean terminal) {
    return new WaitProgress(new PrintWriter(text), "lock/x", terminal);
  }

  @Test
  void offATerminalALinePerHolderAndNoEscapeCodes() {
    WaitProgress p = progress(false);
    p.show(new Conflict("runner-1", 5, Duration.ofSeconds(12)));
    p.show(new Conflict("runner-1", 5, Duration.ofSeconds(11)));
    p.show(new Conflict("runner-2", 6, Duration.ofSeconds(30)));
    p.acquired(7);
    List<String> lines = text.toString().lines().toList();
    assertEquals(
        List.of(
            "waiting for lock/x: held by runner-1 (token 5), expires in 12s",
            "waiting for lock/x: held by runner-2 (token 6), expires in 30s"),
        lines.subList(0, 2));
    assertTrue(lines.get(2).startsWith("acquired lock/x (token 7) after "), text.toString());
    assertFalse(text.toString().contains("\033"), text.toString());
  }

  @Test
  void onATerminalOneLineRewrittenInPlace() {
    WaitProgress p = progress(true);
    p.show(new Conflict("runner-1", 5, Duration.ofSeconds(12)));
    p.show(new Conflict("runner-1", 5, Duration.ofSeconds(11)));
    p.end();
    assertEquals(
        "\r\033[Kwaiting for lock/x: held by runner-1 (token 5), expires in 12s"
            + "\r\033[Kwaiting for lock/x: held by runner-1 (token 5), expires in 11s"
            + System.lineSeparator(),
        text.toString());
  }

  @Test
  void aRefreshThatAnswersAfterTheWaitEndedPrintsNothing() {
    WaitProgress p = progress(false);
    p.acquired(7);
    String before = text.toString();
    p.show(new Conflict("runner-1", 5, Duration.ofSeconds(12)));
    assertEquals(before, text.toString());
  }

  @Test
  void stderrIsATerminalOnlyWhenItIsATerminalDevice() {
    assertTrue(WaitProgress.isTerminal(Path.of("/dev/pts/3")));
    assertTrue(WaitProgress.isTerminal(Path.of("/dev/tty1")));
    assertFalse(WaitProgress.isTerminal(Path.of("pipe:[40211]")));
    assertFalse(WaitProgress.isTerminal(Path.of("/var/log/job.log")));
    assertFalse(WaitProgress.isTerminal(Path.of("/dev/null")));
  }
}
