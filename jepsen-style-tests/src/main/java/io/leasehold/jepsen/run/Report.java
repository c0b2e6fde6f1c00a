package io.leasehold.jepsen.run;

import io.leasehold.jepsen.checker.Verdict;
import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.cluster.NodeProcess.SelfExit;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.nemesis.Timeline;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Writes a run's report under its directory: {@code report.md} (setup, skipped nemeses, faults,
 * operation counts, verdicts with the offending operations, the timeline, node log tails), {@code
 * history.jsonl} (every operation), {@code timeline.txt}, and the nodes' own logs.
 */
final class Report {
  private Report() {}

  static Path write(
      Path dir,
      String title,
      String setup,
      Cluster cluster,
      History h,
      Timeline timeline,
      List<Verdict> verdicts,
      long elapsedMillis) {
    try {
      writeHistory(dir.resolve("history.jsonl"), h);
      Files.write(
          dir.resolve("timeline.txt"), timeline.entries().stream().map(Object::toString).toList());
      StringBuilder b = new StringBuilder();
      boolean failed = verdicts.stream().anyMatch(Verdict::failed);
      b.append("# ").append(title).append(failed ? " — FAILED" : " — passed").append("\n\n");
      b.append(setup).append("\n");
      b.append("Ran ")
          .append(elapsedMillis / 1000)
          .append(" s; ")
          .append(opSummary(h))
          .append("\n\n");
      b.append("## Verdicts\n\n");
      for (Verdict v : verdicts) {
        b.append("- **")
            .append(v.checker())
            .append("**: ")
            .append(v.result())
            .append(" — ")
            .append(v.summary())
            .append('\n');
        v.problems().forEach(p -> b.append("    - ").append(p).append('\n'));
      }
      b.append("\n## Faults injected\n\n");
      timeline
          .faults()
          .forEach((k, n) -> b.append("- ").append(k).append(": ").append(n).append('\n'));
      if (!timeline.skippedNemeses().isEmpty()) {
        b.append("\n## Skipped nemeses\n\n");
        timeline
            .skippedNemeses()
            .forEach((k, why) -> b.append("- ").append(k).append(": ").append(why).append('\n'));
      }
      List<SelfExit> exits =
          cluster == null
              ? List.of()
              : cluster.nodes().stream()
                  .flatMap(n -> n.selfExits().stream())
                  .sorted(Comparator.comparing(SelfExit::at))
                  .toList();
      b.append("\n## Nodes that stopped on their own\n\n").append(exits.isEmpty() ? "none\n" : "");
      exits.forEach(e -> b.append("- ").append(e).append('\n'));
      b.append("\n## Unfenced log\n\n").append(unfencedSummary(h)).append("\n");
      b.append("\n## Nemesis timeline\n\n```\n");
      timeline.entries().forEach(e -> b.append(e).append('\n'));
      b.append("```\n\n## Node logs (last 40 lines each; whole logs beside this file)\n\n```\n")
          .append(cluster == null ? "" : cluster.tails(40))
          .append("```\n");
      Path report = dir.resolve("report.md");
      Files.writeString(report, b.toString());
      return report;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String opSummary(History h) {
    Map<String, Map<Op.Type, Long>> counts = new TreeMap<>();
    for (Op op : h.ops()) {
      if (!op.isInvoke()) {
        counts.computeIfAbsent(op.f(), f -> new TreeMap<>()).merge(op.type(), 1L, Long::sum);
      }
    }
    long invoked = h.ops().stream().filter(Op::isInvoke).count();
    return invoked
        + " operations ("
        + counts.entrySet().stream()
            .map(e -> e.getKey() + " " + e.getValue())
            .collect(Collectors.joining(", "))
        + "), "
        + h.registerWrites().size()
        + " fenced writes, "
        + h.watchedEvents().size()
        + " watch events received";
  }

  /**
   * How often the unfenced log took writes from a holder whose token was already superseded: what
   * fencing prevented.
   */
  static String unfencedSummary(History h) {
    Map<String, Long> highest = new TreeMap<>();
    long stale = 0;
    for (var w : h.unfencedWrites()) {
      long top = highest.getOrDefault(w.resource(), 0L);
      if (w.token() < top) {
        stale++;
      }
      highest.put(w.resource(), Math.max(top, w.token()));
    }
    return h.unfencedWrites().size()
        + " writes, of which "
        + stale
        + " came from a holder whose token had been superseded (a paused or slow holder): the fenced register refused "
        + h.registerWrites().stream().filter(w -> !w.accepted()).count()
        + " such writes.";
  }

  private static void writeHistory(Path file, History h) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      for (Op op : h.ops()) {
        w.write(
            "{\"id\":"
                + op.id()
                + ",\"process\":"
                + op.process()
                + ",\"type\":\""
                + op.type()
                + "\",\"f\":\""
                + op.f()
                + "\",\"key\":\""
                + json(op.key())
                + "\""
                + op.holder().map(x -> ",\"holder\":\"" + json(x) + "\"").orElse("")
                + (op.token().isPresent() ? ",\"token\":" + op.token().getAsLong() : "")
                + ",\"value\":\""
                + json(op.value())
                + "\",\"nanos\":"
                + op.nanos()
                + "}\n");
      }
      for (var v : h.validities()) {
        w.write(
            "{\"validity\":\""
                + json(v.name())
                + "\",\"client\":\""
                + json(v.client())
                + "\",\"token\":"
                + v.token()
                + ",\"from\":"
                + v.fromNanos()
                + ",\"until\":"
                + v.untilNanos()
                + "}\n");
      }
      for (var r : h.registerWrites()) {
        w.write(
            "{\"register\":\""
                + json(r.resource())
                + "\",\"seq\":"
                + r.seq()
                + ",\"client\":\""
                + json(r.client())
                + "\",\"token\":"
                + r.token()
                + ",\"accepted\":"
                + r.accepted()
                + ",\"nanos\":"
                + r.nanos()
                + "}\n");
      }
      for (var e : h.watchedEvents()) {
        w.write(
            "{\"watcher\":\""
                + json(e.watcher())
                + "\",\"revision\":"
                + e.revision()
                + ",\"event\":\""
                + e.type()
                + "\",\"name\":\""
                + json(e.name())
                + "\",\"token\":"
                + e.token()
                + "}\n");
      }
      for (var p : h.liveness()) {
        w.write(
            "{\"liveness\":\""
                + json(p.name())
                + "\",\"healed\":"
                + p.healedNanos()
                + ",\"granted\":"
                + (p.grantedNanos().isPresent() ? p.grantedNanos().getAsLong() : "null")
                + "}\n");
      }
    }
  }

  private static String json(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }
}
