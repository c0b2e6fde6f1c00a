package io.leasehold.server.raft;

import java.io.IOException;

/**
 * A backup met a namespace move: its groups' snapshots could hold the namespace in both groups or
 * in neither, so it is not taken; once the move is over, it can be.
 */
public final class MovingNamespaceException extends IOException {
  public MovingNamespaceException(String message) {
    super(message);
  }
}
