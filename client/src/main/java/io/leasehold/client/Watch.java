package io.leasehold.client;

/**
 * A running watch ({@link LeaseholdClient#watch}). It follows the cluster across node failures:
 * when its stream breaks it resumes on another node right after the last revision it delivered.
 */
public interface Watch extends AutoCloseable {
  /**
   * Every event up to this revision has been delivered to the listener (0 before the first
   * message). On a cluster with lease groups, a watch of one namespace counts its group's
   * revisions, and one across namespaces the meta group's (see docs/client.md).
   *
   * @return the revision delivered up to (0 before the first message)
   */
  long revision();

  /**
   * Whether the watch was closed or ended with an error.
   *
   * @return whether it stopped; a stopped watch never resumes
   */
  boolean isClosed();

  /** Stops the watch; the listener is not called again. Idempotent. */
  @Override
  void close();
}
