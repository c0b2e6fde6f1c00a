package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.leasehold.server.TestCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;

/**
 * Runs the {@code leasehold} command in this JVM against a test cluster and captures what it
 * prints.
 */
public final class Cli {
  private Cli() {}

  public record Run(int exit, String out, String err) {
    JsonObject object() {
      return JsonParser.parseString(out).getAsJsonObject();
    }

    JsonArray array() {
      return JsonParser.parseString(out).getAsJsonArray();
    }

    /** Exit 0 and nothing on stderr, or fail showing both. */
    Run ok() {
      assertEquals(0, exit, this::toString);
      assertEquals("", err, () -> "nothing on stderr: " + this);
      return this;
    }

    /**
     * Failed with {@code code} and exactly one line on stderr containing {@code text}, and no stack
     * trace.
     */
    Run failed(int code, String text) {
      assertEquals(code, exit, this::toString);
      assertEquals(1, err.strip().lines().count(), () -> "one line on stderr: " + this);
      assertTrue(err.contains(text), () -> "stderr names the problem (" + text + "): " + this);
      assertFalse(err.contains("\tat "), "no stack trace");
      return this;
    }
  }

  /**
   * The command line as {@code leasehold} builds it for these arguments (only the subcommand they
   * name).
   */
  public static Run run(String... args) {
    return run(LeaseholdCommand.commandLine(args), args);
  }

  /** Any command line (a subcommand on its own, say) with its output captured. */
  public static Run run(CommandLine cl, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int exit = cl.execute(args);
    return new Run(exit, out.toString(), err.toString());
  }

  /** {@code args} with the cluster's endpoints and a short timeout in front. */
  static String[] at(TestCluster cluster, String... args) {
    List<String> all =
        new ArrayList<>(List.of("--endpoints", endpoints(cluster), "--timeout", "20s"));
    all.addAll(Arrays.asList(args));
    return all.toArray(String[]::new);
  }

  static Run run(TestCluster cluster, String... args) {
    return run(at(cluster, args));
  }

  static String endpoints(TestCluster cluster) {
    return String.join(",", cluster.clientAddresses());
  }

  static JsonObject parse(String json) {
    return JsonParser.parseString(json).getAsJsonObject();
  }

  static String str(JsonObject o, String key) {
    JsonElement e = o.get(key);
    return e == null || e.isJsonNull() ? null : e.getAsString();
  }

  /** A command that runs until interrupted (--hold, lock, watch), on a thread of its own. */
  static final class Background {
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    final CompletableFuture<Integer> exit = new CompletableFuture<>();
    final Thread thread;

    Background(String... args) {
      CommandLine cl = LeaseholdCommand.commandLine(args);
      cl.setOut(new PrintWriter(out, true));
      cl.setErr(new PrintWriter(err, true));
      thread = new Thread(() -> exit.complete(cl.execute(args)), "cli-" + args[args.length - 1]);
      thread.setDaemon(true);
      thread.start();
    }

    String out() {
      return out.toString();
    }

    String err() {
      return err.toString();
    }

    /** What Ctrl-C does: the shutdown hook interrupts the command's thread. */
    void interrupt() {
      thread.interrupt();
    }

    int awaitExit(Duration timeout) throws Exception {
      try {
        return exit.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        throw new AssertionError(
            "still running after " + timeout + "; out: " + out() + " err: " + err(), e);
      }
    }

    void awaitOut(String text, Duration timeout) {
      TestCluster.await(
          () ->
              "output shows "
                  + text
                  + "; out: "
                  + out()
                  + " err: "
                  + err()
                  + " exit: "
                  + exit.getNow(null),
          timeout,
          () -> out().contains(text));
    }

    void awaitErr(String text, Duration timeout) {
      TestCluster.await(
          () ->
              "stderr shows "
                  + text
                  + "; out: "
                  + out()
                  + " err: "
                  + err()
                  + " exit: "
                  + exit.getNow(null),
          timeout,
          () -> err().contains(text));
    }

    void stop() {
      thread.interrupt();
    }
  }

  /** The cells of each line of a table (columns are parted by at least three spaces). */
  static List<List<String>> cells(String table) {
    return table.lines().map(l -> List.of(l.split(" {3,}"))).toList();
  }

  /** Every cell of every row starts where its header starts. */
  static void assertAligned(String table) {
    List<String> lines = table.lines().toList();
    List<String> headers = cells(table).get(0);
    int[] starts = new int[headers.size()];
    int from = 0;
    for (int i = 0; i < headers.size(); i++) {
      starts[i] = lines.get(0).indexOf(headers.get(i), from);
      from = starts[i] + headers.get(i).length();
    }
    for (String line : lines.subList(1, lines.size())) {
      for (int i = 1; i < starts.length; i++) {
        assertTrue(
            line.length() > starts[i]
                && line.charAt(starts[i] - 1) == ' '
                && line.charAt(starts[i]) != ' ',
            "column " + headers.get(i) + " starts at " + starts[i] + " in: " + line);
      }
    }
  }

  static Duration seconds(long s) {
    return Duration.ofSeconds(s);
  }
}
