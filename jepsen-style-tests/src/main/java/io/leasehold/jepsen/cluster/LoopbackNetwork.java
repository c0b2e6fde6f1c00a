package io.leasehold.jepsen.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Every node on 127.0.0.1 with free ports: no partitions possible. */
public final class LoopbackNetwork implements Network {
  private final List<int[]> ports = new ArrayList<>();
  private final String reason;

  public LoopbackNetwork(int nodes, String whyNoNamespaces) {
    this.reason = whyNoNamespaces;
    for (int i = 0; i < nodes; i++) {
      ports.add(new int[] {FreePorts.next(), FreePorts.next()});
    }
  }

  @Override
  public String host(int i) {
    return "127.0.0.1";
  }

  @Override
  public int peerPort(int i) {
    return ports.get(i)[0];
  }

  @Override
  public int clientPort(int i) {
    return ports.get(i)[1];
  }

  @Override
  public List<String> launcher(int i) {
    return List.of();
  }

  @Override
  public Optional<String> partitionUnsupportedReason() {
    return Optional.of(reason);
  }

  @Override
  public void cut(Set<List<Integer>> pairs) {
    throw new UnsupportedOperationException("partitions need network namespaces: " + reason);
  }

  @Override
  public void heal() {}

  @Override
  public List<String> cleanupCommands() {
    return List.of();
  }

  @Override
  public void close() {}
}
