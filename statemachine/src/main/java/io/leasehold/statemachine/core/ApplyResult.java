package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LogReply;
import java.util.Collections;
import java.util.List;

/**
 * What applying one log entry produced: the reply for the proposer, the events for the ticker and
 * watchers, in order, and the lock-delays and timed bans it set or removed, for the leader that
 * lifts them, and the sessions it created, kept alive or ended, for the leader that expires them.
 * The API form of the events ({@link Events#toApi}) is built only by whoever delivers them, so an
 * entry nobody watches costs nothing more.
 */
public record ApplyResult(
    long revision,
    LogReply reply,
    List<LeaseEvent> events,
    List<TimedBar> bars,
    List<SessionChange> sessions) {
  public ApplyResult {
    // Not copied: a batch of renewals yields thousands of events per entry, built once by the core.
    events = Collections.unmodifiableList(events);
    bars = bars.isEmpty() ? List.of() : Collections.unmodifiableList(bars);
    sessions = sessions.isEmpty() ? List.of() : Collections.unmodifiableList(sessions);
  }

  public ApplyResult(long revision, LogReply reply, List<LeaseEvent> events, List<TimedBar> bars) {
    this(revision, reply, events, bars, List.of());
  }

  public ApplyResult(long revision, LogReply reply, List<LeaseEvent> events) {
    this(revision, reply, events, List.of(), List.of());
  }

  static ApplyResult skipped(long revision) {
    return new ApplyResult(
        revision, LogReply.getDefaultInstance(), List.of(), List.of(), List.of());
  }
}
