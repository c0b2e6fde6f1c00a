package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.Cluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * What a nemesis acts on: the cluster, a seeded random source, and the client-side fault switch.
 */
public record NemesisContext(Cluster cluster, Random random, ClientFaults clientFaults) {
  /**
   * The current leader, waiting a bounded time for one to be elected; on a machine so loaded that
   * none shows up in time, a random node (the fault still happens, just not at the leader).
   */
  public int leader() {
    try {
      return cluster.awaitLeader(Duration.ofSeconds(30));
    } catch (IllegalStateException noLeader) {
      return randomNode();
    }
  }

  public int randomNode() {
    return random.nextInt(cluster.size());
  }

  /** The indexes of the nodes, shuffled. */
  public List<Integer> shuffledNodes() {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      all.add(i);
    }
    Collections.shuffle(all, random);
    return all;
  }
}
