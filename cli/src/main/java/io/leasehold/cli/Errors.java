package io.leasehold.cli;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.InvalidRequestException;
import io.leasehold.client.LeaseholdException;
import java.io.PrintWriter;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine;

/**
 * Every failure becomes one line on stderr, {@code leasehold <command>: <problem>}, and the exit
 * code that goes with it; the stack trace follows only with --verbose.
 */
final class Errors {
  private Errors() {}

  /** Bad usage (unknown command or option, bad value, missing option): exit code 2. */
  static int usage(CommandLine.ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    String message = e.getMessage();
    if (e instanceof CommandLine.UnmatchedArgumentException u && !cl.getSubcommands().isEmpty() && !u.getUnmatched().isEmpty()
        && !u.getUnmatched().get(0).startsWith("-")) {
      message = "unknown command '" + u.getUnmatched().get(0) + "'";
      List<String> suggestions = u.getSuggestions();
      message += suggestions.isEmpty()
          ? " (commands: " + String.join(", ", visibleCommands(cl)) + ")"
          : "; did you mean " + String.join(" or ", suggestions) + "?";
    } else if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getSuggestions().isEmpty()) {
      message += "; did you mean " + String.join(" or ", u.getSuggestions()) + "?";
    }
    print(cl, message + " (see '" + cl.getCommandSpec().qualifiedName() + " --help')", verbose(cl) ? e : null);
    return LeaseholdCommand.EXIT_USAGE;
  }

  /** A failure while a command ran: its exit code by kind. */
  static int execution(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
    int code;
    String message;
    if (e instanceof CliFailure f) {
      code = f.exitCode();
      message = f.getMessage();
    } else if (e instanceof ClusterUnavailableException u) {
      code = LeaseholdCommand.EXIT_UNREACHABLE;
      message = "cluster unreachable at " + String.join(",", root(cl).endpoints()) + ": no node answered within "
          + Human.duration(root(cl).timeout()) + lastError(u);
    } else if (e instanceof InvalidRequestException || e instanceof IllegalArgumentException) {
      code = LeaseholdCommand.EXIT_USAGE;
      message = e.getMessage();
    } else if (e instanceof LeaseholdException) {
      code = LeaseholdCommand.EXIT_FAILED;
      message = e.getMessage();
    } else {
      code = LeaseholdCommand.EXIT_FAILED;
      message = e.toString();
    }
    print(cl, message, verbose(cl) ? e : null);
    return code;
  }

  private static void print(CommandLine cl, String message, Throwable trace) {
    PrintWriter err = cl.getErr();
    String line = message == null ? "failed" : message.lines().map(String::strip).collect(Collectors.joining(" "));
    err.println(cl.getCommandSpec().qualifiedName() + ": " + line);
    if (trace != null) {
      trace.printStackTrace(err);
    }
    err.flush();
  }

  private static String lastError(ClusterUnavailableException u) {
    if (u.getCause() instanceof StatusRuntimeException s) {
      Status status = s.getStatus();
      return " (last error " + status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription()) + ")";
    }
    return u.getMessage() == null ? "" : " (" + u.getMessage() + ")";
  }

  private static List<String> visibleCommands(CommandLine cl) {
    return cl.getSubcommands().values().stream().filter(c -> !c.getCommandSpec().usageMessage().hidden())
        .map(CommandLine::getCommandName).distinct().toList();
  }

  private static LeaseholdCommand root(CommandLine cl) {
    return (LeaseholdCommand) cl.getCommandSpec().root().userObject();
  }

  private static boolean verbose(CommandLine cl) {
    return cl.getCommandSpec().root().userObject() instanceof LeaseholdCommand l && l.verbose();
  }
}
