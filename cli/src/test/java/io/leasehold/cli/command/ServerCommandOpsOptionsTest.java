package io.leasehold.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.NodeConfig;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The operations options of {@code leasehold server}: --join and --metrics-port. */
class ServerCommandOpsOptionsTest {
  static NodeConfig parse(String... args) {
    CommandLine cl = new CommandLine(new ServerCommand());
    cl.parseArgs(args);
    return ((ServerCommand) cl.getCommand()).build();
  }

  @Test
  void joinModeNeedsOnlyThisNodeInPeers() {
    NodeConfig c = parse("--join", "--id", "n4", "--peers", "n4=127.0.0.1:7431:7430", "--metrics-port", "off");
    assertTrue(c.join());
    assertEquals(Optional.empty(), c.metricsPort());
    assertFalse(parse("--standalone", "--metrics-port", "off").join());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("--standalone", "--join"));
    assertTrue(e.getMessage().contains("--join"), e.getMessage());
  }

  @Test
  void metricsPortIsExplicitOrOff() {
    assertEquals(Optional.of(9100), parse("--standalone", "--metrics-port", "9100").metricsPort());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("--standalone", "--metrics-port", "lots"));
    assertTrue(e.getMessage().startsWith("metrics-port:"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse("--standalone", "--metrics-port", "7400"));
    assertTrue(e.getMessage().startsWith("metrics-port:"), e.getMessage());
  }
}
