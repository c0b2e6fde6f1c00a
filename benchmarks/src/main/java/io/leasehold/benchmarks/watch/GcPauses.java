package io.leasehold.benchmarks.watch;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * The JVM's stop-the-world GC pauses, from its GC notifications, so a run can say how many of them
 * fell in its recorded period and how long they were. On two cores every node of the in-process
 * cluster stops in each pause, and a latency p99 over 50 ms was, in one set of runs, the young
 * collections' 40-120 ms pauses more than anything the code did.
 *
 * <p>Collectors whose beans report concurrent cycles (ZGC's and Shenandoah's "... Cycles") are left
 * out: those durations are not pauses. G1's beans (Young, Old, and from JDK 20 Concurrent GC for
 * remark and cleanup) report pauses only.
 */
final class GcPauses {
  private record Pause(String collector, double millis) {}

  private static final List<Pause> PAUSES = new ArrayList<>();
  private static boolean listening;

  private GcPauses() {}

  /** Starts listening (once per JVM); call before the first period to be reported. */
  static synchronized void listen() {
    if (listening) {
      return;
    }
    listening = true;
    for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (bean.getName().endsWith("Cycles") || !(bean instanceof NotificationEmitter emitter)) {
        continue;
      }
      emitter.addNotificationListener(
          (notification, handback) -> {
            if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
                notification.getType())) {
              GarbageCollectionNotificationInfo info =
                  GarbageCollectionNotificationInfo.from(
                      (CompositeData) notification.getUserData());
              record(new Pause(info.getGcName(), info.getGcInfo().getDuration()));
            }
          },
          null,
          null);
    }
  }

  private static synchronized void record(Pause pause) {
    PAUSES.add(pause);
  }

  /** A point to report from: pauses noted after it belong to the period. */
  static synchronized int mark() {
    return PAUSES.size();
  }

  /**
   * One line on the pauses noted since {@code mark} (taken at the period's start), as of now. The
   * JVM reports a pause just after it ends, so one ending at the period's edge may fall either
   * side.
   */
  static synchronized String since(int mark, double wallSeconds) {
    if (!listening) {
      return "GC pauses: not recorded";
    }
    List<Pause> period = PAUSES.subList(Math.min(mark, PAUSES.size()), PAUSES.size());
    double total = 0;
    double longest = 0;
    int overGoal = 0;
    TreeMap<String, Integer> byCollector = new TreeMap<>();
    List<Double> sorted = new ArrayList<>();
    for (Pause p : period) {
      total += p.millis();
      longest = Math.max(longest, p.millis());
      overGoal += p.millis() > 20 ? 1 : 0;
      byCollector.merge(p.collector(), 1, Integer::sum);
      sorted.add(p.millis());
    }
    sorted.sort(null);
    double median = sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 2);
    return String.format(
        Locale.ROOT,
        "GC pauses: %d (%s), %.0f ms in all = %.1f%% of %.1f s; median %.1f ms, longest %.1f ms, %d over 20 ms (the launcher's pause goal)",
        period.size(),
        byCollector.isEmpty() ? "none" : byCollector.toString().replaceAll("[{}]", ""),
        total,
        wallSeconds > 0 ? total / 10 / wallSeconds : 0,
        wallSeconds,
        median,
        longest,
        overGoal);
  }
}
