package io.leasehold.client;

import java.util.List;
import java.util.Objects;

/**
 * A session and the leases attached to it ({@link LeaseholdAdmin#session}).
 *
 * @param session the session
 * @param leases the names of its attached leases, in name order (at most 10,000)
 * @param more more leases are attached than listed
 */
public record SessionDetail(SessionInfo session, List<String> leases, boolean more) {
  /**
   * Checks that every field is given.
   *
   * @param session the session
   * @param leases the names of its attached leases, in name order (at most 10,000)
   * @param more more leases are attached than listed
   */
  public SessionDetail {
    Objects.requireNonNull(session, "session");
    leases = List.copyOf(leases);
  }
}
