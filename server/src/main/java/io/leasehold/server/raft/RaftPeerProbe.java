package io.leasehold.server.raft;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;

/**
 * {@link PeerProbe} through a Raft client of its own: one attempt, a short deadline, one question
 * per member at a time and at most {@link #MAX_IN_FLIGHT} in all, so an unreachable member costs
 * the dashboard one deadline and never a thread per refresh or per tab.
 */
final class RaftPeerProbe implements PeerProbe {
  static final Duration DEADLINE = Duration.ofSeconds(1);
  static final int MAX_IN_FLIGHT = 8;

  private final NodeRaft raft;
  private final RaftClient client;
  private final ThreadPoolExecutor threads;
  private final Map<String, CompletableFuture<Consensus.MemberReport>> inFlight =
      new ConcurrentHashMap<>();

  RaftPeerProbe(NodeRaft raft, String nodeId) {
    this.raft = raft;
    RaftProperties properties = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(properties, RaftSettings.millis(DEADLINE));
    this.client = raft.newClient(properties, RetryPolicies.noRetry());
    this.threads =
        new ThreadPoolExecutor(
            0,
            MAX_IN_FLIGHT,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "leasehold-peer-probe-" + nodeId);
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public CompletableFuture<Consensus.MemberReport> report(String memberId) {
    // Every open tab refreshes each second: tabs asking while a question is out share its answer.
    return inFlight.compute(
        memberId, (id, asked) -> asked != null && !asked.isDone() ? asked : ask(id));
  }

  private CompletableFuture<Consensus.MemberReport> ask(String memberId) {
    try {
      return CompletableFuture.supplyAsync(
              () -> {
                try {
                  return report(
                      client
                          .getGroupManagementApi(RaftPeerId.valueOf(memberId))
                          .info(raft.groupId()));
                } catch (IOException e) {
                  throw new CompletionException(e);
                }
              },
              threads)
          .orTimeout(DEADLINE.toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new IOException("too many member probes in flight", e));
    }
  }

  /**
   * Ratis's group info as the member's own account: its role, term, commit and applied index,
   * leader, storage.
   */
  static Consensus.MemberReport report(GroupInfoReply r) {
    RaftProtos.RoleInfoProto role = r.getRoleInfoProto();
    RaftProtos.LogInfoProto log = r.getLogInfoProto();
    return new Consensus.MemberReport(
        role.getRole().name(),
        role.hasLeaderInfo() ? role.getLeaderInfo().getTerm() : log.getCommitted().getTerm(),
        log.getCommitted().getIndex(),
        log.getApplied().getIndex(),
        leaderOf(role),
        r.isRaftStorageHealthy());
  }

  private static String leaderOf(RaftProtos.RoleInfoProto role) {
    if (role.hasLeaderInfo()) {
      return role.getSelf().getId().toStringUtf8();
    }
    if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()) {
      return role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
    }
    return "";
  }

  @Override
  public void close() {
    threads.shutdownNow();
    try {
      client.close();
    } catch (IOException e) {
      // Closing: nothing waits on the probe's connections.
    }
  }
}
