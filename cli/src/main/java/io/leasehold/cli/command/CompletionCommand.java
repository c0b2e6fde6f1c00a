package io.leasehold.cli.command;

import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold completion}: prints the bash/zsh completion script picocli generates. */
@Command(
    name = "completion",
    mixinStandardHelpOptions = true,
    description = {
      "Prints a bash (and zsh) completion script.",
      "",
      "  source <(leasehold completion)",
      ""
    })
public final class CompletionCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().getOut().print(AutoComplete.bash("leasehold", spec.root().commandLine()));
    spec.commandLine().getOut().flush();
  }
}
