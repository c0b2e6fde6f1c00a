package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Bad input: each exits with its documented code and one line on stderr that names the problem. */
class BadInputTest {
  static String unreachable() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return "127.0.0.1:" + s.getLocalPort(); // free, so nothing listens there once closed
    }
  }

  @Test
  void anUnknownCommandIsAUsageError() {
    run("frobnicate").failed(LeaseholdCommand.EXIT_USAGE, "unknown command 'frobnicate'");
    run("lease", "lsit")
        .failed(LeaseholdCommand.EXIT_USAGE, "leasehold lease: unknown command 'lsit'");
  }

  @Test
  void anUnknownCommandIsAUsageErrorWhateverFlagsFollowIt() {
    Cli.Run r =
        run("sesion", "--help").failed(LeaseholdCommand.EXIT_USAGE, "unknown command 'sesion'");
    assertEquals("", r.out(), "no help printed");
    run("sesion", "--version").failed(LeaseholdCommand.EXIT_USAGE, "unknown command 'sesion'");
    run("--help", "sesion").failed(LeaseholdCommand.EXIT_USAGE, "unknown command 'sesion'");
    run("lease", "lsit", "--help")
        .failed(LeaseholdCommand.EXIT_USAGE, "leasehold lease: unknown command 'lsit'");
    run("server", "extra", "--help")
        .failed(LeaseholdCommand.EXIT_USAGE, "leasehold server: Unmatched argument");
    run("lease", "--help").ok();
  }

  @Test
  void aBadDurationIsAUsageErrorNamingTheOptionAndValue() {
    Cli.Run r =
        run("lease", "acquire", "lock/x", "--ttl", "30x")
            .failed(LeaseholdCommand.EXIT_USAGE, "'30x' is not a duration");
    assertTrue(r.err().contains("--ttl"), r.err());
    run("--timeout", "soon", "lease", "list")
        .failed(LeaseholdCommand.EXIT_USAGE, "'soon' is not a duration");
  }

  @Test
  void aNegativeOrZeroDurationWhereOneMustBePositiveSaysSo() {
    run("lease", "acquire", "lock/x", "--ttl", "-5s")
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "Invalid value for option '--ttl': must be positive, got -5s");
    run("lease", "acquire", "lock/x", "--ttl", "0s")
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "Invalid value for option '--ttl': must be positive, got 0s");
    run("--timeout", "-1s", "lease", "list")
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "Invalid value for option '--timeout': must be positive, got -1s");
    run("lease", "acquire", "lock/x", "--ttl", "5s", "--wait", "-1s")
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "Invalid value for option '--wait': must not be negative, got -1s");
  }

  @Test
  void everyHelpRendersAsWritten() {
    // picocli formats descriptions as printf does; a stray % printed "[picocli WARN] Could not
    // format".
    String help = run("route", "partition", "--help").ok().out();
    assertTrue(help.contains("(crc32(key) % 256)"), help);
    List<String> bad = new ArrayList<>();
    collectUnformattable(LeaseholdCommand.commandLine(), bad);
    assertEquals(List.of(), bad, "descriptions that do not format");
  }

  private static void collectUnformattable(CommandLine cl, List<String> bad) {
    CommandLine.Model.CommandSpec spec = cl.getCommandSpec();
    List<String> lines = new ArrayList<>(Arrays.asList(spec.usageMessage().description()));
    spec.options().forEach(o -> lines.addAll(Arrays.asList(o.description())));
    spec.positionalParameters().forEach(p -> lines.addAll(Arrays.asList(p.description())));
    for (String line : lines) {
      try {
        String.format(line);
      } catch (java.util.IllegalFormatException e) {
        bad.add(spec.qualifiedName() + ": " + line);
      }
    }
    cl.getSubcommands().values().stream().distinct().forEach(sub -> collectUnformattable(sub, bad));
  }

  @Test
  void aMissingRequiredOptionIsAUsageError() {
    run("lease", "release", "lock/x")
        .failed(LeaseholdCommand.EXIT_USAGE, "Missing required option: '--token=TOKEN'");
    run("lease", "revoke", "lock/x").failed(LeaseholdCommand.EXIT_USAGE, "--reason");
    run("lock", "lock/x").failed(LeaseholdCommand.EXIT_USAGE, "COMMAND");
    run("lease", "history").failed(LeaseholdCommand.EXIT_USAGE, "give either NAME or --holder");
  }

  @Test
  void anUnreachableEndpointExitsThree() throws IOException {
    String nowhere = unreachable();
    Cli.Run r =
        run("--endpoints", nowhere, "--timeout", "1s", "lease", "list")
            .failed(LeaseholdCommand.EXIT_UNREACHABLE, "cluster unreachable at " + nowhere);
    assertTrue(r.err().startsWith("leasehold lease list: "), r.err());
    run("lease", "get", "lock/x", "--endpoints", nowhere, "--timeout", "1s")
        .failed(LeaseholdCommand.EXIT_UNREACHABLE, "cluster unreachable");
    run("--endpoints", nowhere, "--timeout", "1s", "cluster", "status")
        .failed(LeaseholdCommand.EXIT_UNREACHABLE, "cluster unreachable");
  }

  @Test
  void aMalformedEndpointIsAUsageError() {
    run("--endpoints", "localhost", "lease", "list")
        .failed(LeaseholdCommand.EXIT_USAGE, "--endpoints: 'localhost' is not host:port");
  }

  @Test
  void aBadNameTheClusterRefusesIsAUsageError(@TempDir Path dir) throws Exception {
    // The cluster validates names; run against a real node to see its message come through.
    try (var cluster = TestCluster.start(1, dir)) {
      run(cluster, "lease", "acquire", "no-namespace", "--ttl", "30s")
          .failed(LeaseholdCommand.EXIT_USAGE, "name");
    }
  }

  @Test
  void verboseAddsTheStackTrace() throws IOException {
    Cli.Run r = run("--endpoints", unreachable(), "--timeout", "1s", "--verbose", "lease", "list");
    assertEquals(LeaseholdCommand.EXIT_UNREACHABLE, r.exit());
    assertTrue(r.err().contains("\tat "), r.err());
  }

  @Test
  void helpDocumentsTheExitCodesAndEveryCommand() {
    Cli.Run r = run("--help").ok();
    for (String text :
        new String[] {
          "Exit codes:",
          "operation failed",
          "usage error",
          "cluster unreachable",
          "lease",
          "lock",
          "elect",
          "watch",
          "service",
          "route",
          "policy",
          "ban",
          "cluster",
          "endpoint",
          "server",
          "completion",
          "--endpoints",
          "LEASEHOLD_ENDPOINTS",
          "--timeout",
          "--output",
          "--verbose"
        }) {
      assertTrue(r.out().contains(text), text + " in " + r.out());
    }
    assertTrue(
        run("lease", "acquire", "--help").ok().out().contains("--endpoints"),
        "global options on every command");
  }

  @Test
  void completionPrintsAScriptThatKnowsTheCommands() {
    String script = run("completion").ok().out();
    assertTrue(script.contains("complete -F"), script.substring(0, Math.min(200, script.length())));
    assertTrue(
        script.contains("acquire") && script.contains("partition"), "subcommands are completed");
    for (String command :
        List.of(
            "keep-alive",
            "renew",
            "elect",
            "--listen",
            "endpoint",
            "--only-endpoints",
            "set-status",
            "deregister",
            "--watch")) {
      assertTrue(script.contains(command), command + " is completed");
    }
  }
}
