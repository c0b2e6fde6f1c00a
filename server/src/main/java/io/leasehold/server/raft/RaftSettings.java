package io.leasehold.server.raft;

import io.leasehold.server.NodeConfig;
import io.leasehold.server.tls.NodeTls;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/** The Ratis properties of a node's server and of its Raft clients, from its {@link NodeConfig}. */
public final class RaftSettings {
  /** Ratis's client request pool: one thread per core, and at least two. */
  public static final int RATIS_CLIENT_THREADS =
      Math.max(2, Runtime.getRuntime().availableProcessors());

  private RaftSettings() {}

  static RaftProperties server(NodeConfig c) {
    RaftProperties p = new RaftProperties();
    RaftServerConfigKeys.setStorageDir(p, List.of(c.dataDir().resolve("raft").toFile()));
    GrpcConfigKeys.Server.setHost(p, c.bindHost());
    GrpcConfigKeys.Server.setPort(p, c.self().peerPort());
    // Ratis 3.3's follower, with append-entries compose on (its default), queues each append and
    // skips a later one whose first index matches one still queued, without comparing terms or
    // lengths; it still answers SUCCESS for the skipped one's last entry and takes its commit
    // index. A deposed leader's own uncommitted tail then stands in for the new leader's entries,
    // is counted as matching, and is applied: replicas diverge (docs/architecture.md,
    // "Replication";
    // RatisDuplicateAppendTest shows it, DuplicateAppendDivergenceTest drives it end to end).
    // Off, each append reaches the log in arrival order before the next is checked.
    RaftServerConfigKeys.Log.setAppendEntriesComposeEnabled(p, false);
    // A follower whose log parts from the leader's (a deposed leader's uncommitted tail) is
    // walked back one entry per INCONSISTENCY answer, and Ratis counts each answer as an error:
    // by default it sleeps 1 s, then 5 s, between tries after ten, and a tail of a few hundred
    // entries took many minutes to replace. Answers come back within a round trip, so the first
    // thousand tries follow at once; a follower that does not answer at all backs off as before.
    RaftServerConfigKeys.Log.Appender.setRetryPolicy(p, "1ms,1000, 1s,20, 5s,1000");
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(c.electionTimeoutMin()));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(c.electionTimeoutMax()));
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, c.snapshotThreshold());
    RaftServerConfigKeys.Snapshot.setCreationGap(p, Math.min(1024, c.snapshotThreshold()));
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(Integer.MAX_VALUE, c.logPurgeGap()));
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(c.logSegmentSizeBytes()));
    // Ratis refuses an entry larger than its appender's buffer limit (4 MB by default), and its
    // write buffer must hold one: both fit the largest request the client port takes, with room
    // for the command around it (a batch stays far smaller, WriteBatcher.MAX_BATCH_BYTES).
    long entryLimit = Math.max(4L << 20, c.limits().requestBytes() + (64L << 10));
    RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf(entryLimit));
    RaftServerConfigKeys.Log.setWriteBufferSize(
        p, SizeInBytes.valueOf(Math.max(8L << 20, entryLimit + 8)));
    // Ratis keeps up to six closed segments (200 MB) of entries on the heap for appenders that
    // fall behind: under steady writes, heap the leases need. A follower further behind than one
    // closed segment is served from disk instead.
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 1);
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(
        p, SizeInBytes.valueOf(Math.max(c.logSegmentSizeBytes(), 16L << 20)));
    // Ratis otherwise appends a metadata entry (the new commit index) to the log at every commit
    // advance: under load, nearly one more replicated, fsynced entry per write. A restarted node
    // needs no such record: the store keeps its own applied index, and the leader tells it the
    // commit index.
    RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
    // The retry cache keeps every write's reply so a resend is answered, not applied again. Ours
    // are resent for at most the request timeout (Replicator), so twice that is enough; Ratis's
    // default of 60 s held some 200,000 replies per node at 3,000 writes/s, and the young
    // collections that copied them paused every node for 100-170 ms.
    RaftServerConfigKeys.RetryCache.setExpiryTime(p, millis(c.requestTimeout().multipliedBy(2)));
    // Ratis hands each client request to its client pool and the caller waits for it there; the
    // pool's work ends in one synchronized append, so more threads than cores add only
    // contention. Its default is unbounded: when a snapshot slowed the leader for a moment, the
    // pool grew to some 340 threads queued on that lock, and writes and watches stalled for up to
    // a second behind the convoy. A fixed pool queues the requests instead.
    RaftServerConfigKeys.ThreadPool.setClientCached(p, false);
    RaftServerConfigKeys.ThreadPool.setClientSize(p, RATIS_CLIENT_THREADS);
    c.raftProperties().forEach(p::set);
    return p;
  }

  /** The node's Raft clients dial the members' Raft ports, so they speak the peers' TLS. */
  static Parameters clientParameters(NodeTls tls) {
    Parameters p = new Parameters();
    peerTls(tls).ifPresent(conf -> GrpcConfigKeys.TLS.setConf(p, conf));
    return p;
  }

  /**
   * Mutual TLS for Ratis's gRPC (server, peer client and Raft client alike). Ratis hands the
   * managers to its shaded netty as they are, so they reload with the node's certificate files.
   */
  static Optional<GrpcTlsConfig> peerTls(NodeTls tls) {
    return tls.peerPort()
        .map(t -> new GrpcTlsConfig(t.keyManager(), t.trustManager().orElseThrow(), true));
  }

  static RaftProperties client(NodeConfig c) {
    RaftProperties p = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(c.electionTimeoutMax().multipliedBy(2)));
    // Above our own admission bound, so Ratis never blocks a gRPC thread waiting for a slot.
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(p, c.maxPendingWrites() + 16);
    return p;
  }

  /**
   * Membership changes wait for a new member to catch up; snapshots and transfers for the leader.
   */
  static RaftProperties adminClient() {
    RaftProperties p = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(60, TimeUnit.SECONDS));
    return p;
  }

  static TimeDuration millis(Duration d) {
    return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
  }
}
