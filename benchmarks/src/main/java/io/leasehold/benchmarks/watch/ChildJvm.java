package io.leasehold.benchmarks.watch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM the benchmark drives over its standard input and output: one line per command, one
 * per answer, whose first word names it (an answer {@code error …} where another was due fails the
 * call with the child's words). The child exits when its input closes, so it never outlives the
 * benchmark. Used for the fan-out's watchers ({@link WatcherProcess}) and the latency run's nodes
 * ({@link NodeProcesses}).
 */
final class ChildJvm {
  private final String name;
  private final Process process;

  /** Where its standard error goes, quoted when it ends unexpectedly; null: inherited. */
  private final Path log;

  private final BufferedReader answers;
  private final PrintWriter commands;

  /** {@code name} as messages call it, e.g. "the watcher process". */
  ChildJvm(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.answers =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.commands =
        new PrintWriter(
            new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
  }

  /** The {@code java} launcher of this JVM, to start children with. */
  static String java() {
    return ProcessHandle.current()
        .info()
        .command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  long pid() {
    return process.pid();
  }

  /** The child's CPU so far, from the OS; NaN where it does not say. */
  double cpuSeconds() {
    return process
        .toHandle()
        .info()
        .totalCpuDuration()
        .map(d -> d.toNanos() / 1e9)
        .orElse(Double.NaN);
  }

  synchronized String[] ask(String command, String answer) {
    commands.println(command);
    return expect(answer);
  }

  /** Reads the next answer, which must be {@code answer}; its words. */
  synchronized String[] expect(String answer) {
    String line;
    try {
      line = answers.readLine();
    } catch (IOException e) {
      throw new UncheckedIOException(name + "'s output", e);
    }
    if (line == null) {
      throw new IllegalStateException(
          name
              + " ended (exit status "
              + exitStatus()
              + ") where '"
              + answer
              + "' was due"
              + (log == null ? "" : "; the end of its log:\n" + logTail()));
    }
    String[] words = line.split(" ");
    if (!words[0].equals(answer)) {
      throw new IllegalStateException(
          name + " answered '" + line + "' where '" + answer + "' was due");
    }
    return words;
  }

  private String exitStatus() {
    try {
      return process.waitFor(5, TimeUnit.SECONDS)
          ? Integer.toString(process.exitValue())
          : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  /** Closes its input, and kills it if it has not ended within {@code grace}. */
  void close(Duration grace) {
    commands.close();
    try {
      if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
