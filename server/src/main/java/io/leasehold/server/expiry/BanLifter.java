package io.leasehold.server.expiry;

import io.leasehold.proto.v1.LiftBanItem;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which due timed bans the leader should propose to lift now. Pure, like {@link ExpiryScheduler}:
 * a ban already proposed is not proposed again until {@code reproposeAfterNanos} have passed
 * (its reply may have been lost; the core's guard makes a repeat harmless).
 */
final class BanLifter {
  private final long reproposeAfterNanos;
  /** (holder, ban revision) to when it was proposed. */
  private final Map<LiftBanItem, Long> proposed = new HashMap<>();

  BanLifter(long reproposeAfterNanos) {
    this.reproposeAfterNanos = reproposeAfterNanos;
  }

  synchronized List<LiftBanItem> toPropose(List<LiftBanItem> due, long nowNanos) {
    proposed.keySet().retainAll(due);
    List<LiftBanItem> out = new ArrayList<>();
    for (LiftBanItem item : due) {
      Long at = proposed.get(item);
      if (at == null || nowNanos - at >= reproposeAfterNanos) {
        proposed.put(item, nowNanos);
        out.add(item);
      }
    }
    return out;
  }

  synchronized void reset() {
    proposed.clear();
  }
}
