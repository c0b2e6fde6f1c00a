package io.leasehold.benchmarks.watch;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Optional CPU profile of each measured period with async-profiler, if it is on the class path
 * ({@code one.profiler.AsyncProfiler}, e.g. the {@code tools.profiler:async-profiler} jar from
 * Maven Central) and {@code --profile=DIR} is given: one collapsed-stack file per period, with
 * thread names as the root frames ({@code DIR/<label>.collapsed}, for flame graphs or grep). Called
 * by reflection so the benchmark needs no dependency on it.
 */
final class PhaseProfiler {
  private final Path dir;
  private final Object profiler;
  private final Method execute;

  /** async-profiler's event: cpu, wall or alloc. */
  private final String event;

  private PhaseProfiler(Path dir, Object profiler, Method execute, String event) {
    this.dir = dir;
    this.profiler = profiler;
    this.execute = execute;
    this.event = event;
  }

  static PhaseProfiler create(Options options) {
    if (options.profileDir == null) {
      return new PhaseProfiler(null, null, null, options.profileEvent);
    }
    try {
      Files.createDirectories(options.profileDir);
      Class<?> c = Class.forName("one.profiler.AsyncProfiler");
      Object p =
          options.profilerLib == null
              ? c.getMethod("getInstance").invoke(null)
              : c.getMethod("getInstance", String.class).invoke(null, options.profilerLib);
      return new PhaseProfiler(
          options.profileDir, p, c.getMethod("execute", String.class), options.profileEvent);
    } catch (ReflectiveOperationException | IOException | LinkageError e) {
      throw new IllegalStateException(
          "--profile needs async-profiler on the class path (one.profiler.AsyncProfiler) and, "
              + "unless its library is on java.library.path, --profiler-lib=/path/to/libasyncProfiler.so: "
              + e,
          e);
    }
  }

  void start() {
    // Wall-clock mode samples every thread, running or waiting, at each tick: with a hundred
    // threads a 1 ms tick would cost far more than CPU sampling's, so it ticks every 5 ms.
    // Allocation mode samples about once per 512 KiB allocated (in TLAB refills and outside them).
    String interval =
        switch (event) {
          case "wall" -> "interval=5ms";
          case "alloc" -> "alloc=512k";
          default -> "interval=1ms";
        };
    run("start,event=" + event + "," + interval + ",threads");
  }

  void stop(String label) {
    if (profiler != null) {
      // For allocations, weigh each stack by the bytes it allocated rather than by its samples.
      run(
          "stop,collapsed"
              + (event.equals("alloc") ? ",total" : "")
              + ",file="
              + dir.resolve(label + ".collapsed"));
      System.out.println("  (" + event + " profile: " + dir.resolve(label + ".collapsed") + ")");
    }
  }

  private void run(String command) {
    if (profiler == null) {
      return;
    }
    try {
      execute.invoke(profiler, command);
    } catch (ReflectiveOperationException e) {
      System.err.println("async-profiler " + command + ": " + e.getCause());
    }
  }
}
