package io.leasehold.server.raft;

import java.io.IOException;

/** A snapshot (or backup) asked for before the cluster stored anything. */
public final class NothingToSnapshotException extends IOException {
  public NothingToSnapshotException(String message) {
    super(message);
  }
}
