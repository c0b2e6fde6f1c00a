package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LogReply;
import java.util.List;

/**
 * What applying one log entry produced: the reply for the proposer and the events for the ticker
 * and watchers, in order. The API form of the events ({@link Events#toApi}) is built only by
 * whoever delivers them, so an entry nobody watches costs nothing more.
 */
public record ApplyResult(long revision, LogReply reply, List<LeaseEvent> events) {
  public ApplyResult {
    // Not copied: a batch of renewals yields thousands of events per entry, built once by the core.
    events = java.util.Collections.unmodifiableList(events);
  }

  static ApplyResult skipped(long revision) {
    return new ApplyResult(revision, LogReply.getDefaultInstance(), List.of());
  }
}
