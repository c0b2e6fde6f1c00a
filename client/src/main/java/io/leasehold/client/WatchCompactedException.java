package io.leasehold.client;

import io.grpc.Status;

/**
 * A watch asked for history the cluster no longer keeps. List again (which returns a revision R)
 * and watch from R + 1; {@link RoutingTable} does this by itself.
 */
public class WatchCompactedException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** The oldest revision the cluster still keeps history from. */
  private final long compactRevision;

  /**
   * The history before {@code compactRevision} is no longer kept.
   *
   * @param message what went wrong
   * @param compactRevision the oldest revision still kept (0 if unknown)
   */
  public WatchCompactedException(String message, long compactRevision) {
    super(message, Status.Code.OUT_OF_RANGE, null);
    this.compactRevision = compactRevision;
  }

  /**
   * The oldest revision the history still holds (0 if the cluster did not say).
   *
   * @return the oldest revision still kept
   */
  public long compactRevision() {
    return compactRevision;
  }
}
