package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import java.util.ArrayList;
import java.util.List;

/**
 * Handoff: every acknowledged transfer granted the new holder a token larger than the one it ended,
 * and the name was never free in between: no acknowledged grant of the name carries a token between
 * the two (a token is the log position of its grant, so such a grant would have been applied after
 * the ended lease was granted and before the transfer, which the transfer's token guard would then
 * have refused).
 */
public final class TransferChecker implements Checker {
  @Override
  public Verdict check(History h) {
    List<String> problems = new ArrayList<>();
    List<Completed> grants = Grants.of(h);
    int transfers = 0;
    for (Completed t : h.completed()) {
      if (!t.ok()
          || !t.invoke().f().equals("transfer")
          || !t.completion().value().equals("TRANSFERRED")) {
        continue;
      }
      transfers++;
      long ended = t.invoke().token().orElseThrow();
      long granted = t.completion().token().orElseThrow();
      String name = t.invoke().key();
      if (granted <= ended) {
        problems.add(
            name
                + ": transfer "
                + t.completion()
                + " granted token "
                + granted
                + ", not larger than the "
                + ended
                + " it ended");
      }
      for (Completed g : grants) {
        long token = Grants.token(g);
        if (g.invoke().key().equals(name) && token > ended && token < granted) {
          problems.add(
              name
                  + ": "
                  + g.completion()
                  + " was granted token "
                  + token
                  + " between the lease a transfer ended ("
                  + ended
                  + ") and the one it granted ("
                  + granted
                  + "): the name was free in between");
        }
      }
    }
    return Verdict.of(
        "transfer",
        problems,
        transfers + " acknowledged transfers, each with a larger token and no grant between");
  }
}
