package io.leasehold.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A change to a lease, produced by applying one log entry; every node produces the same events with
 * the same revisions.
 *
 * @param type what happened; {@link EventType#UNKNOWN} for a type newer than this SDK
 * @param revision the log index of the entry that made the change (several events may share one)
 * @param name the lease's name
 * @param lease the lease after the change; for endings, as it was; absent for events that are not
 *     about one lease (POLICY_CHANGED, whose name is {@code "<namespace>/"})
 * @param reason why the lease ended, for RELEASED, EXPIRED and REVOKED (REVOKED or BANNED)
 * @param time the leader's wall-clock time of the change
 * @param message for REVOKED, the reason the operator gave
 * @param previousAttributes for UPDATED, the lease's attributes before the change (in the full
 *     view, from nodes that keep them); empty for every other type
 * @param group on a cluster with lease groups, the Raft group that applied the change, whose
 *     revisions it carries (revisions compare only within a group, and a namespace's group changes
 *     when it moves; a watch resumes from a revision with its group, {@link
 *     WatchOptions#withFromRevision(long, int)}); otherwise 0
 */
public record WatchEvent(
    EventType type,
    long revision,
    String name,
    Optional<LeaseInfo> lease,
    Optional<EndReason> reason,
    Instant time,
    Optional<String> message,
    Optional<LeaseAttributes> previousAttributes,
    int group) {
  /**
   * Checks that every field is given.
   *
   * @param type what happened; {@link EventType#UNKNOWN} for a type newer than this SDK
   * @param revision the log index of the entry that made the change (several events may share one)
   * @param name the lease's name
   * @param lease the lease after the change; for endings, as it was; absent for events that are not
   *     about one lease (POLICY_CHANGED, whose name is {@code "<namespace>/"})
   * @param reason why the lease ended, for RELEASED, EXPIRED and REVOKED (REVOKED or BANNED)
   * @param time the leader's wall-clock time of the change
   * @param message for REVOKED, the reason the operator gave
   * @param previousAttributes for UPDATED, the attributes before the change
   * @param group in a watch across namespaces with lease groups, the group that applied it; else 0
   */
  public WatchEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(time, "time");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(previousAttributes, "previousAttributes");
  }

  /**
   * An event of a watch within one group (group 0).
   *
   * @param type what happened
   * @param revision the log index of the entry that made the change
   * @param name the lease's name
   * @param lease the lease after the change; for endings, as it was
   * @param reason why the lease ended
   * @param time the leader's wall-clock time of the change
   * @param message for REVOKED, the reason the operator gave
   * @param previousAttributes for UPDATED, the attributes before the change
   */
  public WatchEvent(
      EventType type,
      long revision,
      String name,
      Optional<LeaseInfo> lease,
      Optional<EndReason> reason,
      Instant time,
      Optional<String> message,
      Optional<LeaseAttributes> previousAttributes) {
    this(type, revision, name, lease, reason, time, message, previousAttributes, 0);
  }

  /**
   * An event without the attributes before it.
   *
   * @param type what happened
   * @param revision the log index of the entry that made the change
   * @param name the lease's name
   * @param lease the lease after the change; for endings, as it was
   * @param reason why the lease ended
   * @param time the leader's wall-clock time of the change
   * @param message for REVOKED, the reason the operator gave
   */
  public WatchEvent(
      EventType type,
      long revision,
      String name,
      Optional<LeaseInfo> lease,
      Optional<EndReason> reason,
      Instant time,
      Optional<String> message) {
    this(type, revision, name, lease, reason, time, message, Optional.empty(), 0);
  }

  /**
   * Whether the event ends the lease: RELEASED, EXPIRED, REVOKED, or a type newer than this SDK
   * that carries an ending reason.
   *
   * @return whether the event ends the lease
   */
  public boolean endsLease() {
    return switch (type) {
      case RELEASED, EXPIRED, REVOKED -> true;
      case ACQUIRED, UPDATED, RENEWED, POLICY_CHANGED -> false;
      case UNKNOWN -> reason.isPresent();
    };
  }
}
