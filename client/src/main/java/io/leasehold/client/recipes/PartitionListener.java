package io.leasehold.client.recipes;

/**
 * Told when a {@link PartitionMember} starts and stops owning a partition. Both run on the member's
 * own thread, one at a time and in order; neither may block for long.
 */
public interface PartitionListener {
  /**
   * This member now owns {@code partition}: its lease is held and valid. Pass {@code token} to
   * every resource written on the partition's behalf, so that a resource can refuse a former
   * owner's late write.
   *
   * @param partition the partition, {@code 0..n-1}
   * @param token the fencing token of this member's lease on it
   */
  void onAssigned(int partition, long token);

  /**
   * Stop using {@code partition} now: it is about to be handed to another member (the handoff is
   * sent only after this returns), or its lease may no longer be valid (JEOPARDY, LOST), or the
   * member is leaving.
   *
   * @param partition the partition, {@code 0..n-1}
   */
  void onRevoked(int partition);
}
