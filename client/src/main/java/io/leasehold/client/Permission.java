package io.leasehold.client;

/** What a role lets its holders do; each permission includes the ones before it. */
public enum Permission {
  /** Read and watch. */
  READER,
  /** Acquire, renew, release and update its own leases; read; watch. */
  CLIENT,
  /** Policy, bans, revocation, history, membership, snapshots, backup, roles and grants. */
  ADMIN
}
