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
    followMembership();
    for (int k : all()) {
      if (hosted(k).isEmpty()) {
        door(k)
            .ifPresent(
                d -> {
                  d.hasLeader();
                  if (d instanceof RemoteGroup r) {
                    r.refreshMembers();
                  }
                });
      }
    }
  }

  /**
   * Follows the changes of the lease groups this node is a member of, where they sit on subsets of
   * the nodes ({@code Cluster/SetGroupMembers}): a replica added since the start is bound and
   * served here, and the group is no longer reached through its members; a replica Ratis removed is
   * closed, and the group is reached through its members again; a replica whose committed
   * configuration no longer holds this node is removed (with its Raft directory), as the admin that
   * removed this node asks when it reaches it.
   */
  void followMembership() {
    Binder b = binder;
    if (size == 0 || b == null) {
      return;
    }
    Set<RaftGroupId> present = new HashSet<>();
    b.server().getGroupIds().forEach(present::add);
    // A dropped replica's state goes once Ratis has closed its state machine (unless the group is
    // back here meanwhile: a new replica's state is made anew, see machine).
    for (LeaseGroup g : dropped) {
      if (g.machine().isClosed()) {
        dropped.remove(g);
        synchronized (this) {
          if (!groups.containsKey(g.id())) {
            try {
              RocksDbStore.deleteRecursively(stateDir(config.dataDir(), g.id()).getParent());
              if (g.appliedOwnRemoval() && !contains(b.server().getGroupIds(), g.id())) {
                // Closed by Ratis on its own (a removed leader's replica): its Raft directory is
                // left, and a later replica of the group could not be made beside it.
                RocksDbStore.deleteRecursively(
                    config.dataDir().resolve("raft").resolve(g.id().getUuid().toString()));
              }
            } catch (IOException e) {
              LOG.warn(
                  "{}: lease group {}'s state not deleted: {}",
                  config.id(),
                  g.number(),
                  e.toString());
            }
          }
        }
      }
    }
    for (LeaseGroup g : groups.values()) {
      if (!g.bound() && present.contains(g.id())) {
        bindOne(g, b);
        RemoteGroup r = remote.remove(g.number());
        if (r != null) {
          r.close();
        }
        LOG.info("{}: lease group {} is hosted here now", config.id(), g.number());
      } else if (g.bound() && !present.contains(g.id())) {
        if (groups.remove(g.id(), g)) {
          g.close();
          left.accept(g.number());
          dropped.add(g);
          LOG.info("{}: lease group {} is no longer hosted here", config.id(), g.number());
        }
      } else if (g.bound() && g.removedFromConfiguration(RaftPeerId.valueOf(config.id()))) {
        dropReplica(b, g, "its configuration no longer holds this node");
      } else if (g.bound()) {
        checkWhenLeaderless(b, g);
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
  synchronized LeaseStateMachine machine(RaftGroupId id) {
    if (recovered) {
      // A new replica (Ratis recovered every replica on disk before), whose state comes from the
      // group's leader: a state or a LeaseGroup left by an earlier replica of the group on this
      // node, removed since, must not be taken for it. Ratis asks only for a group it does not
      // hold, so a LeaseGroup still here is such. (Its division must not be looked up: Ratis has
      // put the new one, still being made on this thread, in its place, and would wait for it.)
      LeaseGroup old = groups.get(id);
      if (old != null && groups.remove(id, old)) {
        old.close();
        left.accept(old.number());
        awaitClosed(old);
      }
      try {
        RocksDbStore.deleteRecursively(stateDir(config.dataDir(), id));
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
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
    Binder b = new Binder(server, newReplicator, metaFormat);
    this.binder = b;
    for (LeaseGroup g : groups.values()) {
      if (!g.bound()) {
        bindOne(g, b);
      }
    }
  }

  private void bindOne(LeaseGroup g, Binder b) {
    g.bind(
        b.server(),
        b.newReplicator().apply(group(g.number()), g.machine()),
        b.metaFormat(),
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

  /**
   * Removes this node's replica of {@code g} from the server, with its Raft directory, unless a
   * removal is under way. Asynchronous: the sweep goes on meanwhile, and closes the group once
   * Ratis no longer holds it.
   */
  private void dropReplica(Binder b, LeaseGroup g, String why) {
    if (!dropping.add(g)) {
      return;
    }
    LOG.info("{}: dropping its replica of lease group {}: {}", config.id(), g.number(), why);
    b.server()
        .groupManagementAsync(
            GroupManagementRequest.newRemove(
                ClientId.randomId(),
                RaftPeerId.valueOf(config.id()),
                callIds.incrementAndGet(),
                g.id(),
                true,
                false))
        .whenComplete(
            (reply, error) -> {
              dropping.remove(g);
              if (error != null || !reply.isSuccess()) {
                LOG.info(
                    "{}: replica of lease group {} not dropped: {}",
                    config.id(),
                    g.number(),
                    error != null ? error.toString() : reply);
              }
            });
  }

  private static boolean contains(Iterable<RaftGroupId> ids, RaftGroupId id) {
    for (RaftGroupId i : ids) {
      if (i.equals(id)) {
        return true;
      }
    }
    return false;
  }

  /** Replicas whose removal this node asked for and Ratis has not answered yet. */
  private final Set<LeaseGroup> dropping = ConcurrentHashMap.newKeySet();

  /**
   * Waits a little for Ratis to finish closing an earlier replica's state machine, so that its
   * store is closed before its directory is emptied for a new one.
   */
  private static void awaitClosed(LeaseGroup old) {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (!old.machine().isClosed() && System.nanoTime() - deadline < 0) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * How long a replica goes without a leader before this node asks whether it is still a member.
   */
  private static final long LEADERLESS_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

  /** Per lease group: since when its replica here has known no leader, and what was asked. */
  private final Map<Integer, Leaderless> leaderless = new ConcurrentHashMap<>();

  /**
   * @param since when the replica was first seen without a leader
   * @param excludedAt when the group's leader last answered with a configuration without this node,
   *     or 0
   * @param asking whether an ask is under way
   */
  private record Leaderless(long since, long excludedAt, boolean asking) {}

  /**
   * A replica that has known no leader for {@link #LEADERLESS_NANOS} may belong to a node removed
   * from the group while it was down: it recovered the replica with the members it had then, and no
   * member talks to it. So the node asks the group's leader, through the other nodes, for the
   * group's configuration; once two answers at least {@link #LEADERLESS_NANOS} apart leave this
   * node out (a change under way when the first was given has long committed or failed by the
   * second), it drops its replica and reaches the group through its members.
   */
  private void checkWhenLeaderless(Binder b, LeaseGroup g) {
    int number = g.number();
    if (g.hasLeader()) {
      leaderless.remove(number);
      return;
    }
    long now = System.nanoTime();
    Leaderless state = leaderless.computeIfAbsent(number, k -> new Leaderless(now, 0, false));
    if (state.asking() || now - state.since() < LEADERLESS_NANOS) {
      return;
    }
    java.util.function.IntFunction<RemoteGroup> make = newRemote;
    if (make == null) {
      return;
    }
    leaderless.put(number, new Leaderless(now, state.excludedAt(), true));
    java.util.concurrent.CompletableFuture.runAsync(
        () -> {
          long excludedAt = 0;
          try (RemoteGroup probe = make.apply(number)) {
            boolean member =
                probe.leaderConfiguration().stream()
                    .anyMatch(p -> p.getId().toString().equals(config.id()));
            if (!member) {
              long asked = System.nanoTime();
              if (state.excludedAt() != 0 && asked - state.excludedAt() >= LEADERLESS_NANOS) {
                dropReplica(b, g, "the group's leader has left this node out of its members");
                leaderless.remove(number);
                return;
              }
              excludedAt = state.excludedAt() != 0 ? state.excludedAt() : asked;
            }
          } catch (IOException | RuntimeException e) {
            LOG.debug(
                "{}: lease group {}'s members not learned: {}", config.id(), number, e.toString());
            excludedAt = state.excludedAt();
          }
          // Asked again after another while without a leader.
          leaderless.put(number, new Leaderless(System.nanoTime(), excludedAt, false));
        });
  }

  /** What binds a group's replica to the started server: kept for replicas added later. */
  /** What binds a group's replica to the started server: kept for replicas added later. */
  private record Binder(
      RaftServer server,
      BiFunction<RaftGroup, LeaseStateMachine, Replicator> newReplicator,
      IntSupplier metaFormat) {}

  private volatile Binder binder;

  /** Replicas Ratis removed whose state is still on disk. */
  private final Set<LeaseGroup> dropped = ConcurrentHashMap.newKeySet();

  /** Told the number of a lease group whose replica this node no longer hosts. */
  private volatile java.util.function.IntConsumer left = number -> {};

  /** Hears of each lease group whose replica this node no longer hosts (its watch hub ends). */
  void onLeft(java.util.function.IntConsumer left) {
    this.left = left;
  }

  /**
   * Marks the end of Ratis's recovery of the groups on disk: a replica made after it is new (added
   * at formation or by a membership change), and starts from an empty state.
   */
  void recovered() {
    recovered = true;
  }

  private volatile boolean recovered;

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
   * forms (where lease groups sit on subsets of the nodes, those this node forms with, once: the
   * marker {@code <data-dir>/groups/formed} says it was done), none on a restart (Ratis recovered
   * them from their directories under {@code <data-dir>/raft}). A joining node adds them without
   * members, as it starts its meta group: it never stands for election in them, and learns each
   * one's configuration from its leader once a member adds it.
   */
  void addMissing(RaftServer server, boolean join) throws IOException {
    Path formedMarker = config.dataDir().resolve("groups").resolve("formed");
    if (size > 0 && java.nio.file.Files.exists(formedMarker)) {
      // On subsets of the nodes, after the first start the groups' members decide which replicas
      // this node holds (Cluster/SetGroupMembers): a replica dropped since must not come back,
      // empty and with the members of formation, as a voter of a configuration that is gone.
      return;
    }
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
    if (size > 0) {
      java.nio.file.Files.createDirectories(formedMarker.getParent());
      java.nio.file.Files.writeString(
          formedMarker,
          "lease groups formed on subsets of the nodes; their members now decide which this node"
              + " hosts\n");
    }
  }
}
