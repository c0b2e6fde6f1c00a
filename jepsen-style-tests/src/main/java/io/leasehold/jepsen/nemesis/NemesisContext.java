package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.Cluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** What a nemesis acts on: the cluster, a seeded random source, and the client-side fault switch. */
public record NemesisContext(Cluster cluster, Random random, ClientFaults clientFaults) {
  /** The current leader, waiting a bounded time for one to be elected. */
  public int leader() {
    return cluster.awaitLeader(Duration.ofSeconds(30));
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
    java.util.Collections.shuffle(all, random);
    return all;
  }
}
