package io.leasehold.server.raft;

import io.leasehold.server.LifecycleLog;
import io.leasehold.server.Peer;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Membership and snapshots, through Ratis's admin API: the half of {@link Consensus} that changes
 * the configuration and takes snapshots. Its values and failures are Ratis's; {@link RaftConsensus}
 * hands them out in the node's own types. Each operation runs on one admin thread (Ratis's admin
 * calls block) and is idempotent: adding a member already there, or removing one that is gone,
 * changes nothing and succeeds, so a caller may retry after an unclear outcome.
 *
 * <p>A member is added in one step (Ratis stages it: the leader first brings the new node up to
 * date by log or snapshot, then commits the new configuration), so a cluster of three becomes four
 * and not, for a moment, a cluster whose majority waits on an empty node.
 */
public final class ClusterAdmin implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterAdmin.class);
  private final RaftClient client;
  private final Retries retries;
  private final RaftServer server;
  private final RaftGroupId groupId;
  private final RaftPeerId selfId;
  private final LeaseStateMachine stateMachine;
  private final Supplier<RaftServer.Division> division;
  private final LifecycleLog lifecycle;
  private final Supplier<CompletableFuture<?>> readBarrier;

  /** Where the group's configuration is read: this node's replica, or the group's leader. */
  private final Configuration configuration;

  /** Reads a group's current configuration. */
  @FunctionalInterface
  interface Configuration {
    List<RaftPeer> peers() throws IOException;

    /** The group's leader as last learned; empty while none is known. */
    default Optional<RaftPeerId> leader() {
      return Optional.empty();
    }
  }

  /** Empty for the meta group; a lease group's number, which its membership events carry. */
  private final Optional<Integer> leaseGroup;

  /**
   * Where the member this group's priority names sits among the members sorted by id (modulo their
   * number); empty for a group without priorities (the meta group of a cluster without lease
   * groups).
   */
  private final OptionalInt leadSlot;

  private final ClientId snapshotClientId = ClientId.randomId();
  private final AtomicLong snapshotCallId = new AtomicLong();
  private final ExecutorService thread =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-admin");
            t.setDaemon(true);
            return t;
          });

  /**
   * @param client a Raft client with a request timeout long enough for a new member to catch up
   * @param retries the retry policy {@code client} was built with
   * @param leaseGroup the lease group's number, empty for the meta group
   * @param leadSlot where the member the group's priority names sits (see {@link
   *     #spreadLeadership}), empty for a group without priorities
   */
  ClusterAdmin(
      RaftClient client,
      Retries retries,
      RaftServer server,
      RaftGroupId groupId,
      RaftPeerId selfId,
      LeaseStateMachine stateMachine,
      Supplier<RaftServer.Division> division,
      LifecycleLog lifecycle,
      Supplier<CompletableFuture<?>> readBarrier,
      Optional<Integer> leaseGroup,
      OptionalInt leadSlot) {
    this(
        client,
        retries,
        server,
        groupId,
        selfId,
        stateMachine,
        division,
        new Configuration() {
          @Override
          public List<RaftPeer> peers() {
            return List.copyOf(division.get().getRaftConf().getCurrentPeers());
          }

          @Override
          public Optional<RaftPeerId> leader() {
            return Optional.ofNullable(division.get().getInfo().getLeaderId());
          }
        },
        lifecycle,
        readBarrier,
        leaseGroup,
        leadSlot);
  }

  private ClusterAdmin(
      RaftClient client,
      Retries retries,
      RaftServer server,
      RaftGroupId groupId,
      RaftPeerId selfId,
      LeaseStateMachine stateMachine,
      Supplier<RaftServer.Division> division,
      Configuration configuration,
      LifecycleLog lifecycle,
      Supplier<CompletableFuture<?>> readBarrier,
      Optional<Integer> leaseGroup,
      OptionalInt leadSlot) {
    this.configuration = configuration;
    this.leaseGroup = leaseGroup;
    this.leadSlot = leadSlot;
    this.retries = retries;
    this.readBarrier = readBarrier;
    this.client = client;
    this.server = server;
    this.groupId = groupId;
    this.selfId = selfId;
    this.stateMachine = stateMachine;
    this.division = division;
    this.lifecycle = lifecycle;
  }

  /**
   * The membership admin of lease group {@code leaseGroup}, which this node is not a member of: the
   * configuration is read from the group's leader (whose configuration is the group's latest), and
   * changes go to it through {@code client}, a Raft client of the group. It changes members only:
   * it takes no snapshot and transfers no leadership.
   */
  static ClusterAdmin ofRemoteGroup(
      RaftClient client,
      Retries retries,
      RaftServer server,
      RaftGroupId groupId,
      RaftPeerId selfId,
      Configuration leaderConfiguration,
      LifecycleLog lifecycle,
      int leaseGroup,
      int leadSlot) {
    return new ClusterAdmin(
        client,
        retries,
        server,
        groupId,
        selfId,
        null,
        () -> {
          throw new IllegalStateException("lease group " + leaseGroup + " is not on this node");
        },
        leaderConfiguration,
        lifecycle,
        () -> CompletableFuture.completedFuture(null),
        Optional.of(leaseGroup),
        OptionalInt.of(leadSlot));
  }

  /** Adds a member (started in join mode) and returns the configuration after the change. */
  public CompletableFuture<List<RaftPeer>> addMember(
      String id, String peerAddress, String clientAddress) {
    return addMember(validMember(id, peerAddress, clientAddress));
  }

  /**
   * Adds {@code peer} (whose node hosts the group, started in join mode or added empty) and returns
   * the configuration after the change.
   */
  CompletableFuture<List<RaftPeer>> addMember(RaftPeer peer) {
    String id = peer.getId().toString();
    return run(
        () -> {
          List<RaftPeer> now = upToDateConfiguration();
          Optional<RaftPeer> existing =
              now.stream().filter(p -> p.getId().equals(peer.getId())).findFirst();
          if (existing.isPresent()) {
            if (!existing.get().getAddress().equals(peer.getAddress())) {
              throw new InvalidArgumentException(
                  "member.id", "" + id + " is already a member at " + existing.get().getAddress());
            }
            return spreadLeadership(now);
          }
          setConfiguration(
              SetConfigurationRequest.Arguments.newBuilder()
                  .setServersInNewConf(List.of(peer))
                  .setMode(SetConfigurationRequest.Mode.ADD)
                  .build());
          if (leaseGroup.isPresent()) {
            lifecycle.event("member_added", "member", id, "lease_group", leaseGroup.get());
          } else {
            lifecycle.event(
                "member_added",
                "member",
                id,
                "peer_address",
                peer.getAddress(),
                "client_address",
                peer.getClientAddress());
          }
          return spreadLeadership(
              awaitConfiguration(c -> c.stream().anyMatch(p -> p.getId().equals(peer.getId()))));
        });
  }

  /**
   * The Raft groups the node at {@code peerAddress} hosts, as its own server lists them: a node to
   * be added must host every lease group the cluster runs, or the additions could never stage.
   */
  public CompletableFuture<List<RaftGroupId>> groupsHostedBy(
      String id, String peerAddress, String clientAddress) {
    RaftPeer peer = validMember(id, peerAddress, clientAddress);
    return run(
        () -> {
          client.getClientRpc().addRaftPeers(List.of(peer));
          return List.copyOf(client.getGroupManagementApi(peer.getId()).list().getGroupIds());
        });
  }

  /** The group's configuration once this node has caught up with the leader's commit index. */
  CompletableFuture<List<RaftPeer>> configuration() {
    return run(this::upToDateConfiguration);
  }

  /**
   * Has the node of {@code peer} host a replica of this group, empty and without members (as a
   * joining node starts its groups), unless it hosts one already; then adds it as a member, staged.
   * Returns the configuration after the change.
   */
  CompletableFuture<List<RaftPeer>> hostAndAdd(RaftPeer peer) {
    return run(() -> {
          client.getClientRpc().addRaftPeers(List.of(peer));
          org.apache.ratis.client.api.GroupManagementApi api =
              client.getGroupManagementApi(peer.getId());
          boolean hosts = api.list().getGroupIds().contains(groupId);
          boolean member =
              upToDateConfiguration().stream().anyMatch(p -> p.getId().equals(peer.getId()));
          if (member && !hosts) {
            // A voter given an empty replica would vote without the entries it acknowledged.
            throw new InvalidArgumentException(
                "add",
                peer.getId()
                    + " is a member of "
                    + groupName()
                    + " but holds no replica of it (its data is gone): remove it from the"
                    + " group first, then add it again");
          }
          // Ratis closes the replica of a node removed from a group on its own and leaves its
          // directory, which that node deletes within a second or two: until it has, a new
          // replica cannot be made there, and the add is asked again.
          long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
          while (!hosts) {
            IOException failure;
            try {
              RaftClientReply reply = api.add(org.apache.ratis.protocol.RaftGroup.valueOf(groupId));
              if (reply.isSuccess()) {
                break;
              }
              failure =
                  reply.getException() != null
                      ? reply.getException()
                      : new IOException("refused: " + reply);
            } catch (IOException e) {
              failure = e;
            }
            if (!String.valueOf(failure.getMessage()).contains("existing directories")) {
              throw failure;
            }
            pause(deadline, peer.getId() + " to delete the replica it was removed from");
            hosts = api.list().getGroupIds().contains(groupId);
          }
          return null;
        })
        .thenCompose(v -> addMember(peer));
  }

  /**
   * Removes member {@code id}, then has its node drop its replica of the group (its Raft directory
   * is deleted) if it can be reached; one that cannot drops it once it learns it was removed.
   * Returns the configuration after the change.
   */
  CompletableFuture<List<RaftPeer>> removeAndDrop(String id) {
    RaftPeerId target = RaftPeerId.valueOf(id);
    return run(() -> {
          List<RaftPeer> now = upToDateConfiguration();
          // Its address, for the request to drop the replica once it is no longer a member.
          now.stream()
              .filter(p -> p.getId().equals(target))
              .findFirst()
              .ifPresent(p -> client.getClientRpc().addRaftPeers(List.of(p)));
          if (now.size() > 1
              && now.stream().anyMatch(p -> p.getId().equals(target))
              && configuration.leader().filter(target::equals).isPresent()) {
            handOverFrom(target, now);
          }
          return null;
        })
        .thenCompose(v -> removeMember(id))
        .thenCompose(
            after ->
                run(
                    () -> {
                      try {
                        RaftClientReply reply =
                            client.getGroupManagementApi(target).remove(groupId, true, false);
                        if (!reply.isSuccess()) {
                          LOG.info(
                              "{} keeps its replica of {} for now: {}",
                              id,
                              groupId,
                              reply.getException());
                        }
                      } catch (IOException unreachable) {
                        LOG.info(
                            "{} not reached to drop its replica of {}: {}",
                            id,
                            groupId,
                            unreachable.toString());
                      }
                      return after;
                    }));
  }

  /**
   * Moves the leadership away from {@code leader}, about to be removed: Ratis closes a removed
   * leader's replica on its own and keeps it, and its node could not host the group again until it
   * restarts. Ratis transfers leadership only to a member of the highest priority, so another
   * member gets priority 1 and the leader 0 first, then the transfer is asked for.
   */
  private void handOverFrom(RaftPeerId leader, List<RaftPeer> now)
      throws IOException, TimeoutException {
    RaftPeerId next =
        now.stream()
            .map(RaftPeer::getId)
            .filter(p -> !p.equals(leader))
            .min(Comparator.comparing(RaftPeerId::toString))
            .orElseThrow();
    if (!now.stream().allMatch(p -> p.getPriority() == (p.getId().equals(next) ? 1 : 0))) {
      setConfiguration(
          SetConfigurationRequest.Arguments.newBuilder()
              .setServersInCurrentConf(now)
              .setServersInNewConf(
                  now.stream()
                      .map(
                          p ->
                              RaftPeer.newBuilder(p)
                                  .setPriority(p.getId().equals(next) ? 1 : 0)
                                  .build())
                      .toList())
              .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
              .build());
    }
    // A leader yields to a member of higher priority on its own only once that member has every
    // entry, which a group taking writes all the time rarely lets it have: ask for the transfer,
    // which holds new writes back until the member caught up.
    try {
      RaftClientReply reply = client.admin().transferLeadership(next, HAND_OVER_ASK_MILLIS);
      if (!reply.isSuccess()) {
        LOG.info(
            "{}: leadership not handed to {} yet: {}", groupName(), next, reply.getException());
      }
    } catch (IOException notYet) {
      LOG.info("{}: leadership not handed to {} yet: {}", groupName(), next, notYet.toString());
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (configuration.leader().map(leader::equals).orElse(true)) {
      pause(
          deadline, "the leadership of " + groupName() + " to move from " + leader + " to " + next);
      configuration.peers(); // where the group is reached through its members: asks who leads
    }
    lifecycle.event(
        "leadership_moved",
        "group",
        groupName(),
        "from",
        leader,
        "to",
        configuration.leader().map(RaftPeerId::toString).orElse(""));
  }

  /** Removes a member and returns the configuration after the change. */
  public CompletableFuture<List<RaftPeer>> removeMember(String id) {
    if (id == null || id.isBlank()) {
      return CompletableFuture.failedFuture(
          new InvalidArgumentException("id", "must name a member"));
    }
    RaftPeerId target = RaftPeerId.valueOf(id);
    return run(
        () -> {
          List<RaftPeer> now = upToDateConfiguration();
          if (now.stream().noneMatch(p -> p.getId().equals(target))) {
            return spreadLeadership(now);
          }
          List<RaftPeer> next = now.stream().filter(p -> !p.getId().equals(target)).toList();
          if (next.isEmpty()) {
            throw new InvalidArgumentException(
                "id", "" + id + " is the only member; a cluster cannot remove its last member");
          }
          // Against the configuration this node knows: if it changed meanwhile, Ratis refuses and
          // nothing happens.
          setConfiguration(
              SetConfigurationRequest.Arguments.newBuilder()
                  .setServersInCurrentConf(now)
                  .setServersInNewConf(next)
                  .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
                  .build());
          if (leaseGroup.isPresent()) {
            lifecycle.event("member_removed", "member", id, "lease_group", leaseGroup.get());
          } else {
            lifecycle.event("member_removed", "member", id);
          }
          return spreadLeadership(
              awaitConfiguration(c -> c.stream().noneMatch(p -> p.getId().equals(target))));
        });
  }

  /**
   * A group's members after a change get priorities that spread the groups' leaderships: the member
   * at the group's slot modulo the number of members, sorted by id, gets 1, the others 0, as the
   * cluster formed them (lease group k's slot is k - 1; with N lease groups the meta group's is N,
   * so it goes to the member leading the fewest lease groups). Ratis's leader hands over to that
   * member once it is caught up. A group without a slot keeps its configuration. Returns the
   * configuration after it.
   */
  private List<RaftPeer> spreadLeadership(List<RaftPeer> now) throws IOException, TimeoutException {
    if (leadSlot.isEmpty() || now.isEmpty()) {
      return now;
    }
    List<RaftPeer> sorted =
        now.stream().sorted(Comparator.comparing(p -> p.getId().toString())).toList();
    RaftPeerId lead = sorted.get(leadSlot.getAsInt() % sorted.size()).getId();
    Map<RaftPeerId, Integer> wanted = new HashMap<>();
    now.forEach(p -> wanted.put(p.getId(), p.getId().equals(lead) ? 1 : 0));
    if (now.stream().allMatch(p -> p.getPriority() == wanted.get(p.getId()))) {
      return now;
    }
    List<RaftPeer> next =
        now.stream()
            .map(p -> RaftPeer.newBuilder(p).setPriority(wanted.get(p.getId())).build())
            .toList();
    setConfiguration(
        SetConfigurationRequest.Arguments.newBuilder()
            .setServersInCurrentConf(now)
            .setServersInNewConf(next)
            .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
            .build());
    lifecycle.event(
        "leadership_spread", "group", leaseGroup.map(String::valueOf).orElse("meta"), "lead", lead);
    return awaitConfiguration(
        c -> c.stream().allMatch(p -> p.getPriority() == wanted.getOrDefault(p.getId(), -1)));
  }

  /**
   * Gives the group's members the priorities that spread the leaderships, if its configuration
   * lacks them (a cluster that turned lease groups on by a rolling restart keeps the meta group's
   * configuration from before, which has none); returns the configuration after it.
   */
  public CompletableFuture<List<RaftPeer>> spreadLeadership() {
    return run(() -> spreadLeadership(upToDateConfiguration()));
  }

  /**
   * Asks the leader to hand over to {@code id} (another member when empty); returns the new leader.
   */
  public CompletableFuture<RaftPeerId> transferLeadership(Optional<String> id, Duration timeout) {
    return run(
        () -> {
          RaftServer.Division d = division.get();
          RaftPeerId leader = d.getInfo().getLeaderId();
          RaftPeerId target;
          if (id.isPresent() && !id.get().isBlank()) {
            target = RaftPeerId.valueOf(id.get());
            if (current().stream().noneMatch(p -> p.getId().equals(target))) {
              throw new InvalidArgumentException(
                  "id", "" + abbreviate(id.get()) + " is not a member");
            }
          } else {
            target =
                current().stream()
                    .map(RaftPeer::getId)
                    .filter(p -> !p.equals(leader))
                    .min(Comparator.comparing(RaftPeerId::toString))
                    .orElseThrow(
                        () ->
                            new InvalidArgumentException("id", "there is no other member to lead"));
          }
          if (!target.equals(leader)) {
            check(client.admin().transferLeadership(target, timeout.toMillis()));
          }
          long deadline = System.nanoTime() + timeout.toNanos();
          while (!target.equals(d.getInfo().getLeaderId())) {
            pause(deadline, "this node to see " + target + " lead");
          }
          return target;
        });
  }

  /** How long a leader about to be removed is given to hand its leadership over when asked. */
  static final long HAND_OVER_ASK_MILLIS = 10_000;

  /** The longest one snapshot request to Ratis may wait before it is asked again. */
  static final long SNAPSHOT_ASK_MILLIS = 2000;

  /**
   * Takes a snapshot on this node that includes every write acknowledged before it was asked for (a
   * linearizable read first brings this node up to the leader's commit index), and returns it. The
   * state machine writes snapshots in the background, so Ratis is asked again until the one started
   * here is done (each answer also lets Ratis purge the log up to it).
   */
  public CompletableFuture<SingleFileSnapshotInfo> takeSnapshot(Duration timeout) {
    return run(
        () -> {
          long deadline = System.nanoTime() + timeout.toNanos();
          catchUpWithLeader(timeout);
          // The last write applied, not the last entry: a snapshot is named by the store's applied
          // position, which entries that are not writes (a new leader's first entry, a
          // configuration)
          // do not move. Waiting for the division's last applied index instead waited out the whole
          // timeout whenever the latest entries were such, as after a leader change with no write
          // since.
          long target = stateMachine.core().applied().index();
          // Before the first write the state machine writes no snapshot: waiting would only run out
          // the clock.
          if (stateMachine.hasNothingToSnapshot()) {
            throw new NothingToSnapshotException(
                "nothing to snapshot yet: the cluster has applied no write (applied index "
                    + target
                    + ")");
          }
          while (true) {
            // Ratis answers a request when its apply thread next wakes and calls takeSnapshot. It
            // wakes
            // that thread once per request; a wake-up that comes while the thread is busy can be
            // lost,
            // and on a quiet cluster no commit wakes it again, so the request waited out its whole
            // timeout (60 s, twice in a row, between fan-out benchmark phases). Short
            // requests, asked again, each wake it anew.
            long callTimeout =
                Math.max(
                    1000,
                    Math.min(
                        SNAPSHOT_ASK_MILLIS,
                        TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            RaftClientReply reply;
            try {
              reply =
                  join(
                      server.snapshotManagementAsync(
                          SnapshotManagementRequest.newCreate(
                              snapshotClientId,
                              selfId,
                              groupId,
                              snapshotCallId.incrementAndGet(),
                              callTimeout,
                              1)));
            } catch (TimeoutIOException unanswered) {
              pause(deadline, "a snapshot at index " + target);
              continue;
            }
            check(reply);
            Optional<SingleFileSnapshotInfo> latest = stateMachine.latestSnapshotFile();
            if (latest.isPresent() && latest.get().getIndex() >= target) {
              // Ratis purges after the snapshots it asked for itself; this one it only learns of
              // later.
              division.get().getRaftLog().purge(latest.get().getIndex());
              return latest.get();
            }
            pause(deadline, "a snapshot at index " + target);
          }
        });
  }

  /**
   * This node's configuration once it has caught up with the leader's commit index. A follower's
   * own view may be stale (it was cut off, or has just been added): deciding "already a member" or
   * "already gone" from it once made RemoveMember report a member removed that was not, and the
   * operator then wiped a node that was still a voter.
   */
  private List<RaftPeer> upToDateConfiguration() throws IOException, TimeoutException {
    catchUpWithLeader(Duration.ofSeconds(30));
    return current();
  }

  /**
   * A linearizable read's barrier: this node has applied everything the leader had committed when
   * it was asked.
   */
  private void catchUpWithLeader(Duration timeout) throws IOException, TimeoutException {
    try {
      readBarrier.get().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io
          ? io
          : new IOException(
              "no leader to read the commit index from: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      // The future's own exception has no message, and the caller's status would have none.
      throw new TimeoutException(
          "timed out after "
              + timeout.toMillis()
              + " ms waiting for this node to catch up with the leader's"
              + " commit index");
    }
  }

  private List<RaftPeer> current() throws IOException {
    return configuration.peers();
  }

  private List<RaftPeer> awaitConfiguration(Predicate<List<RaftPeer>> done)
      throws IOException, TimeoutException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.test(current())) {
      pause(deadline, "this node to apply the new configuration");
    }
    return current();
  }

  private static void pause(long deadlineNanos, String what) throws TimeoutException {
    if (System.nanoTime() - deadlineNanos > 0) {
      throw new TimeoutException("timed out waiting for " + what);
    }
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TimeoutException("interrupted waiting for " + what);
    }
  }

  private static RaftClientReply join(CompletableFuture<RaftClientReply> f) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    }
  }

  /**
   * A membership change through the leader. Ratis 3.3 can leave a leader with a log appender for a
   * peer outside its configuration (seen in a soak after a member was removed and added back).
   * Adding that peer then fails in {@code startSetConfiguration} ("Found duplicated element") after
   * the request was registered as pending, and Ratis never clears it: every later change on that
   * leader fails with a bare IllegalStateException. A new leader starts with appenders for its
   * configuration only, so the leader is asked to step down and the change is made once more.
   */
  private void setConfiguration(SetConfigurationRequest.Arguments args) throws IOException {
    retries.clear();
    try {
      check(client.admin().setConfiguration(args));
    } catch (IOException e) {
      // Ratis's RaftRetryFailureException does not carry the attempts' failures: the policy kept
      // the last.
      Optional<Throwable> broken =
          leaderInvariantFailure(e)
              .or(() -> retries.lastFailure().flatMap(ClusterAdmin::leaderInvariantFailure));
      if (broken.isEmpty()) {
        throw e;
      }
      RaftPeerId leader = leaderOrNull();
      lifecycle.event(
          "leader_step_down",
          "leader",
          leader,
          "why",
          "membership change refused: " + broken.get());
      LOG.warn(
          "the leader {} refused a membership change with {}; asking it to step down and trying again at the next leader",
          leader,
          broken.get().toString());
      check(client.admin().transferLeadership(null, STEP_DOWN_TIMEOUT.toMillis()));
      check(client.admin().setConfiguration(args));
    }
  }

  private static final Duration STEP_DOWN_TIMEOUT = Duration.ofSeconds(10);

  private String groupName() {
    return leaseGroup.map(k -> "lease group " + k).orElse("the meta group");
  }

  /** The leader this node's replica follows, for the record; null where it has no replica. */
  private RaftPeerId leaderOrNull() {
    try {
      return division.get().getInfo().getLeaderId();
    } catch (IllegalStateException notHere) {
      return null;
    }
  }

  /**
   * The admin client's retry policy: {@code delegate}'s, except that a failure of the leader's own
   * state is not retried (it would fail the same way), and the last attempt's failure is kept. The
   * admin calls run one at a time, on this class's thread.
   */
  public static final class Retries implements RetryPolicy {
    private final RetryPolicy delegate;
    private volatile Throwable last;

    public Retries(RetryPolicy delegate) {
      this.delegate = delegate;
    }

    @Override
    public Action handleAttemptFailure(Event event) {
      last = event.getCause();
      if (last != null && leaderInvariantFailure(last).isPresent()) {
        return NO_RETRY_ACTION;
      }
      return delegate.handleAttemptFailure(event);
    }

    Optional<Throwable> lastFailure() {
      return Optional.ofNullable(last);
    }

    void clear() {
      last = null;
    }
  }

  /**
   * The IllegalStateException from the leader's own state in {@code e}'s causes, if that is why it
   * failed.
   */
  static Optional<Throwable> leaderInvariantFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (t instanceof IllegalStateException
          || m.contains("IllegalStateException")
          || m.contains("Found duplicated element")) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }

  private static void check(RaftClientReply reply) throws IOException {
    if (!reply.isSuccess()) {
      throw reply.getException() != null
          ? reply.getException()
          : new IOException("refused: " + reply);
    }
  }

  static RaftPeer validMember(String id, String peerAddress, String clientAddress) {
    int peerPort = hostPort("member.peer_address", peerAddress);
    int clientPort = hostPort("member.client_address", clientAddress);
    try {
      // Peer's rules for ids and ports, applied to the id as given. (Parsing "id=host:port:port"
      // instead took the id "a=b" for "a" and trimmed " n9" to "n9", and a member was then added
      // under an id no node can have: the call hung while the cluster tried to reach it.)
      new Peer(id, bare(hostOf(peerAddress)), peerPort, clientPort);
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException(
          String.valueOf(e.getMessage()).startsWith("peer id") ? "member.id" : "member",
          "" + e.getMessage());
    }
    return Members.raftPeer(id, peerAddress, clientAddress);
  }

  /**
   * A host name (letters, digits, '-' and '_' in dot-separated labels), an IPv4 address or a
   * bracketed IPv6 address.
   */
  private static final Pattern HOST =
      Pattern.compile(
          "[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?|\\[[0-9A-Fa-f:.]+\\]");

  private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

  /**
   * The port of a {@code host:port}; refuses hosts no node can be reached at and ports that are not
   * plain numbers.
   */
  private static int hostPort(String field, String address) {
    if (address == null || address.isBlank() || address.lastIndexOf(':') <= 0) {
      throw new InvalidArgumentException(
          field, "expected host:port, got \"" + abbreviate(address) + "\"");
    }
    if (!HOST.matcher(hostOf(address)).matches()) {
      throw new InvalidArgumentException(
          field,
          "the host must be a host name, an IPv4 address or an IPv6 address in brackets, got \""
              + abbreviate(hostOf(address))
              + "\"");
    }
    if (!PORT.matcher(portOf(address)).matches()) {
      throw new InvalidArgumentException(
          field, "expected host:port with the port in digits, got \"" + abbreviate(address) + "\"");
    }
    int port = Integer.parseInt(portOf(address));
    if (port < 1 || port > 65535) {
      throw new InvalidArgumentException(field, "port must be 1-65535, got " + port);
    }
    return port;
  }

  private static String bare(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  private static String abbreviate(String s) {
    return s == null || s.length() <= 64 ? s : s.substring(0, 61) + "...";
  }

  private static String hostOf(String address) {
    return address.substring(0, address.lastIndexOf(':'));
  }

  private static String portOf(String address) {
    return address.substring(address.lastIndexOf(':') + 1);
  }

  /** A blocking step on the admin thread. */
  private interface Step<T> {
    T run() throws IOException, TimeoutException;
  }

  private <T> CompletableFuture<T> run(Step<T> step) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      thread.execute(
          () -> {
            try {
              result.complete(step.run());
            } catch (IOException | TimeoutException | RuntimeException e) {
              result.completeExceptionally(e);
            }
          });
    } catch (RejectedExecutionException closed) {
      result.completeExceptionally(new IOException("this node is stopping"));
    }
    return result;
  }

  @Override
  public void close() {
    thread.shutdownNow();
    try {
      client.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
