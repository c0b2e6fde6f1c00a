package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import java.util.ArrayList;
import java.util.List;

/**
 * All or nothing: every acknowledged all-or-nothing acquisition of many names granted all of them
 * or none ({@code acquire-all-or-nothing} completed ALL or NONE, never SOME).
 */
public final class AllOrNothingChecker implements Checker {
  static final String F = "acquire-all-or-nothing";

  @Override
  public Verdict check(History h) {
    List<String> problems = new ArrayList<>();
    int all = 0;
    int none = 0;
    for (Completed c : h.completed()) {
      if (!c.ok() || !c.invoke().f().equals(F)) {
        continue;
      }
      switch (c.completion().value()) {
        case "ALL" -> all++;
        case "NONE" -> none++;
        default ->
            problems.add(
                c.invoke().key()
                    + ": an all-or-nothing acquisition by "
                    + Grants.holder(c)
                    + " answered "
                    + c.completion().value()
                    + ": some names granted and some not");
      }
    }
    return Verdict.of(
        "all-or-nothing",
        problems,
        all + " all-or-nothing acquisitions granted every name, " + none + " granted none");
  }
}
