package io.leasehold.cli;

import io.leasehold.cli.command.ServerCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code leasehold} command. */
@Command(
    name = "leasehold",
    mixinStandardHelpOptions = true,
    versionProvider = LeaseholdCommand.Version.class,
    description = "Raft-replicated time-limited leases with fencing tokens.",
    subcommands = {ServerCommand.class, CommandLine.HelpCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        " 0:success",
        " 1:operation failed (e.g. conflict, not held)",
        " 2:usage error (bad option or configuration)",
        " 3:cluster unreachable"})
public final class LeaseholdCommand implements Runnable {
  public static final int EXIT_OK = 0;
  public static final int EXIT_FAILED = 1;
  public static final int EXIT_USAGE = 2;
  public static final int EXIT_UNREACHABLE = 3;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required (e.g. leasehold server --standalone)");
  }

  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new LeaseholdCommand());
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    // One readable line, never a stack trace: errors in configuration are the operator's to fix.
    cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
      if (e instanceof IllegalArgumentException) {
        commandLine.getErr().println("leasehold " + commandLine.getCommandName() + ": " + e.getMessage());
        return EXIT_USAGE;
      }
      commandLine.getErr().println("leasehold " + commandLine.getCommandName() + ": " + e);
      return EXIT_FAILED;
    });
    return cl;
  }

  public static void main(String[] args) {
    commonPoolOfAtLeastTwo();
    System.exit(commandLine().execute(args));
  }

  /**
   * On one or two cores the JDK sizes the common ForkJoinPool at one thread and then runs every
   * default-executor {@code CompletableFuture.*Async} stage (Ratis has many) on a new thread of
   * its own. Two workers avoid that thread-per-task mode. Must run before the pool is first used;
   * an explicit {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism} wins.
   */
  static void commonPoolOfAtLeastTwo() {
    String key = "java.util.concurrent.ForkJoinPool.common.parallelism";
    if (System.getProperty(key) == null && Runtime.getRuntime().availableProcessors() <= 2) {
      System.setProperty(key, "2");
    }
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = LeaseholdCommand.class.getPackage().getImplementationVersion();
      return new String[] {"leasehold " + (v == null ? "(development build)" : v)};
    }
  }
}
