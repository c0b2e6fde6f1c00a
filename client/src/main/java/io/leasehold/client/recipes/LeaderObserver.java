package io.leasehold.client.recipes;

import java.util.Optional;

/**
 * Told of every change of an election's leader, in the cluster's order, on the client's callback
 * executor.
 */
@FunctionalInterface
public interface LeaderObserver {
  /**
   * The leader changed.
   *
   * @param leader the new leader, or empty while no one leads
   */
  void onLeader(Optional<Leader> leader);
}
