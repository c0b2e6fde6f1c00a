package io.leasehold.client;

/**
 * Receives a watch's events in revision order, with no gap and no duplicate, across reconnections
 * to other nodes. Called on the client's callback executor, one call at a time; the stream is not
 * read further until a call returns, so a slow listener slows its watch, not the client.
 */
public interface WatchListener {
  /**
   * One change.
   *
   * @param event the change, in revision order
   */
  void onEvent(WatchEvent event);

  /**
   * Every event up to and including {@code revision} has been delivered (also sent when idle).
   *
   * @param revision every event up to and including it was delivered
   */
  default void onProgress(long revision) {}

  /**
   * The watch ended and will not resume: the cluster refused it (bad prefix: {@link
   * InvalidRequestException}) or its start revision is no longer in the history ({@link
   * WatchCompactedException}: list again and watch from the list's revision + 1). Not called when
   * the watch or the client is closed.
   *
   * @param error why the watch ended
   */
  default void onError(LeaseholdException error) {}
}
