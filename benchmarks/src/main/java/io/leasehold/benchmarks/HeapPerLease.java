// How to run (from the repository root):
//
//   mvn -B -q -pl benchmarks -am package -DskipTests && \
//     java -Xmx2g -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.HeapPerLease
// [leases]
//
// Deterministic (it counts objects, it does not time anything), so one run is enough.
package io.leasehold.benchmarks;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.store.RocksDbStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one live lease keeps on a replica's heap: the objects and bytes the state machine holds for
 * it (the lease map, its index), counted from the JVM's live-object histogram before and after
 * applying N acquisitions of new names over a real {@link RocksDbStore}.
 *
 * <p>Each entry is parsed from its wire bytes, as a replica applies it, so the request's strings
 * are fresh objects per entry, as they are in a cluster. Half the leases go to one holder (as a
 * runner or the fan-out benchmark holds many), half to a holder each (as registry instances do).
 * Ratis's own per-write state (its log cache, its retry cache) is not here: only the state
 * machine's. Every young collection copies what a new lease keeps until it is tenured, and scans
 * the cards its stores dirtied, so its object count is the figure to watch.
 */
public final class HeapPerLease {
  public static void main(String[] args) throws Exception {
    int leases = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    Path dir = Files.createTempDirectory("leasehold-heap-per-lease");
    try (RocksDbStore store = RocksDbStore.open(dir.resolve("db"))) {
      LeaseCore core = new LeaseCore(store);
      Duration ttl = Duration.newBuilder().setSeconds(1800).build();
      long index = 0;
      long time = 1_700_000_000_000_000L;
      // Warm the classes and the store so that the "before" histogram holds their one-off state.
      for (int i = 0; i < 1_000; i++) {
        index = acquire(core, index, ++time, "warm/" + i, "warm-holder", ttl);
      }
      Map<String, Histogram.Row> before = Histogram.take();
      for (int i = 0; i < leases; i++) {
        String holder = i % 2 == 0 ? "bench-client" : "instance-" + i;
        index = acquire(core, index, ++time, "bench/" + i, holder, ttl);
      }
      Map<String, Histogram.Row> after = Histogram.take();
      if (core.liveLeases() != leases + 1_000) {
        throw new IllegalStateException(
            "expected " + (leases + 1_000) + " live leases, found " + core.liveLeases());
      }
      report(before, after, leases);
    } finally {
      Dirs.deleteRecursively(dir);
    }
  }

  private static long acquire(
      LeaseCore core, long index, long time, String name, String holder, Duration ttl)
      throws Exception {
    byte[] wire =
        LogCommand.newBuilder()
            .setLeaderTimeMicros(time)
            .setAcquire(AcquireRequest.newBuilder().setName(name).setHolder(holder).setTtl(ttl))
            .build()
            .toByteArray();
    ApplyResult r = core.apply(1, ++index, LogCommand.parseFrom(wire));
    if (r.reply().getAcquire().getOutcome() != Outcome.GRANTED) {
      throw new IllegalStateException("not granted: " + r.reply());
    }
    return index;
  }

  private static void report(
      Map<String, Histogram.Row> before, Map<String, Histogram.Row> after, int leases) {
    List<Histogram.Growth> grown = Histogram.growth(before, after, leases);
    Histogram.Growth all = Histogram.total(before, after, leases);
    System.out.printf(Locale.ROOT, "%,d leases applied; the live heap grew, per lease:%n", leases);
    System.out.printf(Locale.ROOT, "  %8s %8s  %s%n", "objects", "bytes", "class");
    for (Histogram.Growth g : grown) {
      System.out.printf(Locale.ROOT, "  %8.2f %8.1f  %s%n", g.instances(), g.bytes(), g.type());
    }
    System.out.printf(Locale.ROOT, "  %8.2f %8.1f  in all%n", all.instances(), all.bytes());
  }

  private HeapPerLease() {}
}
