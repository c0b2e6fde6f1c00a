package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.cli.command.LeaseCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The command line {@code leasehold} builds for a call holds, at each level, only the subcommand
 * the call names; help, completion, a misspelt name or none at all get the whole tree below that
 * level.
 */
class CommandTreeTest {
  static final List<Class<?>> LEASE_SUBCOMMANDS = LeaseCommand.SUBCOMMANDS;

  static CommandLine tree(String... args) {
    return LeaseholdCommand.commandLine(args);
  }

  static Set<String> subcommands(CommandLine cl, String... path) {
    for (String p : path) {
      cl = cl.getSubcommands().get(p);
    }
    return cl.getSubcommands().keySet();
  }

  /** Every command's path in the whole tree ("lease get", "auth role add", ...). */
  static List<List<String>> paths(CommandLine cl, List<String> prefix, List<List<String>> into) {
    for (Map.Entry<String, CommandLine> sub : cl.getSubcommands().entrySet()) {
      if (!sub.getValue().getCommandSpec().name().equals(sub.getKey())) {
        continue; // an alias
      }
      List<String> path = new ArrayList<>(prefix);
      path.add(sub.getKey());
      into.add(path);
      paths(sub.getValue(), path, into);
    }
    return into;
  }

  @Test
  void aCallGetsOnlyTheCommandsItNames() {
    CommandLine get = tree("lease", "get", "a");
    assertEquals(Set.of("lease"), subcommands(get));
    assertEquals(Set.of("get"), subcommands(get, "lease"));
    CommandLine status =
        tree("--endpoints", "h:1", "--timeout", "3s", "cluster", "-o", "json", "status");
    assertEquals(Set.of("cluster"), subcommands(status));
    assertEquals(Set.of("status"), subcommands(status, "cluster"));
    assertEquals(
        Set.of("cluster"),
        subcommands(tree("--endpoints=h:1", "-o", "json", "-v", "cluster", "status")));
    assertEquals(
        Set.of("service"),
        subcommands(
            tree(
                "--cacert",
                "ca.pem",
                "--cert",
                "c.pem",
                "--key",
                "k.pem",
                "--bearer-token",
                "t",
                "service",
                "list")));
    assertEquals(Set.of("add"), subcommands(tree("auth", "role", "add", "r"), "auth", "role"));
    assertEquals(Set.of(), subcommands(tree("--version")), "--version needs no subcommand");
  }

  @Test
  void helpCompletionAMisspeltNameOrNoneGetTheWholeTreeBelow() {
    int all = LeaseholdCommand.SUBCOMMANDS.size();
    int everything = paths(tree(), List.of(), new ArrayList<>()).size();
    assertTrue(everything > 50, "the whole tree: " + everything);
    for (String[] args :
        List.of(
            new String[0],
            new String[] {"help", "lease"},
            new String[] {"completion"},
            new String[] {"leas", "get"},
            new String[] {"--help"},
            new String[] {"--endpoints"},
            new String[] {"--", "lease"})) {
      assertEquals(
          everything,
          paths(tree(args), List.of(), new ArrayList<>()).size(),
          String.join(" ", args));
    }
    assertEquals(all, subcommands(tree("help")).size());
    assertEquals(LEASE_SUBCOMMANDS.size(), subcommands(tree("lease"), "lease").size());
    assertEquals(LEASE_SUBCOMMANDS.size(), subcommands(tree("lease", "--help"), "lease").size());
    assertEquals(LEASE_SUBCOMMANDS.size(), subcommands(tree("lease", "gett"), "lease").size());
  }

  /** Every command's help (which lists its subcommands and options) is the same built alone. */
  @Test
  void everyCommandBuiltAloneHasTheHelpItHasInTheWholeTree() {
    for (List<String> path : paths(tree(), List.of(), new ArrayList<>())) {
      List<String> args = new ArrayList<>(path);
      args.add("--help");
      String[] a = args.toArray(String[]::new);
      Cli.Run whole = Cli.run(LeaseholdCommand.commandLine(), a);
      Cli.Run alone = Cli.run(a);
      assertEquals(0, alone.exit(), alone.toString());
      assertEquals(whole.out(), alone.out(), String.join(" ", path));
      if (path.get(0).equals("help") || path.get(0).equals("completion")) {
        continue; // they describe the whole tree
      }
      CommandLine built = tree(a);
      for (int i = 0; i < path.size(); i++) {
        assertEquals(
            Set.of(path.get(i)),
            subcommands(built, path.subList(0, i).toArray(String[]::new)),
            path + " at " + i);
      }
    }
  }

  @Test
  void aMisspeltCommandIsStillSuggested() {
    Cli.Run top = Cli.run("leas", "get", "a");
    assertEquals(LeaseholdCommand.EXIT_USAGE, top.exit(), top.toString());
    assertTrue(top.err().contains("lease"), top.toString());
    Cli.Run nested = Cli.run("lease", "gett", "a");
    assertEquals(LeaseholdCommand.EXIT_USAGE, nested.exit(), nested.toString());
    assertTrue(nested.err().contains("get"), nested.toString());
  }
}
