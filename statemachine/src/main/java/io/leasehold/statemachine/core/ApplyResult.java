package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LogReply;
import java.util.List;

/**
 * What applying one log entry produced: the reply for the proposer, the events for the ticker and
 * watchers, and the API form of the events kept in the history (every event but renewals, in
 * order), built once for the history and reused for live delivery.
 */
public record ApplyResult(long revision, LogReply reply, List<LeaseEvent> events, List<Event> keptEvents) {
  public ApplyResult {
    // Not copied: a batch of renewals yields thousands of events per entry, built once by the core.
    events = java.util.Collections.unmodifiableList(events);
    keptEvents = java.util.Collections.unmodifiableList(keptEvents);
  }

  static ApplyResult skipped(long revision) {
    return new ApplyResult(revision, LogReply.getDefaultInstance(), List.of(), List.of());
  }
}
