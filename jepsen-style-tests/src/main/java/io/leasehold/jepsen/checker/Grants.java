package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import java.util.List;

/**
 * The acknowledged grants of a history: acquisitions and registrations that returned a token, and
 * transfers (a grant to the new holder, whose token the completion carries).
 */
final class Grants {
  private Grants() {}

  static boolean isGrant(Completed c) {
    return c.ok()
        && (c.invoke().f().equals("acquire") && c.completion().value().equals("GRANTED")
            || c.invoke().f().equals("register")
            || c.invoke().f().equals("transfer") && c.completion().value().equals("TRANSFERRED"))
        && c.completion().token().isPresent();
  }

  static List<Completed> of(History h) {
    return h.completed().stream().filter(Grants::isGrant).toList();
  }

  static long token(Completed c) {
    return c.completion().token().getAsLong();
  }

  static String holder(Completed c) {
    return c.completion().holder().or(() -> c.invoke().holder()).orElse("?");
  }
}
