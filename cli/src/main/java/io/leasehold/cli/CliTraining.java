package io.leasehold.cli;

import java.io.PrintWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * The training run of the CLI's class-data cache (deploy/jvm.sh): the everyday commands, one after
 * another in one JVM, against a node that serves at the endpoint given, with their output
 * discarded. The JVM that runs this records what those commands load and link, and a CLI call that
 * starts from the cache skips that work. Prints one line per command with its exit code.
 *
 * <p>Usage: {@code java -cp leasehold.jar io.leasehold.cli.CliTraining HOST:PORT}
 */
public final class CliTraining {
  private CliTraining() {}

  public static void main(String[] args) {
    if (args.length != 1 || !ClientCommand.isHostPort(args[0])) {
      System.err.println("usage: CliTraining HOST:PORT (a node that serves)");
      System.exit(LeaseholdCommand.EXIT_USAGE);
    }
    LeaseholdCommand.commonPoolOfAtLeastTwo();
    LeaseholdCommand.quietClientLogs(new String[0]);
    String e = args[0];
    List<String[]> calls = new ArrayList<>();
    calls.add(new String[] {"--version"});
    calls.add(new String[] {"--help"});
    calls.add(new String[] {"lease", "--help"});
    calls.add(
        new String[] {
          "--endpoints", e, "lease", "acquire", "training/a", "--ttl", "30s", "--holder", "training"
        });
    calls.add(
        new String[] {
          "--endpoints", e, "lease", "acquire", "training/a", "--ttl", "30s", "--holder", "other"
        });
    calls.add(new String[] {"--endpoints", e, "lease", "get", "training/a"});
    calls.add(new String[] {"--endpoints", e, "lease", "get", "training/a", "-o", "json"});
    calls.add(new String[] {"--endpoints", e, "lease", "get", "training/none"});
    calls.add(new String[] {"--endpoints", e, "lease", "list"});
    calls.add(new String[] {"--endpoints", e, "lease", "list", "-o", "wide"});
    calls.add(new String[] {"--endpoints", e, "lease", "history", "training/a"});
    calls.add(new String[] {"--endpoints", e, "lock", "training/lock", "--", "true"});
    calls.add(
        new String[] {
          "--endpoints",
          e,
          "service",
          "register",
          "training",
          "i1",
          "--address",
          "127.0.0.1:1",
          "--ttl",
          "30s"
        });
    calls.add(new String[] {"--endpoints", e, "service", "resolve", "training"});
    calls.add(new String[] {"--endpoints", e, "service", "list"});
    calls.add(new String[] {"--endpoints", e, "session", "list"});
    calls.add(new String[] {"--endpoints", e, "cluster", "status"});
    calls.add(new String[] {"--endpoints", e, "endpoint", "health"});
    calls.add(new String[] {"--endpoints", e, "endpoint", "status", "-o", "json"});
    calls.add(new String[] {"--endpoints", e, "audit"});
    // The failures a user meets: a usage error and a node that does not answer.
    calls.add(new String[] {"--endpoints", e, "lease", "get"});
    calls.add(
        new String[] {
          "--endpoints", "127.0.0.1:1", "--timeout", "1s", "lease", "get", "training/a"
        });
    PrintWriter discard = new PrintWriter(Writer.nullWriter());
    int failedToRun = 0;
    for (String[] call : calls) {
      CommandLine cl = LeaseholdCommand.commandLine(call);
      cl.setOut(discard);
      cl.setErr(discard);
      int code;
      try {
        code = cl.execute(call);
      } catch (RuntimeException ex) {
        failedToRun++;
        code = -1;
      }
      System.out.println(code + "\t" + String.join(" ", call));
    }
    System.exit(failedToRun == 0 ? 0 : 1);
  }
}
