package io.leasehold.server;

import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.raft.CommitClock;
import io.leasehold.server.raft.ReplicationTrace;

/**
 * What benchmarks and diagnostics may watch inside a node, and nothing else reads: when the
 * leader found its commit index moved ({@link CommitClock}), where log entries' time goes between
 * leader and followers ({@link ReplicationTrace}), and the expiry ticker's schedule.
 */
public record NodeDiagnostics(CommitClock commitClock, ReplicationTrace replicationTrace, ExpiryTicker ticker) {}
