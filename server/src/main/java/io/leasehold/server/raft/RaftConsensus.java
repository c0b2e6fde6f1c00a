package io.leasehold.server.raft;

import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.server.LifecycleLog;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.admin.LogFormatUpgrade;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.tls.NodeTls;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.ObjIntConsumer;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Consensus} on Apache Ratis: this node's Ratis server and Raft clients ({@link NodeRaft}),
 * the door for proposals and reads ({@link Replicator}) and membership and snapshots ({@link
 * ClusterAdmin}). Every future it hands out fails with the node's own exceptions ({@link
 * RaftErrors}); every value is in the node's own types.
 */
public final class RaftConsensus implements Consensus {
  private static final Logger LOG = LoggerFactory.getLogger(RaftConsensus.class);

  /**
   * A linearizable read of a name no one holds: once answered, the node has applied all that its
   * group had committed.
   */
  private static final ReadQuery READ_BARRIER =
      ReadQuery.newBuilder()
          .setGet(GetRequest.newBuilder().setName("leasehold/read-barrier"))
          .build();

  private final NodeConfig config;
  private final LifecycleLog lifecycle;
  private final NodeRaft raft;
  private final Replicator replicator;
  private final ClusterAdmin admin;
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private final PeerTraffic traffic;
  private final LongSupplier wallClockMicros;
  private final Placement placement;
  private final GlobalSync globalSync;
  private final NamespaceMover mover;
  private final LeaseStateMachine metaMachine;

  /** Each hosted lease group's membership admin, made when a membership change first needs it. */
  private final Map<Integer, ClusterAdmin> leaseGroupAdmins = new ConcurrentHashMap<>();

  public RaftConsensus(
      NodeConfig config,
      NodeTls tls,
      LeaseStateMachine stateMachine,
      ReplicationTrace trace,
      PeerTraffic traffic,
      LifecycleLog lifecycle,
      LongSupplier wallClockMicros,
      RocksDbStore.Memory storeMemory,
      Supplier<ExpiryTicker> newTicker,
      ObjIntConsumer<ApplyResult> leaseGroupApplied)
      throws IOException {
    this.config = config;
    this.lifecycle = lifecycle;
    this.traffic = traffic;
    this.wallClockMicros = wallClockMicros;
    this.metaMachine = stateMachine;
    this.raft =
        new NodeRaft(
            config,
            tls,
            stateMachine,
            trace,
            traffic,
            wallClockMicros,
            storeMemory,
            newTicker,
            leaseGroupApplied);
    this.replicator =
        door(
            raft.client(),
            Replicator.member(
                raft.server(), raft.groupId(), raft.selfId(), stateMachine, wallClockMicros),
            raft.groupId());
    SessionParts sessionParts =
        new SessionParts(
            stateMachine::core,
            command -> RaftErrors.mapped(replicator.propose(command)),
            this::caughtUp,
            raft.leaseGroups());
    this.placement =
        new Placement(
            stateMachine::core,
            command -> RaftErrors.mapped(replicator.propose(command)),
            (query, stale) -> RaftErrors.mapped(replicator.read(query, stale)),
            this::caughtUp,
            raft.leaseGroups(),
            sessionParts);
    this.globalSync =
        new GlobalSync(stateMachine::core, this::caughtUp, raft.leaseGroups(), sessionParts::sweep);
    this.mover =
        new NamespaceMover(
            stateMachine::core,
            command -> RaftErrors.mapped(replicator.propose(command)),
            this::isLeader,
            raft.leaseGroups(),
            config.movePartBytes());
    ClusterAdmin.Retries adminRetries = adminRetries();
    this.admin =
        new ClusterAdmin(
            raft.newClient(RaftSettings.adminClient(), adminRetries),
            adminRetries,
            raft.server(),
            raft.groupId(),
            raft.selfId(),
            stateMachine,
            raft::division,
            lifecycle,
            // A linearizable read of any name: once answered, this node has applied all that was
            // committed.
            () -> replicator.read(READ_BARRIER, false),
            Optional.empty(),
            // With lease groups, the meta group's leadership goes where theirs do not.
            raft.leaseGroups().formed() > 0
                ? OptionalInt.of(
                    LeaseGroups.metaLeadSlot(
                        config.peers(), raft.leaseGroups().formed(), raft.leaseGroups().size()))
                : OptionalInt.empty());
    raft.leaseGroups().reachRemotelyWith(this::remoteGroup);
  }

  /**
   * The door of a lease group this node is not a member of: its members learned from the meta
   * group's, its writes and reads sent to them ({@link RemoteGroup}).
   */
  private RemoteGroup remoteGroup(int number) {
    RaftGroupId id = raft.leaseGroups().idOf(number);
    return new RemoteGroup(
        number,
        id,
        raft.selfId(),
        peer -> {
          try {
            return infoClient().getGroupManagementApi(peer).info(id);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        },
        () ->
            raft.division().getRaftConf().getCurrentPeers().stream().map(RaftPeer::getId).toList(),
        raft::writeClient,
        client -> seat -> door(client, seat, id),
        traffic,
        config.requestTimeout());
  }

  /** The door for proposals and reads of group {@code id}, through {@code client}, seated so. */
  private Replicator door(RaftClient client, Replicator.Seat seat, RaftGroupId id) {
    return new Replicator(
        client,
        seat,
        id,
        raft.selfId(),
        config.maxPendingWrites(),
        config.requestTimeout(),
        traffic);
  }

  /** Asks other nodes about the groups they host (Ratis group info); made on first use. */
  private RaftClient infoClient() {
    RaftClient c = infoClient;
    if (c == null) {
      synchronized (this) {
        if (infoClient == null) {
          infoClient = raft.newClient(RaftSettings.client(config), RetryPolicies.noRetry());
        }
        c = infoClient;
      }
    }
    return c;
  }

  private volatile RaftClient infoClient;

  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  /** A membership admin's retries: ten, half a second apart. */
  private static ClusterAdmin.Retries adminRetries() {
    return new ClusterAdmin.Retries(
        RetryPolicies.retryUpToMaximumCountWithFixedSleep(
            10, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS)));
  }

