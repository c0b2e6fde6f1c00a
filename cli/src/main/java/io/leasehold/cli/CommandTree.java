package io.leasehold.cli;

import io.leasehold.cli.command.AuthCommand;
import io.leasehold.cli.command.BanCommand;
import io.leasehold.cli.command.ClusterCommand;
import io.leasehold.cli.command.CompletionCommand;
import io.leasehold.cli.command.EndpointCommand;
import io.leasehold.cli.command.LeaseCommand;
import io.leasehold.cli.command.NamespaceCommand;
import io.leasehold.cli.command.PolicyCommand;
import io.leasehold.cli.command.RouteCommand;
import io.leasehold.cli.command.ServiceCommand;
import io.leasehold.cli.command.SessionCommand;
import io.leasehold.cli.command.bench.BenchCommand;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The command tree, built for one call: at each level only the subcommand the call names. picocli
 * builds a command's model by reflection as it is added, and the whole tree (some sixty commands)
 * cost a short CLI call more than its own work. A level whose next word names none of its
 * subcommands (none at all, a misspelt one, an option such as --help) gets all of them, and their
 * whole subtrees, so help, errors and suggestions see everything; so do {@code help} and {@code
 * completion}, which describe the whole tree.
 *
 * <p>Each group command lists its subcommands in a {@code SUBCOMMANDS} field rather than in its
 * annotation (picocli would build those at once); {@link #GROUPS} says where each list is.
 */
public final class CommandTree {
  static final Map<Class<?>, List<Class<?>>> GROUPS =
      Map.ofEntries(
          Map.entry(LeaseholdCommand.class, LeaseholdCommand.SUBCOMMANDS),
          Map.entry(LeaseCommand.class, LeaseCommand.SUBCOMMANDS),
          Map.entry(SessionCommand.class, SessionCommand.SUBCOMMANDS),
          Map.entry(ServiceCommand.class, ServiceCommand.SUBCOMMANDS),
          Map.entry(RouteCommand.class, RouteCommand.SUBCOMMANDS),
          Map.entry(PolicyCommand.class, PolicyCommand.SUBCOMMANDS),
          Map.entry(BanCommand.class, BanCommand.SUBCOMMANDS),
          Map.entry(ClusterCommand.class, ClusterCommand.SUBCOMMANDS),
          Map.entry(NamespaceCommand.class, NamespaceCommand.SUBCOMMANDS),
          Map.entry(EndpointCommand.class, EndpointCommand.SUBCOMMANDS),
          Map.entry(AuthCommand.class, AuthCommand.SUBCOMMANDS),
          Map.entry(AuthCommand.RoleCommand.class, AuthCommand.RoleCommand.SUBCOMMANDS),
          Map.entry(BenchCommand.class, BenchCommand.SUBCOMMANDS));

  /** Commands that need the whole tree whatever follows them. */
  private static final List<Class<?>> WHOLE_TREE =
      List.of(CommandLine.HelpCommand.class, CompletionCommand.class);

  private CommandTree() {}

  /**
   * Adds to {@code cl} (a command of class {@code type}, already in its tree) the subcommands that
   * {@code args} name from index {@code from} on, or all of them with {@code from < 0}.
   */
  static void addSubcommands(CommandLine cl, Class<?> type, String[] args, int from) {
    List<Class<?>> subs = GROUPS.getOrDefault(type, List.of());
    if (subs.isEmpty()) {
      return;
    }
    int at = from < 0 ? -1 : wordAt(cl.getCommandSpec(), args, from);
    Class<?> named = at < 0 ? null : named(subs, args[at]);
    if (named != null && WHOLE_TREE.contains(named)) {
      named = null;
    }
    for (Class<?> sub : subs) {
      if (named == null || sub == named) {
        cl.addSubcommand(sub);
        CommandLine child = cl.getSubcommands().get(sub.getAnnotation(Command.class).name());
        addSubcommands(child, sub, args, named == null ? -1 : at + 1);
      }
    }
  }

  /**
   * The index of the first argument from {@code from} on that is neither an option of this command
   * (inherited ones included) nor the value of one, or -1. An option that takes a value skips the
   * next argument unless written {@code --name=value}; {@code --} ends the search.
   */
  static int wordAt(CommandLine.Model.CommandSpec spec, String[] args, int from) {
    for (int i = from; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--")) {
        return -1;
      }
      if (!a.startsWith("-")) {
        return i;
      }
      CommandLine.Model.OptionSpec option = spec.findOption(a);
      if (option != null && option.arity().max() > 0 && !a.contains("=")) {
        i++;
      }
    }
    return -1;
  }

  private static Class<?> named(List<Class<?>> subs, String word) {
    for (Class<?> sub : subs) {
      Command c = sub.getAnnotation(Command.class);
      if (c.name().equals(word) || Arrays.asList(c.aliases()).contains(word)) {
        return sub;
      }
    }
    return null;
  }
}
