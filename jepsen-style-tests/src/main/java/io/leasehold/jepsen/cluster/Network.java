package io.leasehold.jepsen.cluster;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where the nodes live on the network: each on its own address, reachable from the test JVM. A
 * network that can cut links between nodes supports the partition nemesis.
 */
public interface Network extends AutoCloseable {
  /** The host (IP) node {@code i} binds and is reached at. */
  String host(int i);

  int peerPort(int i);

  int clientPort(int i);

  /**
   * The command prefix that runs a process on node {@code i}'s network (e.g. {@code ip netns exec
   * ns}).
   */
  List<String> launcher(int i);

  /** Whether {@link #cut} works here; if not, why not. */
  Optional<String> partitionUnsupportedReason();

  /** Cuts both directions between the nodes of each pair (client links stay up). */
  void cut(Set<List<Integer>> pairs);

  /** Restores every link between nodes. */
  void heal();

  /** Shell lines that tear this network down, for the watchdog that outlives the test JVM. */
  List<String> cleanupCommands();

  @Override
  void close();
}
