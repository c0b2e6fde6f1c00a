package io.leasehold.jepsen.nemesis;

import java.util.Optional;

/**
 * Membership change (remove a node, add it back). Pending: the Cluster service has no call to
 * change membership yet (the deploy issue adds it), so this nemesis is always reported as skipped.
 */
public final class MembershipNemesis implements Nemesis {
  @Override
  public String kind() {
    return "membership";
  }

  @Override
  public String name() {
    return "membership";
  }

  @Override
  public Optional<String> unsupportedReason() {
    return Optional.of("pending: the Cluster service has no membership-change call yet (the deploy issue provides it)");
  }

  @Override
  public String start(NemesisContext ctx) {
    throw new UnsupportedOperationException(unsupportedReason().orElseThrow());
  }

  @Override
  public String heal(NemesisContext ctx) {
    return "nothing to heal";
  }
}
