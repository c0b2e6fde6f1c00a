package io.leasehold.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.NodeConfig;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
    NodeConfig c =
        parse("--join", "--id", "n4", "--peers", "n4=127.0.0.1:7431:7430", "--metrics-port", "off");
    assertTrue(c.join());
    assertEquals(Optional.empty(), c.metricsPort());
    assertFalse(parse("--standalone", "--metrics-port", "off").join());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> parse("--standalone", "--join"));
    assertTrue(e.getMessage().contains("--join"), e.getMessage());
  }

  @Test
  void metricsPortIsExplicitOrOff() {
    assertEquals(Optional.of(9100), parse("--standalone", "--metrics-port", "9100").metricsPort());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> parse("--standalone", "--metrics-port", "lots"));
    assertTrue(e.getMessage().startsWith("metrics-port:"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class, () -> parse("--standalone", "--metrics-port", "7400"));
    assertTrue(e.getMessage().startsWith("metrics-port:"), e.getMessage());
  }

  /**
   * The container image's HEALTHCHECK probes $LEASEHOLD_METRICS_PORT, so the node must serve on
   * that port when no --metrics-port is given; an explicit option still wins. The environment of
   * this JVM cannot be changed, hence a child JVM that only parses the options.
   */
  @Test
  void metricsPortDefaultsToLeaseholdMetricsPort() throws Exception {
    assertEquals("Optional[9123]", parseInChildJvm("9123", "--standalone"));
    assertEquals(
        "Optional.empty", parseInChildJvm("9123", "--standalone", "--metrics-port", "off"));
    assertEquals(
        "Optional[9124]", parseInChildJvm("9123", "--standalone", "--metrics-port", "9124"));
  }

  static String parseInChildJvm(String metricsPortEnv, String... args) throws Exception {
    java.util.List<String> cmd =
        new java.util.ArrayList<>(
            java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                PrintMetricsPort.class.getName()));
    cmd.addAll(java.util.List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("LEASEHOLD_METRICS_PORT", metricsPortEnv);
    Process p = pb.start();
    String out;
    try (var in = p.getInputStream()) {
      out = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM exited");
    assertEquals(0, p.exitValue(), out);
    return out.strip();
  }

  /** The child JVM's entry point: prints the metrics port the options give. */
  public static final class PrintMetricsPort {
    public static void main(String[] args) {
      System.out.println(parse(args).metricsPort());
    }
  }
}
