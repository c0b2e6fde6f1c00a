package io.leasehold.jepsen.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * libfaketime (Debian's {@code faketime} package), preloaded into a node so that its wall clock
 * can be moved while it runs: the node reads its offset from a file once a second. Only the wall
 * clock is faked: the design (DESIGN.md §3) times leases on the monotonic clock, whose rate is
 * assumed right; a monotonic clock that jumps is outside the fault model.
 */
public final class Faketime {
  private static final List<String> CANDIDATES = List.of(
      "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
      "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
      "/usr/lib/faketime/libfaketime.so.1");
  private final Path library;

  private Faketime(Path library) {
    this.library = library;
  }

  /**
   * The library if clock faults are asked for ({@code -Djepsen.faketime=true}), it is installed, and
   * it really moves the clock of a process that preloads it. Off by default: preloaded into a
   * node, libfaketime also intercepts the JVM's timed waits, and on this project's machine the
   * nodes then stopped committing (13,706 acquisitions in 40 s without it, 1 with it).
   */
  public static Optional<Faketime> find(StringBuilder why) {
    if (!Boolean.getBoolean("jepsen.faketime")) {
      why.append("off: libfaketime preloaded into a node stalls it (it also fakes the JVM's timed waits); -Djepsen.faketime=true turns it on");
      return Optional.empty();
    }
    Optional<Path> lib = CANDIDATES.stream().map(Path::of).filter(Files::isReadable).findFirst();
    if (lib.isEmpty()) {
      why.append("libfaketime not found (install Debian's faketime package; looked in ").append(CANDIDATES).append(")");
      return Optional.empty();
    }
    Shell.Result probe = Shell.run(List.of("date", "-u", "+%Y"), List.of("LD_PRELOAD=" + lib.get(), "FAKETIME=@2001-02-03 04:05:06"));
    if (!probe.ok() || !probe.output().endsWith("2001")) {
      why.append("libfaketime at ").append(lib.get()).append(" does not load: date printed ").append(probe.output());
      return Optional.empty();
    }
    return Optional.of(new Faketime(lib.get()));
  }

  /** Environment for a process whose wall-clock offset is read from {@code offsetFile}. */
  public List<String> environment(Path offsetFile) {
    return List.of("LD_PRELOAD=" + library, "FAKETIME_TIMESTAMP_FILE=" + offsetFile.toAbsolutePath(),
        "FAKETIME_CACHE_DURATION=1", "FAKETIME_DONT_FAKE_MONOTONIC=1");
  }

  @Override
  public String toString() {
    return library.toString();
  }
}
