package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.Op;
import java.util.HashSet;
import java.util.Set;

/**
 * The sequential specification of one name as a lock with leases that may expire: a state is the
 * holder and token (or free) and the highest token granted so far. Expiry is not an operation the
 * clients see, so before any operation a held lock may have become free (the exclusion checker
 * judges timing; this one judges order: tokens, holders, releases and reads).
 *
 * <p>A token learned from an unknown (INFO) acquisition is unbound until an operation reveals it.
 */
final class LockModel {
  static final long UNBOUND = -1;

  /** {@code holder} null: free. */
  record State(String holder, long token, long maxToken) {
    State free() {
      return holder == null ? this : new State(null, UNBOUND, maxToken);
    }

    boolean heldBy(String h) {
      return holder != null && holder.equals(h);
    }

    /**
     * Whether this state's token can be {@code t}: it is, or it is unbound and {@code t} is new.
     */
    boolean tokenMatches(long t) {
      return token == t || token == UNBOUND && t > maxToken;
    }

    State bind(long t) {
      return token == UNBOUND ? new State(holder, t, Math.max(maxToken, t)) : this;
    }
  }

  static final State INITIAL = new State(null, UNBOUND, 0);

  private LockModel() {}

  /**
   * Every state {@code s} may move to by applying {@code c} (after an expiry, or not); empty:
   * impossible.
   */
  static Set<State> step(State s, Completed c) {
    Set<State> out = new HashSet<>();
    for (State from : s.holder == null ? Set.of(s) : Set.of(s, s.free())) {
      apply(from, c, out);
    }
    if (c.type() == Op.Type.INFO) {
      out.add(s);
      out.add(s.free());
    }
    return out;
  }

  private static void apply(State s, Completed c, Set<State> out) {
    Op inv = c.invoke();
    Op ret = c.completion();
    String me = inv.holder().orElse("");
    boolean unknown = c.type() == Op.Type.INFO;
    switch (inv.f()) {
      case "acquire" -> {
        if (unknown) {
          if (s.holder == null) {
            out.add(new State(me, UNBOUND, s.maxToken));
          } else if (s.heldBy(me)) {
            out.add(s);
          }
          return;
        }
        String outcome = ret.value();
        if (outcome.equals("GRANTED")) {
          long t = ret.token().orElseThrow();
          if (s.heldBy(me) && s.tokenMatches(t)) {
            out.add(s.bind(t));
          } else if (s.holder == null && t > s.maxToken) {
            out.add(new State(me, t, t));
          }
        } else if (outcome.equals("CONFLICT")) {
          String h = ret.holder().orElse("");
          long t = ret.token().orElse(UNBOUND);
          if (s.heldBy(h) && !h.equals(me) && s.tokenMatches(t)) {
            out.add(s.bind(t));
          }
        } else {
          out.add(s); // REJECTED: no change
        }
      }
      case "release" -> {
        long t = inv.token().orElseThrow();
        boolean mine = s.heldBy(me) && s.tokenMatches(t);
        if (unknown || ret.value().equals("RELEASED")) {
          if (mine) {
            out.add(s.bind(t).free());
          }
        }
        if (unknown || ret.value().equals("NOT_HELD")) {
          if (!(s.heldBy(me) && s.token == t)) {
            out.add(s);
          }
        }
      }
      case "get" -> {
        if (unknown) {
          out.add(s);
          return;
        }
        if (ret.holder().isEmpty()) {
          if (s.holder == null) {
            out.add(s);
          }
        } else if (s.heldBy(ret.holder().get()) && s.tokenMatches(ret.token().orElseThrow())) {
          out.add(s.bind(ret.token().getAsLong()));
        }
      }
      default ->
          throw new IllegalArgumentException("f: the lock model has no operation " + inv.f());
    }
  }
}
