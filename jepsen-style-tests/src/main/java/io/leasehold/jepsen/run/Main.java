package io.leasehold.jepsen.run;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs a fault test outside Maven (the ITs are the usual way), e.g. against a jar built elsewhere:
 * {@code java -cp <module classpath> io.leasehold.jepsen.run.Main short|<duration> <jar> <reports
 * dir> [nodes] [seed]}. Exits 0 if every checker passed, 1 if one found a violation.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println(
          "usage: Main short|<duration, e.g. 30m> <leasehold.jar> <reports dir> [nodes] [seed]");
      System.exit(2);
    }
    int nodes = args.length > 3 ? Integer.parseInt(args[3]) : 3;
    long seed = args.length > 4 ? Long.parseLong(args[4]) : System.currentTimeMillis();
    boolean isShort = args[0].equals("short");
    Duration d = isShort ? Duration.ZERO : Schedules.parse(args[0]);
    JepsenRun.Result r =
        JepsenRun.run(
            new JepsenRun.Config(
                isShort ? "short" : "soak",
                nodes,
                Path.of(args[1]),
                Path.of(args[2]),
                seed,
                all -> isShort ? Schedules.shortSchedule(all) : Schedules.soak(all, d, seed),
                Duration.ofSeconds(10),
                isShort ? 2 : 3));
    r.verdicts().forEach(System.out::println);
    System.out.println(
        "faults "
            + r.faults()
            + "; skipped "
            + r.skipped()
            + "; report "
            + r.report().toAbsolutePath());
    System.exit(r.valid() ? 0 : 1);
  }
}
