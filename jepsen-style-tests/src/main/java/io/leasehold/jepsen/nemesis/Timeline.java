package io.leasehold.jepsen.nemesis;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What the nemeses did and when (monotonic and wall clock), and how many faults of each kind. */
public final class Timeline {
  public record Entry(long nanos, Instant at, String nemesis, String phase, String what) {
    @Override
    public String toString() {
      return at + " " + String.format("%-26s", nemesis + " " + phase) + " " + what;
    }
  }

  private final List<Entry> entries = new ArrayList<>();
  private final Map<String, Integer> faults = new TreeMap<>();
  private final Map<String, String> skipped = new TreeMap<>();

  public synchronized void record(Nemesis n, String phase, String what) {
    entries.add(new Entry(System.nanoTime(), Instant.now(), n.name(), phase, what));
    if (phase.equals("start")) {
      faults.merge(n.kind(), 1, Integer::sum);
    }
  }

  /** Adds faults a nemesis injected on its own during one start (leader churn's moves). */
  public synchronized void addFaults(String kind, int more) {
    faults.merge(kind, more, Integer::sum);
  }

  public synchronized void skipped(Nemesis n, String why) {
    skipped.put(n.name(), why);
  }

  public synchronized List<Entry> entries() {
    return List.copyOf(entries);
  }

  public synchronized Map<String, Integer> faults() {
    return Map.copyOf(faults);
  }

  public synchronized Map<String, String> skippedNemeses() {
    return Map.copyOf(skipped);
  }

  public synchronized long lastHealNanos() {
    return entries.stream()
        .filter(e -> e.phase().equals("heal"))
        .mapToLong(Entry::nanos)
        .max()
        .orElse(System.nanoTime());
  }
}
