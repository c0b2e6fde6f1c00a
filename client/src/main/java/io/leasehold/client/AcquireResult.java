package io.leasehold.client;

/**
 * The outcome of one acquisition attempt ({@link LeaseholdClient#tryAcquire}): a business outcome,
 * not an error. One of three cases, each carrying only its own fields; the interface is sealed, so
 * a pattern {@code switch} over them (Java 21) needs no default:
 *
 * <pre>{@code
 * AcquireResult r = client.tryAcquire("jobs/nightly").join();
 * if (r instanceof Granted g) {
 *   run(g.lease());
 * } else if (r instanceof Conflict c) {
 *   log("held by " + c.holder());
 * } else if (r instanceof Rejected rejected) {
 *   log("refused: " + rejected.rejection().message());
 * }
 * }</pre>
 */
public sealed interface AcquireResult permits Granted, Conflict, Rejected {
  /**
   * Whether the name was granted.
   *
   * @return true for {@link Granted}; false for a conflict or a rejection
   */
  default boolean isGranted() {
    return this instanceof Granted;
  }
}