  /**
   * The id of a cluster's Raft group, which names its directory under {@code <data-dir>/raft}:
   * every member derives the same one.
   */
  public static UUID groupUuid(String clusterName) {
    return NodeRaft.groupUuid(clusterName);
  }

  /** The id of lease group {@code number} of a cluster, as every member derives it. */
  public static UUID leaseGroupUuid(String clusterName, int number) {
    return LeaseGroups.id(clusterName, number).getUuid();
  }

  /**
   * Writes lease group {@code number}'s members, as the cluster formed it from {@code peers} (with
   * the priorities that spread the groups' leaderships), into a restored group's {@code current}
   * directory, where Ratis reads a group's configuration when it recovers the group from disk at
   * start: the meta group gets its members from {@code --peers} at start instead, and a lease group
   * recovered with none would never elect a leader.
   */
  public static void writeLeaseGroupMembers(
      java.nio.file.Path current, long term, long index, List<Peer> peers, int number, int size)
      throws IOException {
    org.apache.ratis.proto.RaftProtos.LogEntryProto conf =
        org.apache.ratis.proto.RaftProtos.LogEntryProto.newBuilder()
            .setTerm(term)
            .setIndex(index)
            .setConfigurationEntry(
                org.apache.ratis.proto.RaftProtos.RaftConfigurationProto.newBuilder()
                    .addAllPeers(
                        LeaseGroups.formation(peers, number, size).stream()
                            .map(RaftPeer::getRaftPeerProto)
                            .toList()))
            .build();
    java.nio.file.Path file = current.resolve("raft-meta.conf");
    java.nio.file.Path partial = file.resolveSibling(file.getFileName() + ".partial");
    try (java.io.OutputStream out = java.nio.file.Files.newOutputStream(partial)) {
      conf.writeTo(out);
    }
    java.nio.file.Files.move(
        partial,
        file,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  /**
   * Whether node {@code id} is one of lease group {@code number}'s members when a cluster forms
   * with {@code peers} and lease groups of {@code size} (0: every peer).
   */
  public static boolean formsLeaseGroup(List<Peer> peers, int number, int size, String id) {
    return LeaseGroups.formation(peers, number, size).stream()
        .anyMatch(p -> p.getId().toString().equals(id));
  }

  /** Starts the Ratis server on the peer port. */
  public void start() throws IOException {
    raft.start();
    raft.leaseGroups()
        .bind(
            raft.server(),
            (group, machine) ->
                door(
                    raft.writeClient(group),
                    Replicator.member(
                        raft.server(), group.getGroupId(), raft.selfId(), machine, wallClockMicros),
                    group.getGroupId()),
            replicator::logFormat);
    globalSync.start();
    mover.start();
  }

  /**
   * Hears of each lease group whose replica this node no longer hosts (removed from its members,
   * where lease groups sit on subsets of the nodes).
   */
  public void onLeaseGroupLeft(java.util.function.IntConsumer left) {
    raft.leaseGroups()
        .onLeft(
            number -> {
              ClusterAdmin admin = leaseGroupAdmins.remove(number);
              if (admin != null) {
                admin.close();
              }
              left.accept(number);
            });
  }

  /** Hears how long each answered write took, in nanoseconds, for the node's metrics. */
  public void timeWritesWith(LongConsumer timer) {
    replicator.timeWritesWith(timer);
  }

  /** Traces every proposal's start and answer by its entry's index ({@code --trace-writes}). */
  public void traceWith(WriteTrace trace) {
    replicator.traceWith(trace);
  }

  /** The cluster as the log-format upgrade sees it. */
  public LogFormatUpgrade.Cluster logFormatCluster(
      LeaseStateMachine stateMachine, BooleanSupplier isLeader) {
    return new LogFormatCluster(stateMachine, raft, replicator, isLeader);
  }

  /**
   * Watches for Ratis closing this node's division while it runs (the health is re-judged at once
   * when it does).
   */
  public DivisionClosure divisionClosure(
      Supplier<CompletableFuture<?>> recheckHealth, BooleanSupplier nodeClosed) {
    return new DivisionClosure(config.id(), raft, recheckHealth, lifecycle, nodeClosed);
  }

  /** The door for proposals and reads, unmapped: for tests and benchmarks that look inside. */
  public Replicator replicator() {
    return replicator;
  }

  /** Ratis's division of this node: for tests and benchmarks that look inside. */
  public RaftServer.Division division() {
    return raft.division();
  }

  NodeRaft raft() {
    return raft;
  }

  @Override
  public String selfId() {
    return config.id();
  }

  @Override
  public CompletableFuture<LogReply> propose(LogCommand command) {
    if (placement.active()) {
      if (LeaseCore.changesGlobalState(command)) {
        return globalSync.after(RaftErrors.mapped(replicator.propose(command)));
      }
      return placement.propose(command);
    }
    return RaftErrors.mapped(replicator.propose(command));
  }

  @Override
  public CompletableFuture<LogReply> proposeHere(LogCommand command) {
    return RaftErrors.mapped(replicator.proposeHere(command));
  }

  @Override
  public CompletableFuture<ReadReply> read(ReadQuery query, boolean stale) {
    if (placement.active()) {
      return placement.read(query, stale);
    }
    return RaftErrors.mapped(replicator.read(query, stale));
  }

  @Override
  public CompletableFuture<?> caughtUp() {
    return RaftErrors.mapped(replicator.barrier());
  }

  @Override
  public CompletableFuture<DeadlineReply> leaderDeadlines(DeadlineQuery query) {
    if (placement.active()) {
      return placement.leaderDeadlines(query, this::metaLeaderDeadlines);
    }
    return metaLeaderDeadlines(query);
  }

  private CompletableFuture<DeadlineReply> metaLeaderDeadlines(DeadlineQuery query) {
    RaftPeerId leader = raft.division().getInfo().getLeaderId();
    if (leader == null) {
      return CompletableFuture.failedFuture(
          new ConsensusUnavailableException("no leader known to ask for deadlines", null));
    }
    return RaftErrors.mapped(replicator.deadlinesOf(leader, query));
  }

  @Override
  public int logFormat() {
    return replicator.logFormat();
  }

  @Override
  public long commitIndex() {
    return raft.division().getRaftLog().getLastCommittedIndex();
  }

  @Override
  public Status status() {
    RaftServer.Division d = raft.division();
    DivisionInfo info = d.getInfo();
    return new Status(
        d.getGroup().getGroupId().getUuid().toString(),
        role(info.getCurrentRole()),
        info.getCurrentTerm(),
        idOf(info.getLeaderId()),
        d.getRaftLog().getLastCommittedIndex(),
        info.getLastAppliedIndex(),
        members(d.getRaftConf().getCurrentPeers()));
  }

  @Override
  public Replication replication() {
    return new Replication(raft.appends().requests(), raft.appends().bytes(), raft.logFlushes());
  }

  /** Whether lease groups serve namespaces on this node (docs/design/multi-raft.md). */
  public boolean servesLeaseGroups() {
    return placement.active();
  }

  /**
   * The group whose revisions a watch of {@code namespace} follows: 0 for the meta group. Places
   * the namespace if it has no placement yet (see {@link Placement#groupToFollow}).
   */
  public CompletableFuture<Integer> groupToFollow(String namespace) {
    return RaftErrors.mapped(placement.groupToFollow(namespace));
  }

  /** Lease group {@code number}'s state on this node, if it hosts the group. */
  public Optional<LeaseCore> leaseGroupCore(int number) {
    return raft.leaseGroups().hosted(number).map(g -> g.machine().core());
  }

  @Override
  public List<GroupRoute> reachedGroups() {
    if (raft.leaseGroups().size() == 0) {
      return List.of();
    }
    Map<Integer, List<String>> placed = metaMachine.core().namespacesByGroup();
    List<GroupRoute> out = new ArrayList<>();
    for (int k : raft.leaseGroups().all()) {
      if (raft.leaseGroups().hosted(k).isPresent()) {
        continue;
      }
      raft.leaseGroups()
          .door(k)
          .filter(RemoteGroup.class::isInstance)
          .map(RemoteGroup.class::cast)
          .ifPresent(
              r ->
                  out.add(
                      new GroupRoute(
                          k,
                          Optional.ofNullable(r.leader()).map(RaftPeerId::toString),
                          r.members().stream().map(RaftPeerId::toString).toList(),
                          placed.getOrDefault(k, List.of()))));
    }
    return List.copyOf(out);
  }

  /**
   * Whether this node applies the entries that change {@code name}: it hosts the group its
   * namespace lives in (always, unless lease groups sit on subsets of the nodes).
   */
  @Override
  public boolean appliesEntriesOf(String name) {
    if (raft.leaseGroups().size() == 0) {
      return true;
    }
    int group =
        metaMachine
            .core()
            .placement(LeaseCore.namespaceOf(name))
            .map(io.leasehold.proto.v1.PlacementResponse::getGroup)
            .orElse(0);
    return group == 0 || raft.leaseGroups().hosted(group).isPresent();
  }

  /**
   * Every lease group this node serves requests of, by number: those it hosts and, where lease
   * groups sit on subsets of the nodes, every group of the cluster.
   */
  public List<Integer> reachedLeaseGroups() {
    return raft.leaseGroups().all();
  }

  @Override
  public long placementVersion() {
    return raft.leaseGroups().any() ? metaMachine.core().placementVersion() : 0;
  }

  @Override
  public Map<Integer, LeaseCore> leaseGroupCores() {
    Map<Integer, LeaseCore> cores = new java.util.TreeMap<>();
    for (int number : raft.leaseGroups().hostedNumbers()) {
      raft.leaseGroups().hosted(number).ifPresent(g -> cores.put(number, g.machine().core()));
    }
    return cores;
  }

  @Override
  public List<GroupStatus> groups() {
    List<GroupStatus> out = new ArrayList<>();
    Map<Integer, List<String>> placed = metaMachine.core().namespacesByGroup();
    out.add(groupStatus(0, raft.division(), placed, metaMachine.core().globalVersion()));
    List<GroupStatus> lease = new ArrayList<>();
    for (RaftGroupId id : raft.server().getGroupIds()) {
      Optional<Integer> number = raft.leaseGroups().number(id);
      if (number.isEmpty()) {
        continue;
      }
      try {
        lease.add(
            groupStatus(
                number.get(),
                raft.server().getDivision(id),
                placed,
                raft.leaseGroups()
                    .hosted(number.get())
                    .map(g -> g.machine().core().globalVersion())
                    .orElse(0L)));
      } catch (IOException e) {
        // Removed or closing since it was listed: not hosted any more.
      }
    }
    lease.sort(Comparator.comparingInt(GroupStatus::number));
    out.addAll(lease);
    return List.copyOf(out);
  }

  private static GroupStatus groupStatus(
      int number, RaftServer.Division d, Map<Integer, List<String>> placed, long globalVersion) {
    DivisionInfo info = d.getInfo();
    Map<String, Integer> priorities = new LinkedHashMap<>();
    for (RaftPeer p : d.getRaftConf().getCurrentPeers()) {
      priorities.put(p.getId().toString(), p.getPriority());
    }
    return new GroupStatus(
        number,
        d.getGroup().getGroupId().getUuid().toString(),
        role(info.getCurrentRole()),
        info.getCurrentTerm(),
        idOf(info.getLeaderId()),
        d.getRaftLog().getLastCommittedIndex(),
        info.getLastAppliedIndex(),
        priorities,
        placed.getOrDefault(number, List.of()),
        globalVersion);
  }

  @Override
  public Liveness liveness() {
    RaftServer.Division d = raft.division();
    DivisionInfo info = d.getInfo();
    long commit = d.getRaftLog().getLastCommittedIndex();
    long applied = info.getLastAppliedIndex();
    RoleInfoProto role = info.getRoleInfoProto();
    Optional<List<Follower>> followers = Optional.empty();
    if (role.hasLeaderInfo()) {
      // Ratis lists the followers and their match indices from the same list of log appenders, in
      // one order.
      long[] match = info.getFollowerMatchIndices();
      List<ServerRpcProto> infos = role.getLeaderInfo().getFollowerInfoList();
      List<Follower> list = new ArrayList<>(infos.size());
      for (int i = 0; i < infos.size(); i++) {
        list.add(
            new Follower(
                infos.get(i).getId().getId().toStringUtf8(),
                match != null && match.length == infos.size() ? match[i] : -1,
                infos.get(i).getLastRpcElapsedTimeMs()));
      }
      followers = Optional.of(List.copyOf(list));
    }
    OptionalLong leaderContact =
        role.hasFollowerInfo()
            ? OptionalLong.of(role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs())
            : OptionalLong.empty();
    Role current = role(info.getCurrentRole());
    return new Liveness(
        info.isAlive(),
        current,
        current == Role.LEADER && info.isLeaderReady(),
        idOf(info.getLeaderId()),
        commit,
        applied,
        d.getGroup().getPeers().size(),
        followers,
        leaderContact);
  }

  @Override
  public boolean isLeader() {
    return raft.division().getInfo().isLeader();
  }

  @Override
  public Optional<String> leaderId() {
    return idOf(raft.division().getInfo().getLeaderId());
  }

  @Override
  public Optional<String> leaderClientAddress() {
    return raft.leaderClientAddress();
  }

  @Override
  public Optional<String> clientAddressOf(String memberId) {
    return raft.clientAddressOf(memberId);
  }

  /**
   * Adds the member to the meta group, then to every lease group this node hosts, one after
   * another. On a cluster with lease groups the new node must host each of them (started with
   * {@code --join} and the cluster's {@code --lease-groups}); one that does not is refused before
   * any change, naming the groups it lacks. Each step is idempotent, so a call that failed part-way
   * is repeated to finish; the failure names the group.
   */
  @Override
  public CompletableFuture<List<Member>> addMember(
      String id, String peerAddress, String clientAddress) {
    List<Integer> hosted = raft.leaseGroups().hostedNumbers();
    if (hosted.isEmpty() || raft.leaseGroups().size() > 0) {
      // Where lease groups sit on subsets of the nodes, a new node joins the meta group only, and
      // serves the lease groups through their members.
      return RaftErrors.mapped(
          admin.addMember(id, peerAddress, clientAddress).thenApply(this::members));
    }
    return RaftErrors.mapped(
        admin
            .groupsHostedBy(id, peerAddress, clientAddress)
            .thenCompose(
                present -> {
                  List<Integer> lacking =
                      hosted.stream()
                          .filter(
                              k ->
                                  raft.leaseGroups()
                                      .hosted(k)
                                      .map(g -> !present.contains(g.id()))
                                      .orElse(false))
                          .toList();
                  if (!lacking.isEmpty()) {
                    throw new InvalidArgumentException(
                        "member.id",
                        id
                            + " does not host lease groups "
                            + lacking
                            + ": start it with --join --lease-groups "
                            + raft.leaseGroups().formed()
                            + ", as the cluster was formed");
                  }
                  return admin.addMember(id, peerAddress, clientAddress);
                })
            .thenCompose(
                members ->
                    eachLeaseGroup(
                            id, "added", "to", a -> a.addMember(id, peerAddress, clientAddress))
                        .thenApply(v -> members))
            .thenApply(this::members));
  }

  /**
   * {@code change} applied to every hosted lease group's membership in turn; a failure names the
   * group, the member and that the meta group has it already.
   */
  private CompletableFuture<Void> eachLeaseGroup(
      String id,
      String done,
      String preposition,
      Function<ClusterAdmin, CompletableFuture<?>> change) {
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (int number : raft.leaseGroups().hostedNumbers()) {
      chain =
          chain.thenCompose(
              v ->
                  leaseGroupAdmin(number)
                      .<CompletableFuture<?>>map(change)
                      .orElseGet(() -> CompletableFuture.completedFuture(null))
                      .handle(
                          (r, e) -> {
                            if (e == null) {
                              return null;
                            }
                            Throwable cause = unwrap(e);
                            throw new CompletionException(
                                new ConsensusUnavailableException(
                                    done
                                        + " "
                                        + id
                                        + " "
                                        + preposition
                                        + " the meta group, not yet "
                                        + preposition
                                        + " lease group "
                                        + number
                                        + " (repeat the call to finish): "
                                        + cause.getMessage(),
                                    cause));
                          }));
    }
    return chain;
  }

  /**
   * Removes the member from the meta group, then from every lease group this node hosts, one after
   * another: a member gone from the meta group but left in a lease group would count towards that
   * group's majority for good. Each step is idempotent, so a call that failed part-way (a lease
   * group without a leader) is repeated to finish; the failure names the group.
   */
  @Override
  public CompletableFuture<List<Member>> removeMember(String id) {
    if (raft.leaseGroups().size() > 0) {
      return RaftErrors.mapped(
          leaseGroupsOf(id)
              .thenCompose(
                  of -> {
                    if (!of.isEmpty()) {
                      throw new InvalidArgumentException(
                          "member.id",
                          id
                              + " is a member of lease groups "
                              + of
                              + ": take it out of each first (cluster group-members G --remove "
                              + id
                              + ", with another node added in its place)");
                    }
                    return admin.removeMember(id);
                  })
              .thenApply(this::members));
    }
    return RaftErrors.mapped(
        admin
            .removeMember(id)
            .thenCompose(
                members ->
                    eachLeaseGroup(id, "removed", "from", a -> a.removeMember(id))
                        .thenApply(v -> members))
            .thenApply(this::members));
  }

  /**
   * Changes lease group {@code group}'s members where lease groups sit on subsets of the nodes:
   * each node of {@code add}, a member of the meta group, is given an empty replica of the group
   * and added (staged: the leader brings it up to date before the change commits); then each of
   * {@code remove} is removed and, if reachable, drops its replica. Both go through the group's
   * leader, from a member's admin here or, where this node is not a member, from the group's admin
   * reached through its members. Each step is idempotent; a call that failed part-way is repeated
   * to finish.
   */
  @Override
  public CompletableFuture<GroupMembers> setGroupMembers(
      int group, List<String> add, List<String> remove) {
    LeaseGroups groups = raft.leaseGroups();
    if (groups.size() == 0) {
      return CompletableFuture.failedFuture(
          new MembershipChangeException(
              groups.formed() == 0
                  ? "this cluster has no lease groups"
                  : "every lease group sits on every node of this cluster: their members follow"
                      + " cluster add and cluster remove",
              null));
    }
    if (group < 1 || group > groups.formed()) {
      return CompletableFuture.failedFuture(
          new InvalidArgumentException(
              "group",
              "must be a lease group of this cluster, 1 to " + groups.formed() + "; got " + group));
    }
    Map<String, RaftPeer> cluster = new LinkedHashMap<>();
    raft.division()
        .getRaftConf()
        .getCurrentPeers()
        .forEach(p -> cluster.put(p.getId().toString(), p));
    List<RaftPeer> adding = new ArrayList<>();
    for (int i = 0; i < add.size(); i++) {
      String id = add.get(i);
      if (id == null || id.isBlank()) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException("add[" + i + "]", "must name a member"));
      }
      RaftPeer p = cluster.get(id);
      if (p == null) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException(
                "add[" + i + "]",
                id
                    + " is not a member of the cluster (members: "
                    + String.join(", ", cluster.keySet())
                    + "): add its node with cluster add first"));
      }
      adding.add(RaftPeer.newBuilder(p).setPriority(0).build());
    }
    for (int i = 0; i < remove.size(); i++) {
      String id = remove.get(i);
      if (id == null || id.isBlank()) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException("remove[" + i + "]", "must name a member"));
      }
      if (add.contains(id)) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException(
                "remove[" + i + "]",
                id + " is also in add: a member is added or removed, not both"));
      }
    }
    Optional<ClusterAdmin> hosted = leaseGroupAdmin(group);
    if (hosted.isPresent()) {
      ClusterAdmin admin = hosted.get();
      return RaftErrors.mapped(
          changeMembers(admin, group, adding, remove)
              .thenApply(
                  peers ->
                      new GroupMembers(
                          members(peers),
                          groups
                              .hosted(group)
                              .flatMap(g -> g.division())
                              .flatMap(d -> idOf(d.getInfo().getLeaderId())))));
    }
    RemoteGroup remote =
        groups
            .door(group)
            .filter(RemoteGroup.class::isInstance)
            .map(RemoteGroup.class::cast)
            .orElseThrow(() -> new IllegalStateException("lease group " + group + " has no door"));
    return RaftErrors.mapped(
        CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return remote.leaderConfiguration();
                  } catch (IOException e) {
                    throw new CompletionException(e);
                  }
                })
            .thenCompose(
                peers -> {
                  ClusterAdmin.Retries retries = adminRetries();
                  ClusterAdmin admin =
                      ClusterAdmin.ofRemoteGroup(
                          raft.newClient(
                              org.apache.ratis.protocol.RaftGroup.valueOf(
                                  groups.idOf(group), peers),
                              RaftSettings.adminClient(),
                              retries),
                          retries,
                          raft.server(),
                          groups.idOf(group),
                          raft.selfId(),
                          new ClusterAdmin.Configuration() {
                            @Override
                            public List<RaftPeer> peers() throws IOException {
                              return remote.leaderConfiguration();
                            }

                            @Override
                            public Optional<RaftPeerId> leader() {
                              return Optional.ofNullable(remote.leader());
                            }
                          },
                          lifecycle,
                          group,
                          group - 1);
                  return changeMembers(admin, group, adding, remove)
                      .whenComplete((r, e) -> admin.close());
                })
            .thenApply(
                peers ->
                    new GroupMembers(
                        members(peers),
                        Optional.ofNullable(remote.leader()).map(RaftPeerId::toString))));
  }

  /** The additions, then the removals, one after another; completes with the last configuration. */
  private CompletableFuture<List<RaftPeer>> changeMembers(
      ClusterAdmin admin, int group, List<RaftPeer> adding, List<String> removing) {
    CompletableFuture<List<RaftPeer>> chain = admin.configuration();
    for (RaftPeer p : adding) {
      chain = chain.thenCompose(v -> admin.hostAndAdd(p));
    }
    for (String id : removing) {
      chain = chain.thenCompose(v -> admin.removeAndDrop(id));
    }
    return chain.exceptionallyCompose(
        e -> {
          Throwable cause = unwrap(e);
          if (cause instanceof InvalidArgumentException
              || cause instanceof MembershipChangeException) {
            return CompletableFuture.failedFuture(cause);
          }
          return CompletableFuture.failedFuture(
              new ConsensusUnavailableException(
                  "lease group "
                      + group
                      + "'s members not changed, or changed in part (repeat the call to finish): "
                      + cause.getMessage(),
                  cause));
        });
  }

  /** The lease groups {@code id} is a member of, as this node learns their configurations. */
  private CompletableFuture<List<Integer>> leaseGroupsOf(String id) {
    RaftPeerId member = RaftPeerId.valueOf(id);
    List<CompletableFuture<Optional<Integer>>> each = new ArrayList<>();
    for (int k : raft.leaseGroups().all()) {
      Optional<LeaseGroup> hosted = raft.leaseGroups().hosted(k);
      if (hosted.isPresent()) {
        boolean in =
            hosted.get().division().map(d -> d.getGroup().getPeer(member) != null).orElse(false);
        each.add(CompletableFuture.completedFuture(in ? Optional.of(k) : Optional.empty()));
        continue;
      }
      Optional<GroupDoor> door = raft.leaseGroups().door(k);
      if (door.isPresent() && door.get() instanceof RemoteGroup r) {
        each.add(
            r.learnedMembers()
                .thenApply(m -> m.contains(member) ? Optional.of(k) : Optional.empty()));
      }
    }
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> each.stream().map(CompletableFuture::join).flatMap(Optional::stream).toList());
  }

  /** The membership admin of lease group {@code number}, made on first use, if hosted here. */
  private Optional<ClusterAdmin> leaseGroupAdmin(int number) {
    Optional<LeaseGroup> hosted = raft.leaseGroups().hosted(number);
    if (hosted.isEmpty()) {
      return Optional.empty();
    }
    LeaseGroup g = hosted.get();
    return Optional.of(
        leaseGroupAdmins.computeIfAbsent(
            number,
            k -> {
              ClusterAdmin.Retries retries = adminRetries();
              return new ClusterAdmin(
                  raft.newClient(raft.leaseGroups().group(k), RaftSettings.adminClient(), retries),
                  retries,
                  raft.server(),
                  g.id(),
                  raft.selfId(),
                  g.machine(),
                  () ->
                      g.division()
                          .orElseThrow(
                              () ->
                                  new IllegalStateException(
                                      "lease group " + k + " is not on this server")),
                  lifecycle,
                  () -> g.read(READ_BARRIER, false),
                  Optional.of(k),
                  OptionalInt.of(k - 1));
            }));
  }

  @Override
  public CompletableFuture<String> transferLeadership(Optional<String> id, Duration timeout) {
    return RaftErrors.mapped(admin.transferLeadership(id, timeout).thenApply(RaftPeerId::toString));
  }

  @Override
  public CompletableFuture<Snapshot> takeSnapshot(Duration timeout) {
    return RaftErrors.mapped(admin.takeSnapshot(timeout).thenApply(RaftConsensus::snapshot));
  }

  @Override
  public CompletableFuture<io.leasehold.proto.v1.PlacementResponse> moveNamespace(
      String namespace, int toGroup, Duration timeout) {
    return RaftErrors.mapped(mover.move(namespace, toGroup, timeout));
  }

  @Override
  public CompletableFuture<List<GroupSnapshot>> takeGroupSnapshots(Duration timeout) {
    if (raft.leaseGroups().size() > 0) {
      return CompletableFuture.failedFuture(
          new InvalidArgumentException(
              "groups",
              "lease groups sit on subsets of the nodes, and no node hosts every group: name the"
                  + " groups, each asked of one of its members (leasehold backup does)"));
    }
    if (raft.leaseGroups().hostedNumbers().isEmpty()) {
      return snapshotEveryGroup(timeout);
    }
    // Groups are snapshotted one after another: a namespace moving meanwhile could be in both
    // snapshots or in neither. So no move may be under way when the backup starts, nor begin or
    // end before the meta group's snapshot, taken last, which this replica has caught up with.
    return RaftErrors.mapped(
        caughtUp()
            .thenCompose(
                c -> {
                  Map<String, String> before = placedWhere();
                  Optional<String> moving = moving();
                  if (moving.isPresent()) {
                    return CompletableFuture.failedFuture(
                        new MovingNamespaceException(
                            "namespace "
                                + moving.get()
                                + " is moving between lease groups: take the backup once the move"
                                + " is over"));
                  }
                  return snapshotEveryGroup(timeout)
                      .thenApply(
                          taken -> {
                            Map<String, String> after = placedWhere();
                            boolean unchanged =
                                before.entrySet().stream()
                                    .allMatch(e -> e.getValue().equals(after.get(e.getKey())));
                            if (!unchanged || moving().isPresent()) {
                              throw new CompletionException(
                                  new MovingNamespaceException(
                                      "a namespace moved between lease groups while the backup"
                                          + " was taken: take it again"));
                            }
                            return taken;
                          });
                }));
  }

  @Override
  public CompletableFuture<List<GroupSnapshot>> takeGroupSnapshots(
      Duration timeout, List<Integer> groups, long placementVersion) {
    if (groups.isEmpty()) {
      return takeGroupSnapshots(timeout);
    }
    LeaseGroups lg = raft.leaseGroups();
    List<Integer> lease = new ArrayList<>();
    boolean meta = false;
    for (int i = 0; i < groups.size(); i++) {
      int k = groups.get(i);
      String field = "groups[" + i + "]";
      if (k == 0 ? meta : lease.contains(k)) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException(field, "group " + k + " is named twice"));
      }
      if (k == 0) {
        meta = true;
        continue;
      }
      if (k < 0 || k > lg.formed()) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException(
                field,
                "must be 0 (the meta group) or a lease group of this cluster, 1 to "
                    + lg.formed()
                    + "; got "
                    + k));
      }
      if (lg.hosted(k).isEmpty()) {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException(
                field,
                config.id()
                    + " is not a member of lease group "
                    + k
                    + ": ask one of its members"
                    + lg.door(k)
                        .filter(RemoteGroup.class::isInstance)
                        .map(d -> " (" + ((RemoteGroup) d).members() + ")")
                        .orElse("")));
      }
      lease.add(k);
    }
    java.util.Collections.sort(lease);
    // Asked of each group's member in turn, the groups' snapshots are consistent only while no
    // namespace is placed or moved between the first and the meta group's, taken last.
    Supplier<CompletableFuture<?>> unmoved =
        () ->
            caughtUp()
                .thenAccept(
                    c -> {
                      Optional<String> moving = moving();
                      if (moving.isPresent()) {
                        throw new CompletionException(
                            new MovingNamespaceException(
                                "namespace "
                                    + moving.get()
                                    + " is moving between lease groups: take the backup once the"
                                    + " move is over"));
                      }
                      long now = metaMachine.core().placementVersion();
                      if (placementVersion != 0 && now != placementVersion) {
                        throw new CompletionException(
                            new MovingNamespaceException(
                                "namespaces were placed or moved since the backup began"
                                    + " (placement version "
                                    + placementVersion
                                    + ", now "
                                    + now
                                    + "): take it again"));
                      }
                    });
    boolean withMeta = meta;
    return RaftErrors.mapped(
        unmoved.get().thenCompose(v -> snapshotGroups(lease, withMeta, timeout, unmoved)));
  }

  /** Each namespace's group and epoch, as this node's meta replica has them. */
  private Map<String, String> placedWhere() {
    Map<String, String> out = new java.util.HashMap<>();
    for (io.leasehold.proto.v1.PlacementResponse p : metaMachine.core().placements()) {
      out.put(p.getNamespace(), p.getGroup() + "@" + p.getEpoch());
    }
    return out;
  }

  /** A namespace with a move under way, as this node's meta replica has it. */
  private Optional<String> moving() {
    return metaMachine.core().placements().stream()
        .filter(p -> p.getMove() != 0)
        .map(io.leasehold.proto.v1.PlacementResponse::getNamespace)
        .findFirst();
  }

  private CompletableFuture<List<GroupSnapshot>> snapshotEveryGroup(Duration timeout) {
    return snapshotGroups(
        raft.leaseGroups().hostedNumbers(),
        true,
        timeout,
        () -> CompletableFuture.completedFuture(null));
  }

  /**
   * Snapshots of lease groups {@code lease} (hosted here), one after another, then, with {@code
   * withMeta}, the meta group's once {@code beforeMeta} completes.
   */
  private CompletableFuture<List<GroupSnapshot>> snapshotGroups(
      List<Integer> lease,
      boolean withMeta,
      Duration timeout,
      Supplier<CompletableFuture<?>> beforeMeta) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<GroupSnapshot> taken = new ArrayList<>();
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (int k : lease) {
      Optional<ClusterAdmin> a = leaseGroupAdmin(k);
      Optional<LeaseGroup> g = raft.leaseGroups().hosted(k);
      if (a.isEmpty() || g.isEmpty()) {
        continue; // closed since it was listed: the node is stopping, and the meta group's fails
      }
      String id = g.get().id().getUuid().toString();
      chain =
          chain.thenCompose(
              v ->
                  a.get()
                      .takeSnapshot(remaining(deadline))
                      .handle(
                          (s, error) -> {
                            if (error == null) {
                              taken.add(new GroupSnapshot(k, id, snapshot(s)));
                            } else if (!(unwrap(error) instanceof NothingToSnapshotException)) {
                              throw new CompletionException(
                                  "lease group " + k + ": " + unwrap(error).getMessage(),
                                  unwrap(error));
                            }
                            return null;
                          }));
    }
    if (!withMeta) {
      return RaftErrors.mapped(chain.thenApply(v -> List.copyOf(taken)));
    }
    String metaId = raft.groupId().getUuid().toString();
    return RaftErrors.mapped(
        chain
            .thenCompose(v -> beforeMeta.get())
            .thenCompose(v -> admin.takeSnapshot(remaining(deadline)))
            .thenApply(
                s -> {
                  taken.add(new GroupSnapshot(0, metaId, snapshot(s)));
                  return List.copyOf(taken);
                }));
  }

  @Override
  public int leaseGroupSize() {
    return raft.leaseGroups().size();
  }

  /** What is left of a deadline, at least a second (the call then fails on its own clock). */
  private static Duration remaining(long deadlineNanos) {
    return Duration.ofNanos(
        Math.max(TimeUnit.SECONDS.toNanos(1), deadlineNanos - System.nanoTime()));
  }

  @Override
  public PeerProbe newPeerProbe() {
    return new RaftPeerProbe(raft, config.id());
  }

  @Override
  public void listen(Listener listener) {
    listeners.add(listener);
  }

  /** From the state machine: a new leader, or none. */
  void leaderChanged(String leaderId, long term) {
    for (Listener l : listeners) {
      l.leaderChanged(leaderId, term);
    }
  }

  /**
   * From the state machine: this node leads the meta group and has applied its term's first entry.
   * With lease groups, the meta group's configuration gets the priorities that spread leaderships
   * if it lacks them; a failure (a membership change under way) waits for the next election or
   * change.
   */
  void metaLeaderReady() {
    if (raft.leaseGroups().formed() == 0) {
      return;
    }
    admin
        .spreadLeadership()
        .whenComplete(
            (members, error) -> {
              if (error != null) {
                LOG.info(
                    "{}: the meta group's priorities not set: {}",
                    config.id(),
                    RaftErrors.unwrap(error).toString());
              }
            });
  }

  /** From the state machine: the configuration changed. */
  void membersChanged(Collection<RaftPeer> members) {
    List<String> ids = members.stream().map(p -> p.getId().toString()).toList();
    for (Listener l : listeners) {
      l.membersChanged(ids);
    }
  }

  @Override
  public Map<String, String> handOverLeadership(Duration bound) {
    Map<String, String> handed = raft.handOverLeadership(bound);
    handed.forEach(
        (group, to) -> lifecycle.event("leadership_handed_over", "group", group, "to", to));
    return handed;
  }

  /**
   * Stops membership and snapshot calls (the first to close: an operator's call in flight fails).
   */
  public void closeAdmin() {
    admin.close();
    leaseGroupAdmins.values().forEach(ClusterAdmin::close);
  }

  /** Closes the Raft client of proposals and reads; those in flight fail. */
  public void closeClient() {
    globalSync.close();
    mover.close();
    raft.leaseGroups().closeGroups();
    RaftClient info = infoClient;
    if (info != null) {
      try {
        info.close();
      } catch (IOException e) {
        LOG.warn("closing the group-info client: {}", e.toString());
      }
    }
    try {
      replicator.close();
    } catch (IOException e) {
      LOG.warn("closing Raft client: {}", e.toString());
    }
  }

  /** Closes the Ratis server, within {@link NodeRaft#RPC_CLOSE_WAIT}. */
  public void closeServer() {
    raft.close();
  }

  private List<Member> members(Collection<RaftPeer> peers) {
    return peers.stream()
        .map(
            p -> new Member(p.getId().toString(), p.getAddress(), Members.clientAddress(p, config)))
        .toList();
  }

  private static Snapshot snapshot(SingleFileSnapshotInfo s) {
    return new Snapshot(
        s.getTerm(),
        s.getIndex(),
        s.getFile().getPath(),
        s.getFile().getFileDigest() == null ? "" : s.getFile().getFileDigest().toString());
  }

  private static Optional<String> idOf(RaftPeerId id) {
    return id == null ? Optional.empty() : Optional.of(id.toString());
  }

  static Role role(RaftPeerRole role) {
    return switch (role) {
      case LEADER -> Role.LEADER;
      case FOLLOWER -> Role.FOLLOWER;
      case CANDIDATE -> Role.CANDIDATE;
      case LISTENER -> Role.LISTENER;
      default -> Role.UNKNOWN;
    };
  }
}
