package io.leasehold.server.api;

import io.leasehold.server.auth.Caller;
import io.leasehold.server.raft.Consensus;

/**
 * What the Cluster service needs of the node it runs on: its id, its consensus (view, members,
 * controls), its audit.
 */
public interface LocalMember {
  String id();

  /** Role and term, members and their addresses, membership, leadership transfer and snapshots. */
  Consensus consensus();

  /** Records a cluster action, with its outcome, in the audit history. */
  void audit(Caller caller, String action, String target, String outcome, String detail);
}
