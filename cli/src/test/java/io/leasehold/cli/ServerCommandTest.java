package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.cli.command.ServerCommand;
import io.leasehold.server.NodeConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ServerCommandTest {
  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    CommandLine cl = LeaseholdCommand.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int exit = cl.execute(args);
    return new Run(exit, out.toString(), err.toString());
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
  }

  @Test
  void clusterMemberTakesIdPeersAndDurations() {
    NodeConfig c = parse("--id", "n2", "--peers", "n1=127.0.0.1:7401:7400,n2=127.0.0.1:7411:7410,n3=127.0.0.1:7421:7420",
        "--data-dir", "/var/lib/leasehold", "--election-timeout-min", "500ms", "--election-timeout-max", "1500ms",
        "--tick-interval", "50ms", "--history-max-events", "5000", "--history-max-age", "10m",
        "--watch-queue-limit", "300", "--watch-progress-interval", "500ms");
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
  }

  @Test
  void badConfigurationIsOneLineAndExitCodeTwo() {
    Run r = run("server", "--id", "n9", "--peers", "n1=127.0.0.1:7401:7400");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertEquals("leasehold server: id: n9 is not one of the peers [n1]", r.err().strip());

    r = run("server");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertTrue(r.err().contains("--peers is required"), r.err());
    assertFalse(r.err().contains("\tat "), "no stack trace");

    r = run("server", "--standalone", "--tick-interval", "fast");
    assertEquals(LeaseholdCommand.EXIT_USAGE, r.exit());
    assertTrue(r.err().contains("'fast' is not a duration"), r.err());
  }

  @Test
  void helpListsExitCodes() {
    Run r = run("--help");
    assertEquals(0, r.exit());
    assertTrue(r.out().contains("3   cluster unreachable") || r.out().contains("3:cluster unreachable") || r.out().contains("cluster unreachable"), r.out());
    assertTrue(r.out().contains("server"), r.out());
  }
}
