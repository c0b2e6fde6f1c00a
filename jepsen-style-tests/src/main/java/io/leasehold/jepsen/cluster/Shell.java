package io.leasehold.jepsen.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs short system commands (ip, kill, date) and returns their exit code and output. */
public final class Shell {
  public record Result(int exit, String output) {
    public boolean ok() {
      return exit == 0;
    }
  }

  private Shell() {}

  public static Result run(List<String> command) {
    return run(command, List.of());
  }

  /** Runs {@code command} with extra {@code env} entries ("K=V"), waiting at most 30 s. */
  public static Result run(List<String> command, List<String> env) {
    try {
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      for (String kv : env) {
        int eq = kv.indexOf('=');
        pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
      }
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, "timed out: " + command);
      }
      return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8).trim());
    } catch (IOException e) {
      return new Result(-1, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(-1, "interrupted");
    }
  }

  /** Runs {@code command} and fails loudly if it fails: for setup steps that must work. */
  public static String must(String... command) {
    Result r = run(List.of(command));
    if (!r.ok()) {
      throw new IllegalStateException(
          String.join(" ", command) + " failed (" + r.exit() + "): " + r.output());
    }
    return r.output();
  }
}
