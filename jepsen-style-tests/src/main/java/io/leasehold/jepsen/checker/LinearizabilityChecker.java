package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

/**
 * Linearizability of acquire/release/get per name against {@link LockModel}, with the
 * Wing–Gong–Lowe search (a depth-first search over linearization points with a cache of (linearized
 * set, model states) already explored, as in Lowe's "Testing for linearizability" and Porcupine).
 * FAIL operations never happened; INFO operations may take effect at any point after their
 * invocation, or never. The history is bounded per name and the search by a step budget, so the
 * check always ends: past the budget the verdict is UNKNOWN, never VALID.
 */
public final class LinearizabilityChecker implements Checker {
  private static final Set<String> LOCK_OPS = Set.of("acquire", "release", "get");
  private final String prefix;
  private final int maxOpsPerName;
  private final long stepBudget;

  public LinearizabilityChecker() {
    this("lock/lin-", 4_000, 20_000_000);
  }

  /**
   * Checks names starting with {@code prefix}, the first {@code maxOpsPerName} operations of each.
   */
  public LinearizabilityChecker(String prefix, int maxOpsPerName, long stepBudget) {
    this.prefix = prefix;
    this.maxOpsPerName = maxOpsPerName;
    this.stepBudget = stepBudget;
  }

  @Override
  public Verdict check(History h) {
    Map<String, List<Completed>> byName = new TreeMap<>();
    for (Completed c : h.completed()) {
      if (c.invoke().key().startsWith(prefix)
          && LOCK_OPS.contains(c.invoke().f())
          && c.type() != Op.Type.FAIL
          && !(c.type() == Op.Type.INFO && c.invoke().f().equals("get"))) {
        byName.computeIfAbsent(c.invoke().key(), n -> new ArrayList<>()).add(c);
      }
    }
    List<String> problems = new ArrayList<>();
    List<String> undecided = new ArrayList<>();
    int checked = 0;
    int truncated = 0;
    for (Map.Entry<String, List<Completed>> e : byName.entrySet()) {
      List<Completed> ops = e.getValue();
      ops.sort(Comparator.comparingLong(c -> c.invoke().nanos()));
      if (ops.size() > maxOpsPerName) {
        truncated += ops.size() - maxOpsPerName;
        ops = ops.subList(0, maxOpsPerName);
      }
      checked += ops.size();
      Outcome o = search(settleUnknowns(ops));
      if (o.result == Verdict.Result.INVALID) {
        problems.add(
            e.getKey()
                + ": no linearization; the search got stuck at "
                + o.stuckAt
                + " (after linearizing "
                + o.deepest
                + " of "
                + ops.size()
                + " operations)");
      } else if (o.result == Verdict.Result.UNKNOWN) {
        undecided.add(e.getKey());
      }
    }
    String summary =
        checked
            + " lock operations on "
            + byName.size()
            + " names"
            + (truncated > 0 ? " (" + truncated + " later ones beyond the bound not checked)" : "");
    if (problems.isEmpty() && !undecided.isEmpty()) {
      return Verdict.unknown(
          "linearizability", summary + "; search budget exhausted on " + undecided);
    }
    if (byName.isEmpty()) {
      return Verdict.unknown("linearizability", "no lock operations to check");
    }
    return Verdict.of("linearizability", problems, summary);
  }

  /**
   * Keeps the search small without losing soundness. An unknown release never needs to be
   * linearized (expiry alone can free a name), so it is dropped. An unknown acquisition matters
   * only if someone later saw its lease — a holder and token that no acknowledged grant explains:
   * then the earliest unknown acquisition by that holder, invoked before the sighting completed,
   * becomes a grant of that token completing at the sighting (its effect must precede it; an
   * earlier invocation only widens the interval). Unknown acquisitions never seen are dropped:
   * without them every constraint is only looser.
   */
  static List<Completed> settleUnknowns(List<Completed> ops) {
    // holder#token -> the earliest invocation of an acknowledged grant of it. A grant invoked after
    // a sighting completed cannot explain it: it is the holder acquiring its own lease again
    // (idempotent, same token), and the lease itself came from an earlier, unknown acquisition.
    Map<String, Long> known = new HashMap<>();
    for (Completed c : ops) {
      if (c.ok() && c.invoke().f().equals("acquire") && c.completion().value().equals("GRANTED")) {
        known.merge(
            c.invoke().holder().orElse("") + "#" + c.completion().token().getAsLong(),
            c.invoke().nanos(),
            Math::min);
      }
    }
    List<Completed> unknownAcquires = new ArrayList<>();
    List<Completed> out = new ArrayList<>();
    for (Completed c : ops) {
      if (c.type() == Op.Type.INFO) {
        if (c.invoke().f().equals("acquire")) {
          unknownAcquires.add(c);
        }
      } else {
        out.add(c);
      }
    }
    Set<Completed> used = new HashSet<>();
    List<Completed> sightings = new ArrayList<>(out);
    sightings.sort(Comparator.comparingLong(c -> c.completion().nanos()));
    for (Completed c : sightings) {
      if (!c.ok()
          || c.completion().holder().isEmpty()
          || c.completion().token().isEmpty()
          || !revealsLease(c)) {
        continue;
      }
      String holder = c.completion().holder().get();
      long token = c.completion().token().getAsLong();
      Long explainedFrom = known.get(holder + "#" + token);
      if (explainedFrom != null && explainedFrom < c.completion().nanos()) {
        continue;
      }
      for (Completed u : unknownAcquires) {
        if (!used.contains(u)
            && u.invoke().holder().orElse("").equals(holder)
            && u.invoke().nanos() < c.completion().nanos()) {
          used.add(u);
          known.put(holder + "#" + token, u.invoke().nanos());
          out.add(
              new Completed(
                  u.invoke(),
                  u.invoke()
                      .complete(
                          Op.Type.OK,
                          Optional.of(holder),
                          OptionalLong.of(token),
                          "GRANTED",
                          c.completion().nanos())));
          break;
        }
      }
    }
    out.sort(Comparator.comparingLong(c -> c.invoke().nanos()));
    return out;
  }

