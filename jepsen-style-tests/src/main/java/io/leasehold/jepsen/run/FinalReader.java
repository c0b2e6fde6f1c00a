package io.leasehold.jepsen.run;

import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.history.FinalState;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.workload.PolicyWorkload;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.HistoryResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Reads the final state for the durability checker, with linearizable reads, retrying each for a
 * bounded time; then each node's own view of the same names, for the replica agreement checker.
 */
final class FinalReader {
  private final Cluster cluster;

  FinalReader(Cluster cluster) {
    this.cluster = cluster;
  }

  FinalState read(History h) {
    TreeSet<String> names = new TreeSet<>();
    for (Op op : h.ops()) {
      if (op.f().equals("acquire") || op.f().equals("release") || op.f().equals("register")) {
        names.add(op.key());
      }
    }
    Map<String, Optional<FinalState.Held>> current = new HashMap<>();
    Map<String, List<FinalState.Ended>> ended = new HashMap<>();
    for (String name : names) {
      GetResponse g =
          retry(
              "Get " + name,
              i ->
                  LeasesGrpc.newBlockingStub(cluster.channel(i))
                      .withDeadlineAfter(3, TimeUnit.SECONDS)
                      .get(GetRequest.newBuilder().setName(name).build()));
      current.put(
          name,
          g.getFound()
              ? Optional.of(new FinalState.Held(g.getLease().getHolder(), g.getLease().getToken()))
              : Optional.empty());
      HistoryResponse hr =
          retry(
              "History " + name,
              i ->
                  AdminGrpc.newBlockingStub(cluster.channel(i))
                      .withDeadlineAfter(3, TimeUnit.SECONDS)
                      .history(HistoryRequest.newBuilder().setName(name).build()));
      List<FinalState.Ended> e = new ArrayList<>();
      for (EndedLease l : hr.getLeasesList()) {
        e.add(new FinalState.Ended(l.getToken(), l.getReason().name()));
      }
      ended.put(name, e);
    }
    long policy =
        retry(
                "GetPolicy " + PolicyWorkload.NAMESPACE,
                i ->
                    AdminGrpc.newBlockingStub(cluster.channel(i))
                        .withDeadlineAfter(3, TimeUnit.SECONDS)
                        .getPolicy(
                            GetPolicyRequest.newBuilder()
                                .setNamespace(PolicyWorkload.NAMESPACE)
                                .build()))
            .getEffective()
            .getMaxTtl()
            .getSeconds();
    List<FinalState.NodeView> views = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      views.add(readNode(i, names));
    }
    return new FinalState(current, ended, Map.of(PolicyWorkload.NAMESPACE, policy), true, views);
  }

  /**
   * Every name's tokens as node {@code i} alone knows them, with linearizable reads sent to it
   * only: it has applied everything committed before each read, so all nodes must know the same
   * tokens (no client writes after the restart). A node that parted from the others shows here.
   */
  private FinalState.NodeView readNode(int i, TreeSet<String> names) {
    String node = cluster.nodes().get(i).id();
    Map<String, Set<Long>> tokens = new TreeMap<>();
    try {
      for (String name : names) {
        Set<Long> known = new TreeSet<>();
        GetResponse g =
            retryOn(
                i,
                "Get " + name + " on " + node,
                () ->
                    LeasesGrpc.newBlockingStub(cluster.channel(i))
                        .withDeadlineAfter(3, TimeUnit.SECONDS)
                        .get(GetRequest.newBuilder().setName(name).build()));
        if (g.getFound()) {
          known.add(g.getLease().getToken());
        }
        HistoryResponse hr =
            retryOn(
                i,
                "History " + name + " on " + node,
                () ->
                    AdminGrpc.newBlockingStub(cluster.channel(i))
                        .withDeadlineAfter(3, TimeUnit.SECONDS)
                        .history(HistoryRequest.newBuilder().setName(name).build()));
        hr.getLeasesList().forEach(l -> known.add(l.getToken()));
        tokens.put(name, known);
      }
      return new FinalState.NodeView(node, tokens, Optional.empty());
    } catch (IllegalStateException e) {
      return new FinalState.NodeView(node, Map.of(), Optional.of(e.getMessage()));
    }
  }

  private <T> T retryOn(int node, String what, Supplier<T> call) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    RuntimeException last = null;
    while (System.nanoTime() - deadline < 0) {
      try {
        return call.get();
      } catch (RuntimeException e) {
        last = e;
        Pacing.sleep(Duration.ofMillis(200));
      }
    }
    throw new IllegalStateException("final read " + what + " failed for 30 s: " + last);
  }

  private <T> T retry(String what, Function<Integer, T> call) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    RuntimeException last = null;
    int node = 0;
    while (System.nanoTime() - deadline < 0) {
      try {
        return call.apply(node % cluster.size());
      } catch (RuntimeException e) {
        last = e;
        node++;
        Pacing.sleep(Duration.ofMillis(200));
      }
    }
    throw new IllegalStateException("final read " + what + " failed for 60 s", last);
  }
}
