package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.Event;
import java.nio.ByteBuffer;
import java.util.OptionalLong;

/** The API form of applied changes, and their keys in the history. One function for history and live delivery. */
public final class Events {
  private Events() {}

  public static Event toApi(LeaseEvent e) {
    Event.Builder b = Event.newBuilder()
        .setType(type(e.type()))
        .setRevision(e.revision())
        .setName(e.name())
        .setLease(LeaseViews.toLease(e.name(), e.lease(), OptionalLong.empty()))
        .setTime(Times.timestamp(e.timeMicros()));
    switch (e.type()) {
      case RELEASED -> b.setReason(Event.Reason.REASON_RELEASED);
      case EXPIRED -> b.setReason(Event.Reason.REASON_EXPIRED);
      default -> { }
    }
    return b.build();
  }

  public static Event.Type type(LeaseEvent.Type t) {
    return switch (t) {
      case ACQUIRED -> Event.Type.ACQUIRED;
      case RENEWED -> Event.Type.RENEWED;
      case UPDATED -> Event.Type.UPDATED;
      case RELEASED -> Event.Type.RELEASED;
      case EXPIRED -> Event.Type.EXPIRED;
    };
  }

  /** Whether the event is kept in the history. Renewals are not: a batch of them would flood it. */
  public static boolean kept(LeaseEvent e) {
    return e.type() != LeaseEvent.Type.RENEWED;
  }

  /** History key: revision then sequence within the entry, big-endian, so keys sort in event order. */
  public static byte[] key(long revision, int sequence) {
    return ByteBuffer.allocate(12).putLong(revision).putInt(sequence).array();
  }

  public static long revisionOf(byte[] key) {
    return ByteBuffer.wrap(key).getLong();
  }
}