  /**
   * Whether a completed operation shows the server holding a lease with its holder and token: a
   * grant, a conflict, a read that found one, a release that released one. A release answered
   * NOT_HELD shows nothing: its token is the client's guess (possibly one it was never granted).
   */
  private static boolean revealsLease(Completed c) {
    return switch (c.invoke().f()) {
      case "release" -> c.completion().value().equals("RELEASED");
      case "acquire" ->
          c.completion().value().equals("GRANTED") || c.completion().value().equals("CONFLICT");
      default -> true;
    };
  }

  private record Outcome(Verdict.Result result, String stuckAt, int deepest) {}

  /** A doubly linked list of call and return entries in time order (Lowe's representation). */
  private static final class Entry {
    final int id;
    final Completed op;
    final boolean call;
    final long time;
    Entry match;
    Entry prev;
    Entry next;

    Entry(int id, Completed op, boolean call, long time) {
      this.id = id;
      this.op = op;
      this.call = call;
      this.time = time;
    }
  }

  private record Frame(Entry entry, Set<LockModel.State> states) {}

  private record CacheKey(BitSet linearized, Set<LockModel.State> states) {}

  private Outcome search(List<Completed> ops) {
    List<Entry> entries = new ArrayList<>(ops.size() * 2);
    for (int i = 0; i < ops.size(); i++) {
      Completed c = ops.get(i);
      Entry call = new Entry(i, c, true, c.invoke().nanos());
      Entry ret =
          new Entry(
              i, c, false, c.type() == Op.Type.INFO ? Long.MAX_VALUE : c.completion().nanos());
      call.match = ret;
      entries.add(call);
      entries.add(ret);
    }
    // Calls before returns at equal times: treat touching operations as concurrent.
    entries.sort(Comparator.comparingLong((Entry x) -> x.time).thenComparing(x -> !x.call));
    Entry head = new Entry(-1, null, false, Long.MIN_VALUE);
    Entry prev = head;
    for (Entry x : entries) {
      prev.next = x;
      x.prev = prev;
      prev = x;
    }
    Set<LockModel.State> states = Set.of(LockModel.INITIAL);
    BitSet linearized = new BitSet(ops.size());
    Set<CacheKey> cache = new HashSet<>();
    Deque<Frame> calls = new ArrayDeque<>();
    Entry entry = head.next;
    long steps = 0;
    int deepest = 0;
    String stuck = "";
    while (head.next != null) {
      if (++steps > stepBudget) {
        return new Outcome(Verdict.Result.UNKNOWN, "", deepest);
      }
      if (entry.call) {
        Set<LockModel.State> next = new HashSet<>();
        for (LockModel.State s : states) {
          next.addAll(LockModel.step(s, entry.op));
        }
        boolean moved = false;
        if (!next.isEmpty()) {
          BitSet l = (BitSet) linearized.clone();
          l.set(entry.id);
          if (cache.add(new CacheKey(l, Set.copyOf(next)))) {
            calls.push(new Frame(entry, states));
            states = Set.copyOf(next);
            linearized.set(entry.id);
            lift(entry);
            entry = head.next;
            moved = true;
            if (calls.size() > deepest) {
              deepest = calls.size();
            }
          }
        }
        if (!moved) {
          if (calls.size() >= deepest) {
            stuck = entry.op.invoke() + " -> " + entry.op.completion() + " from states " + states;
          }
          entry = entry.next;
        }
      } else {
        if (calls.isEmpty()) {
          return new Outcome(Verdict.Result.INVALID, stuck, deepest);
        }
        Frame f = calls.pop();
        states = f.states;
        linearized.clear(f.entry.id);
        unlift(f.entry);
        entry = f.entry.next;
      }
    }
    return new Outcome(Verdict.Result.VALID, "", deepest);
  }

  private static void lift(Entry call) {
    call.prev.next = call.next;
    if (call.next != null) {
      call.next.prev = call.prev;
    }
    Entry ret = call.match;
    ret.prev.next = ret.next;
    if (ret.next != null) {
      ret.next.prev = ret.prev;
    }
  }

  private static void unlift(Entry call) {
    Entry ret = call.match;
    ret.prev.next = ret;
    if (ret.next != null) {
      ret.next.prev = ret;
    }
    call.prev.next = call;
    if (call.next != null) {
      call.next.prev = call;
    }
  }
}
