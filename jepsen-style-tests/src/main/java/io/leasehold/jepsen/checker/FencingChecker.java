package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.RegisterWrite;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fencing: every token the cluster granted is unique (one name, one holder) and grants that do not
 * overlap in real time got increasing tokens; per resource, the tokens the fenced register accepted
 * never go down, and each was granted for that resource.
 *
 * <p>On a cluster with lease groups the first two hold per namespace, as the README promises
 * (tokens compare within a namespace: names of different namespaces are granted by different Raft
 * groups, whose tokens are unrelated): {@link #perNamespace()} checks them so.
 */
public final class FencingChecker implements Checker {
  private final boolean perNamespace;

  /** Tokens unique and increasing over every grant of the cluster. */
  public FencingChecker() {
    this(false);
  }

  private FencingChecker(boolean perNamespace) {
    this.perNamespace = perNamespace;
  }

  /** Tokens unique and increasing over every grant in one namespace, for lease groups. */
  public static FencingChecker perNamespace() {
    return new FencingChecker(true);
  }

  /** The grants whose tokens must be unique and increasing together. */
  private String scope(Completed g) {
    String name = g.invoke().key();
    int slash = name.indexOf('/');
    return !perNamespace ? "" : slash < 0 ? name : name.substring(0, slash);
  }

  @Override
  public Verdict check(History h) {
    List<String> problems = new ArrayList<>();
    List<Completed> all = Grants.of(h);
    Map<String, List<Completed>> scopes = new java.util.TreeMap<>();
    for (Completed g : all) {
      scopes.computeIfAbsent(scope(g), s -> new ArrayList<>()).add(g);
    }
    Set<String> grantedFor = new HashSet<>();
    for (Completed g : all) {
      grantedFor.add(g.invoke().key() + "#" + Grants.token(g));
    }
    for (List<Completed> grants : scopes.values()) {
      checkTokens(h, grants, problems);
    }
    checkRegister(h, grantedFor, problems);
    return Verdict.of(
        "fencing",
        problems,
        all.size()
            + " grants with unique tokens"
            + (perNamespace ? " in each of " + scopes.size() + " namespaces" : "")
            + "; "
            + registerSummary(h));
  }

  /** Uniqueness and real-time order of the tokens of {@code grants}, one scope's. */
  private static void checkTokens(History h, List<Completed> grants, List<String> problems) {
    Map<Long, Completed> byToken = new HashMap<>();
    for (Completed g : grants) {
      long t = Grants.token(g);
      Completed first = byToken.putIfAbsent(t, g);
      if (first != null
          && !(first.invoke().key().equals(g.invoke().key())
              && Grants.holder(first).equals(Grants.holder(g)))) {
        problems.add(
            "token " + t + " granted twice: " + first.completion() + " and " + g.completion());
      }
    }
    // Real-time order: a grant invoked after another completed must carry a larger token
    // (the token derives from the granting command's log position). Same token = the same lease
    // renewed.
    List<Completed> byCompletion = new ArrayList<>(grants);
    byCompletion.sort(Comparator.comparingLong(c -> c.completion().nanos()));
    List<Completed> byInvoke = new ArrayList<>(grants);
    byInvoke.sort(Comparator.comparingLong(c -> c.invoke().nanos()));
    // A holder acquiring the lease it already holds is answered GRANTED with that lease's (older)
    // token: such a repeat is not a new grant, and only new grants must carry larger tokens.
    Map<Long, Long> firstCompleted = new HashMap<>();
    for (Completed g : grants) {
      firstCompleted.merge(Grants.token(g), g.completion().nanos(), Math::min);
    }
    // The same holds when the earlier grant of the lease is unknown: an acquisition,
    // registration or transfer (to the invoke's holder) that timed out may have taken effect, and
    // the holder's next acquisition is answered with that lease. Such a grant is judged only by
    // token uniqueness and the register.
    Map<String, Long> firstUnknown = new HashMap<>();
    for (Completed c : h.completed()) {
      if (c.type() == Op.Type.INFO
          && (c.invoke().f().equals("acquire")
              || c.invoke().f().equals("register")
              || c.invoke().f().equals("transfer"))) {
        firstUnknown.merge(
            c.invoke().key() + "#" + c.invoke().holder().orElse(""), c.invoke().nanos(), Math::min);
      }
    }
    int done = 0;
    Completed maxDone = null;
    for (Completed g : byInvoke) {
      if (firstCompleted.get(Grants.token(g)) < g.invoke().nanos()) {
        continue; // a repeat of a grant already completed
      }
      Long unknown = firstUnknown.get(g.invoke().key() + "#" + g.invoke().holder().orElse(""));
      if (unknown != null && unknown < g.invoke().nanos()) {
        continue; // maybe a repeat of a grant whose answer was lost
      }
      while (done < byCompletion.size()
          && byCompletion.get(done).completion().nanos() < g.invoke().nanos()) {
        Completed c = byCompletion.get(done++);
        if (maxDone == null || Grants.token(c) > Grants.token(maxDone)) {
          maxDone = c;
        }
      }
      if (maxDone != null && Grants.token(g) < Grants.token(maxDone)) {
        problems.add(
            "token went back: "
                + g.completion()
                + " was invoked after "
                + maxDone.completion()
                + " completed");
      }
    }
  }

  private static String registerSummary(History h) {
    long accepted = h.registerWrites().stream().filter(RegisterWrite::accepted).count();
    return accepted
        + " register writes accepted, "
        + (h.registerWrites().size() - accepted)
        + " stale ones refused";
  }

  /** Per resource, the register's accepted tokens never go down, each granted for it. */
  private static void checkRegister(History h, Set<String> grantedFor, List<String> problems) {
    Map<String, RegisterWrite> highest = new HashMap<>();
    List<RegisterWrite> writes = new ArrayList<>(h.registerWrites());
    writes.sort(Comparator.comparingLong(RegisterWrite::seq));
    for (RegisterWrite w : writes) {
      if (!w.accepted()) {
        continue;
      }
      RegisterWrite top = highest.get(w.resource());
      if (top != null && w.token() < top.token()) {
        problems.add(
            "register "
                + w.resource()
                + " accepted token "
                + w.token()
                + " (write "
                + w.seq()
                + " by "
                + w.client()
                + ") after token "
                + top.token()
                + " (write "
                + top.seq()
                + " by "
                + top.client()
                + ")");
      }
      if (top == null || w.token() > top.token()) {
        highest.put(w.resource(), w);
      }
      if (!grantedFor.contains(w.resource() + "#" + w.token())) {
        problems.add(
            "register "
                + w.resource()
                + " accepted token "
                + w.token()
                + " (write "
                + w.seq()
                + ") that no acknowledged grant of that name carried");
      }
    }
  }
}
