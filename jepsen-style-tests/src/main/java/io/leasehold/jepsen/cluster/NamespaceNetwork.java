package io.leasehold.jepsen.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Each node in its own network namespace, joined by a veth pair to a bridge that lives in a
 * "switch" namespace of its own; one more veth pair links the switch to the host namespace, where
 * the test JVM reaches every node. The bridge is kept out of the host namespace because there
 * bridged traffic passes the host's iptables FORWARD chain, which Docker, for one, sets to DROP. A
 * partition installs blackhole routes between node addresses inside the node namespaces (both
 * directions), which needs only iproute2, and leaves the client links alone.
 */
public final class NamespaceNetwork implements Network {
  static final int PEER_PORT = 7401;
  static final int CLIENT_PORT = 7400;
  private final String tag;
  private final String subnet;
  private final int nodes;
  private final List<List<Integer>> cut = new ArrayList<>();

  private NamespaceNetwork(String tag, String subnet, int nodes) {
    this.tag = tag;
    this.subnet = subnet;
    this.nodes = nodes;
  }

  /** Namespaces when running as root with a working {@code ip netns}; otherwise why not. */
  public static Optional<String> unsupportedReason() {
    Shell.Result id = Shell.run(List.of("id", "-u"));
    if (!id.ok() || !id.output().equals("0")) {
      return Optional.of("not running as root (id -u = " + id.output() + ")");
    }
    String probe = "lhjprobe" + ProcessHandle.current().pid();
    Shell.Result add = Shell.run(List.of("ip", "netns", "add", probe));
    if (!add.ok()) {
      return Optional.of("`ip netns add` failed: " + add.output());
    }
    Shell.run(List.of("ip", "netns", "del", probe));
    return Optional.empty();
  }

  public static NamespaceNetwork create(int nodes) {
    String tag =
        "lhj"
            + Long.toString(ProcessHandle.current().pid() % 100000, 36)
            + Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36), 36);
    String subnet = null;
    String used = Shell.run(List.of("ip", "-o", "-4", "addr")).output();
    for (int attempt = 0; attempt < 50 && subnet == null; attempt++) {
      String s =
          "10."
              + (200 + ThreadLocalRandom.current().nextInt(50))
              + "."
              + ThreadLocalRandom.current().nextInt(256);
      if (!used.contains(" " + s + ".")) {
        subnet = s;
      }
    }
    if (subnet == null) {
      throw new IllegalStateException("no free 10.x.y.0/24 subnet for the test network");
    }
    NamespaceNetwork n = new NamespaceNetwork(tag, subnet, nodes);
    try {
      n.setUp();
    } catch (RuntimeException e) {
      n.close();
      throw e;
    }
    return n;
  }

  private String ns(int i) {
    return tag + "n" + (i + 1);
  }

  private String switchNs() {
    return tag + "sw";
  }

  private String uplink() {
    return tag + "up";
  }

  private void setUp() {
    Shell.must("ip", "netns", "add", switchNs());
    Shell.must("ip", "-n", switchNs(), "link", "add", "br0", "type", "bridge");
    Shell.must("ip", "-n", switchNs(), "link", "set", "br0", "up");
    Shell.must("ip", "-n", switchNs(), "link", "set", "lo", "up");
    Shell.must("ip", "link", "add", uplink(), "type", "veth", "peer", "name", "up0");
    Shell.must("ip", "link", "set", "up0", "netns", switchNs());
    Shell.must("ip", "-n", switchNs(), "link", "set", "up0", "master", "br0");
    Shell.must("ip", "-n", switchNs(), "link", "set", "up0", "up");
    Shell.must("ip", "addr", "add", subnet + ".254/24", "dev", uplink());
    Shell.must("ip", "link", "set", uplink(), "up");
    for (int i = 0; i < nodes; i++) {
      String hostEnd = tag + "h" + (i + 1);
      String nodeEnd = tag + "v" + (i + 1);
      Shell.must("ip", "netns", "add", ns(i));
      Shell.must("ip", "link", "add", hostEnd, "type", "veth", "peer", "name", nodeEnd);
      Shell.must("ip", "link", "set", nodeEnd, "netns", ns(i));
      Shell.must("ip", "link", "set", hostEnd, "netns", switchNs());
      Shell.must("ip", "-n", switchNs(), "link", "set", hostEnd, "master", "br0");
      Shell.must("ip", "-n", switchNs(), "link", "set", hostEnd, "up");
      Shell.must("ip", "-n", ns(i), "addr", "add", host(i) + "/24", "dev", nodeEnd);
      Shell.must("ip", "-n", ns(i), "link", "set", nodeEnd, "up");
      Shell.must("ip", "-n", ns(i), "link", "set", "lo", "up");
    }
  }

  @Override
  public String host(int i) {
    return subnet + "." + (i + 1);
  }

  @Override
  public int peerPort(int i) {
    return PEER_PORT;
  }

  @Override
  public int clientPort(int i) {
    return CLIENT_PORT;
  }

  @Override
  public List<String> launcher(int i) {
    return List.of("ip", "netns", "exec", ns(i));
  }

  @Override
  public Optional<String> partitionUnsupportedReason() {
    return Optional.empty();
  }

  @Override
  public synchronized void cut(Set<List<Integer>> pairs) {
    for (List<Integer> p : pairs) {
      int a = p.get(0);
      int b = p.get(1);
      Shell.must("ip", "-n", ns(a), "route", "add", "blackhole", host(b) + "/32");
      Shell.must("ip", "-n", ns(b), "route", "add", "blackhole", host(a) + "/32");
      cut.add(p);
    }
  }

  @Override
  public synchronized void heal() {
    for (List<Integer> p : cut) {
      Shell.run(
          List.of("ip", "-n", ns(p.get(0)), "route", "del", "blackhole", host(p.get(1)) + "/32"));
      Shell.run(
          List.of("ip", "-n", ns(p.get(1)), "route", "del", "blackhole", host(p.get(0)) + "/32"));
    }
    cut.clear();
  }

  @Override
  public List<String> cleanupCommands() {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      lines.add("ip netns del " + ns(i) + " 2>/dev/null");
    }
    lines.add("ip netns del " + switchNs() + " 2>/dev/null");
    lines.add("ip link del " + uplink() + " 2>/dev/null");
    return lines;
  }

  @Override
  public void close() {
    for (String line : cleanupCommands()) {
      Shell.run(List.of("sh", "-c", line));
    }
  }

  @Override
  public String toString() {
    return "network namespaces "
        + tag
        + "n1.."
        + tag
        + "n"
        + nodes
        + " on "
        + subnet
        + ".0/24 (bridged in namespace "
        + switchNs()
        + ")";
  }
}
