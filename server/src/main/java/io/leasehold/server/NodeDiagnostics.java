package io.leasehold.server;

import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.raft.CommitClock;
import io.leasehold.server.raft.PeerTraffic;
import io.leasehold.server.raft.ReplicationTrace;

/**
 * What benchmarks, diagnostics and fault tests may reach inside a node, and nothing else reads:
 * when the leader found its commit index moved ({@link CommitClock}), where log entries' time goes
 * on followers ({@link ReplicationTrace}), controlled delivery of the Raft appends this node
 * receives ({@link PeerTraffic}), and the expiry ticker's schedule.
 */
public record NodeDiagnostics(
    CommitClock commitClock,
    ReplicationTrace replicationTrace,
    PeerTraffic peerTraffic,
    ExpiryTicker ticker) {}
