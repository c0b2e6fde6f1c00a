package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Namespace moves ({@code NamespaceMoveWorkload}): how many were done, abandoned or unanswered, and
 * that the epochs they answered with never went back in a namespace (a move answered later may have
 * finished earlier, so only the highest epoch so far is compared). The leases, tokens and owners of
 * the moved namespaces are the other checkers' to judge. UNKNOWN if no move was done: the run then
 * tested nothing of moves.
 */
public final class MoveChecker implements Checker {
  @Override
  public Verdict check(History h) {
    int done = 0;
    int failed = 0;
    int unanswered = 0;
    List<String> problems = new ArrayList<>();
    Map<String, Long> highest = new HashMap<>();
    List<Completed> moves =
        h.completed().stream().filter(c -> c.invoke().f().equals("move")).toList();
    for (Completed c : moves) {
      Op.Type t = c.type();
      if (t == Op.Type.OK) {
        done++;
        long epoch = c.completion().token().orElse(0);
        String ns = c.invoke().key();
        if (epoch < 1) {
          problems.add("a move answered without an epoch: " + c.completion());
        }
        highest.merge(ns, epoch, Math::max);
      } else if (t == Op.Type.FAIL) {
        failed++;
      } else {
        unanswered++;
      }
    }
    String summary =
        done
            + " moves done, "
            + failed
            + " refused or abandoned, "
            + unanswered
            + " unanswered; epochs reached "
            + new java.util.TreeMap<>(highest);
    if (done == 0) {
      return Verdict.unknown("moves", "no move was done: " + summary);
    }
    return Verdict.of("moves", problems, summary);
  }
}
