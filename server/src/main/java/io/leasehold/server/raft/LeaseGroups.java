package io.leasehold.server.raft;

import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.watch.HistoryCompactor;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.ObjIntConsumer;
import java.util.function.Supplier;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease groups a node hosts beside the meta group (docs/design/multi-raft.md): their ids, their
 * members with the priorities that spread their leaders, and each one's state machine, which keeps
 * its own RocksDB under {@code <data-dir>/groups/<group-uuid>/state}, within the node's one RocksDB
 * memory budget. Each is a Raft group as Ratis ships it, a division of the node's one {@link
 * RaftServer}; Ratis recovers those it finds on disk at start, and {@link #addMissing} adds the
 * others when the cluster forms.
 *
 * <p>Each serves the namespaces the meta group placed on it ({@link Placement}), with its own
 * expiry ticker on its leader ({@link LeaseGroup}).
 */
final class LeaseGroups {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseGroups.class);

  private final NodeConfig config;
  private final LongSupplier wallClockMicros;

  /** The node's RocksDB memory budget, which every group's store shares. */
  private final RocksDbStore.Memory storeMemory;

  /** Lease group k (1-based) at index k - 1, for every number a cluster may have. */
  private final List<RaftGroupId> ids;

  /** The lease groups the cluster forms with: 0 when the meta group is the only one. */
  private final int formed;

  /** How many lease groups the cluster forms with: 0 when the meta group is the only one. */
  int formed() {
    return formed;
  }

  private final Map<RaftGroupId, LeaseGroup> groups = new ConcurrentHashMap<>();

  /**
   * How many peers each lease group sits on when the cluster forms; 0 for every peer. With a size,
   * a node serves the groups it is not a member of through their members.
   */
  private final int size;

  /** The lease groups this node reaches through their members, made on first use. */
  private final Map<Integer, RemoteGroup> remote = new ConcurrentHashMap<>();

  private volatile java.util.function.IntFunction<RemoteGroup> newRemote;
  private final Supplier<ExpiryTicker> newTicker;
  private final ObjIntConsumer<ApplyResult> applied;
  private final AtomicLong callIds = new AtomicLong();

  /**
   * @param newTicker makes a lease group's expiry ticker
   * @param applied told of every entry a lease group applies (the node's waiting acquisitions)
   */
  LeaseGroups(
      NodeConfig config,
      LongSupplier wallClockMicros,
      RocksDbStore.Memory storeMemory,
      Supplier<ExpiryTicker> newTicker,
      ObjIntConsumer<ApplyResult> applied) {
    this.config = config;
    this.newTicker = newTicker;
    this.applied = applied;
    this.wallClockMicros = wallClockMicros;
    this.storeMemory = storeMemory;
    List<RaftGroupId> list = new ArrayList<>();
    for (int k = 1; k <= NodeConfig.MAX_LEASE_GROUPS; k++) {
      list.add(id(config.clusterName(), k));
    }
    this.ids = List.copyOf(list);
    this.formed = config.leaseGroups() > 1 ? config.leaseGroups() : 0;
    this.size = formed > 0 ? config.leaseGroupSize() : 0;
  }

  /** How many peers each lease group sits on when the cluster forms; 0 for every peer. */
  int size() {
    return size;
  }

  /** The id of lease group {@code number} of a cluster: every member derives the same one. */
  static RaftGroupId id(String clusterName, int number) {
    return RaftGroupId.valueOf(
        UUID.nameUUIDFromBytes(
            ("leasehold:" + clusterName + "/lease-group/" + number)
                .getBytes(StandardCharsets.UTF_8)));
  }

  /** The number of a lease group, or empty for any other group (the meta group). */
  Optional<Integer> number(RaftGroupId id) {
    int i = ids.indexOf(id);
    return i < 0 ? Optional.empty() : Optional.of(i + 1);
  }

  /** Lease group {@code number} as the cluster forms it ({@link #formation}). */
  RaftGroup group(int number) {
    return RaftGroup.valueOf(ids.get(number - 1), formation(config.peers(), number, size));
  }

  /**
   * Lease group {@code number}'s members when a cluster forms with {@code peers}. Without a size
   * (0): every peer, the one at {@code (number - 1) mod peers} with priority 1 and the others 0, so
   * that with as many groups as members each member leads one. With a size R: the R peers from
   * position {@code (number - 1) × R mod peers} on (wrapping), the one at {@code (number - 1) mod
   * R} of them with priority 1: nine peers and three groups of three make n1–n3, n4–n6 and n7–n9,
   * led by n1, n5 and n9; three groups of three on three peers are the groups without a size.
   */
  static List<RaftPeer> formation(List<Peer> peers, int number, int size) {
    if (size == 0) {
      return members(peers, number - 1);
    }
    int start = (number - 1) * size % peers.size();
    List<Peer> chosen = new ArrayList<>(size);
    for (int i = 0; i < Math.min(size, peers.size()); i++) {
      chosen.add(peers.get((start + i) % peers.size()));
    }
    return members(chosen, (number - 1) % size);
  }

  /**
   * The slot of the meta group's priority among {@code peers}: without a size, the one after the
   * last lease group's ({@code groups mod peers}); with one, the first peer that leads no lease
   * group at formation, or that slot again if every peer leads one.
   */
  static int metaLeadSlot(List<Peer> peers, int groups, int size) {
    if (size == 0) {
      return groups;
    }
    Set<Integer> leading = new HashSet<>();
    for (int k = 1; k <= groups; k++) {
      leading.add(((k - 1) * size + (k - 1) % size) % peers.size());
    }
    for (int i = 0; i < peers.size(); i++) {
      if (!leading.contains(i)) {
        return i;
      }
    }
    return groups;
  }

  /** Whether this node is one of lease group {@code number}'s members when the cluster forms. */
  private boolean memberAtFormation(int number) {
    return group(number).getPeers().stream()
        .anyMatch(p -> p.getId().toString().equals(config.id()));
  }

  /**
   * How this node reaches lease group {@code number}: as a member, or through the members where
   * lease groups sit on subsets of the nodes; empty for a group this node cannot reach.
   */
  Optional<GroupDoor> door(int number) {
    Optional<LeaseGroup> hosted = hosted(number);
    if (hosted.isPresent()) {
      return Optional.of(hosted.get());
    }
    java.util.function.IntFunction<RemoteGroup> make = newRemote;
    if (size == 0 || number < 1 || number > formed || make == null) {
      return Optional.empty();
    }
    return Optional.of(remote.computeIfAbsent(number, make::apply));
  }

  /**
   * Every lease group this node reaches, by number: those it hosts and, where lease groups sit on
   * subsets of the nodes, every group of the cluster.
   */
  List<Integer> all() {
    if (size == 0) {
      return hostedNumbers();
    }
    Set<Integer> all = new java.util.TreeSet<>(hostedNumbers());
    for (int k = 1; k <= formed; k++) {
      all.add(k);
    }
    return List.copyOf(all);
  }

  /** Whether lease groups serve this node's namespaces: it hosts one, or reaches them remotely. */
  boolean any() {
    return !all().isEmpty();
  }

  /**
   * Has each group this node reaches through its members learn its members and leader, where it
   * does not know them yet (a group-info request at most once a second each).
   */
  void learnLeaders() {
    for (int k : all()) {
      if (hosted(k).isEmpty()) {
        door(k).ifPresent(GroupDoor::hasLeader);
      }
    }
  }

  /** Makes the doors of the groups this node reaches through their members. */
  void reachRemotelyWith(java.util.function.IntFunction<RemoteGroup> make) {
    this.newRemote = make;
  }

  /** Lease group {@code number}'s id. */
  RaftGroupId idOf(int number) {
    return ids.get(number - 1);
  }

  /**
   * The members of a group of a cluster formed with {@code peers}: the one at {@code leadSlot} mod
   * their number has priority 1, the others 0. Lease group k's slot is k - 1; with N lease groups
   * the meta group's is N.
   */
  static List<RaftPeer> members(List<Peer> peers, int leadSlot) {
    int lead = leadSlot % peers.size();
    List<RaftPeer> members = new ArrayList<>(peers.size());
    for (int i = 0; i < peers.size(); i++) {
      members.add(
          RaftPeer.newBuilder(Members.raftPeer(peers.get(i)))
              .setPriority(i == lead ? 1 : 0)
              .build());
    }
    return members;
  }

  /** The state machine Ratis asks for when it adds or recovers a lease group's division. */
  LeaseStateMachine machine(RaftGroupId id) {
    return groups
        .computeIfAbsent(
            id,
            g -> {
              int number =
                  number(g)
                      .orElseThrow(
                          () -> new IllegalArgumentException("not a lease group's id: " + g));
              return new LeaseGroup(
                  number,
                  g,
                  listener ->
                      new LeaseStateMachine(
                          stateDir(config.dataDir(), g),
                          listener,
                          wallClockMicros,
                          Optional.of(storeMemory),
                          number),
                  newTicker.get(),
                  applied);
            })
        .machine();
  }

  /**
   * Connects every lease group this node hosts to the started server: each gets its own Raft client
   * and door for proposals and reads, and its expiry ticker starts following its leadership.
   */
  void bind(
      RaftServer server,
      BiFunction<RaftGroup, LeaseStateMachine, Replicator> newReplicator,
      IntSupplier metaFormat) {
    for (LeaseGroup g : groups.values()) {
      if (!g.bound()) {
        g.bind(
            server,
            newReplicator.apply(group(g.number()), g.machine()),
            metaFormat,
            (proposeHere, isLeader) ->
                new HistoryCompactor(
                    g.machine()::core,
                    proposeHere,
                    isLeader,
                    wallClockMicros,
                    config.historyMaxEvents(),
                    config.historyMaxAge(),
                    Duration.ofSeconds(1)));
      }
    }
  }

  /** Lease group {@code number} as this node hosts it, if it does. */
  Optional<LeaseGroup> hosted(int number) {
    if (number < 1 || number > ids.size()) {
      return Optional.empty();
    }
    LeaseGroup g = groups.get(ids.get(number - 1));
    return g == null || !g.bound() ? Optional.empty() : Optional.of(g);
  }

  /** The numbers of the lease groups this node hosts and serves, in order. */
  List<Integer> hostedNumbers() {
    return groups.values().stream()
        .filter(LeaseGroup::bound)
        .map(LeaseGroup::number)
        .sorted()
        .toList();
  }

  /** Closes every lease group's ticker and Raft client (the server closes their divisions). */
  void closeGroups() {
    groups.values().forEach(LeaseGroup::close);
    remote.values().forEach(RemoteGroup::close);
  }

  /** Where lease group {@code id}'s RocksDB lives on a node with data directory {@code dataDir}. */
  static Path stateDir(Path dataDir, RaftGroupId id) {
    return dataDir.resolve("groups").resolve(id.getUuid().toString()).resolve("state");
  }

  /**
   * Adds to the started server the lease groups it does not host yet: all of them when the cluster
   * forms (where lease groups sit on subsets of the nodes, those this node forms with), none on a
   * restart (Ratis recovered them from their directories under {@code <data-dir>/raft}). A joining
   * node adds them without members, as it starts its meta group: it never stands for election in
   * them, and learns each one's configuration from its leader once a member adds it.
   */
  void addMissing(RaftServer server, boolean join) throws IOException {
    Set<RaftGroupId> present = new HashSet<>();
    server.getGroupIds().forEach(present::add);
    for (int k = 1; k <= formed; k++) {
      if (present.contains(ids.get(k - 1))) {
        continue;
      }
      if (size > 0 && (join || !memberAtFormation(k))) {
        // On a subset of the nodes: a node hosts only the groups it forms with, and a joining
        // node none (it serves them through their members).
        continue;
      }
      RaftClientReply reply =
          server.groupManagement(
              GroupManagementRequest.newAdd(
                  ClientId.randomId(),
                  RaftPeerId.valueOf(config.id()),
                  callIds.incrementAndGet(),
                  join ? RaftGroup.valueOf(ids.get(k - 1)) : group(k)));
      if (!reply.isSuccess()) {
        throw new IOException(
            "lease group "
                + k
                + " could not be added: "
                + (reply.getException() == null ? "refused" : reply.getException().getMessage()),
            reply.getException());
      }
      LOG.info("{}: lease group {} ({}) added", config.id(), k, ids.get(k - 1).getUuid());
    }
  }
}
