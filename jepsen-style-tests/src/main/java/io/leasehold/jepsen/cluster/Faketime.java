package io.leasehold.jepsen.cluster;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * libfaketime (Debian's {@code faketime} package), preloaded into a node so that its wall clock can
 * be moved while it runs: the node reads its offset from a file once a second. Only the wall clock
 * is faked: the design (DESIGN.md §3) times leases on the monotonic clock, whose rate is assumed
 * right; a monotonic clock that jumps is outside the fault model.
 */
public final class Faketime {
  private static final List<String> CANDIDATES =
      List.of(
          "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
          "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
          "/usr/lib/faketime/libfaketime.so.1");
  private final Path library;

  private Faketime(Path library) {
    this.library = library;
  }

  /**
   * The library if clock faults are wanted ({@code -Djepsen.faketime=false} turns them off), it is
   * installed, it really moves the wall clock of a process that preloads it, and a JVM's timed
   * waits still work under it. libfaketime 0.9.10 switches on its "monotonic fix" for glibc by
   * itself, and that makes every timed wait of a JVM return at once: the nodes spun and stopped
   * committing (13,706 acquisitions in 40 s without the preload, 1 with it). {@code
   * FAKETIME_FORCE_MONOTONIC_FIX=0} turns the fix off; the probe checks that it did.
   */
  public static Optional<Faketime> find(StringBuilder why) {
    if (!Boolean.parseBoolean(System.getProperty("jepsen.faketime", "true"))) {
      why.append("off: -Djepsen.faketime=false");
      return Optional.empty();
    }
    Optional<Path> lib = CANDIDATES.stream().map(Path::of).filter(Files::isReadable).findFirst();
    if (lib.isEmpty()) {
      why.append("libfaketime not found (install Debian's faketime package; looked in ")
          .append(CANDIDATES)
          .append(")");
      return Optional.empty();
    }
    Shell.Result probe =
        Shell.run(
            List.of("date", "-u", "+%Y"),
            List.of("LD_PRELOAD=" + lib.get(), "FAKETIME=@2001-02-03 04:05:06"));
    if (!probe.ok() || !probe.output().endsWith("2001")) {
      why.append("libfaketime at ")
          .append(lib.get())
          .append(" does not load: date printed ")
          .append(probe.output());
      return Optional.empty();
    }
    Faketime f = new Faketime(lib.get());
    Optional<String> broken = f.breaksTimedWaits();
    if (broken.isPresent()) {
      why.append("libfaketime at ")
          .append(lib.get())
          .append(" breaks a JVM's timed waits: ")
          .append(broken.get());
      return Optional.empty();
    }
    return Optional.of(f);
  }

  /** Runs {@link TimedWaitProbe} under the preload, with a clock an hour ahead. */
  private Optional<String> breaksTimedWaits() {
    try {
      Path offset = Files.createTempFile("leasehold-faketime-probe", ".txt");
      try {
        Files.writeString(offset, "+3600s\n");
        String classes =
            Path.of(
                    TimedWaitProbe.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString();
        Shell.Result r =
            Shell.run(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xshare:auto",
                    "-XX:TieredStopAtLevel=1",
                    "-cp",
                    classes,
                    TimedWaitProbe.class.getName()),
                environment(offset));
        String out = r.output().strip();
        String last = out.isEmpty() ? "" : out.lines().reduce((a, b) -> b).orElse("");
        if (!r.ok() || !last.matches("\\d+")) {
          return Optional.of("the probe JVM failed: " + out);
        }
        long waits = Long.parseLong(last);
        // Half a second of 50 ms waits is 10; allow for a slow start, never for spinning.
        return waits <= 20
            ? Optional.empty()
            : Optional.of(waits + " timed waits of 50 ms returned within 0.5 s");
      } finally {
        Files.deleteIfExists(offset);
      }
    } catch (IOException | URISyntaxException e) {
      return Optional.of("could not run the probe: " + e);
    }
  }

  /** Environment for a process whose wall-clock offset is read from {@code offsetFile}. */
  public List<String> environment(Path offsetFile) {
    return List.of(
        "LD_PRELOAD=" + library,
        "FAKETIME_TIMESTAMP_FILE=" + offsetFile.toAbsolutePath(),
        "FAKETIME_CACHE_DURATION=1",
        "FAKETIME_DONT_FAKE_MONOTONIC=1",
        "FAKETIME_FORCE_MONOTONIC_FIX=0");
  }

  @Override
  public String toString() {
    return library.toString();
  }
}
