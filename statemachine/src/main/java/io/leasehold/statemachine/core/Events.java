package io.leasehold.statemachine.core;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.StoredEvent;
import io.leasehold.statemachine.store.StoreException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.OptionalLong;

/**
 * The API form of applied changes, their stored form in the history, and their keys. One function
 * ({@link #toApi}) for history and live delivery.
 */
public final class Events {
  private Events() {}

  public static Event toApi(LeaseEvent e) {
    Event.Builder b =
        Event.newBuilder()
            .setType(type(e.type()))
            .setRevision(e.revision())
            .setName(e.name())
            .setTime(Times.timestamp(e.timeMicros()));
    if (e.type() != LeaseEvent.Type.POLICY_CHANGED) {
      b.setLease(LeaseViews.toLease(e.name(), e.lease(), OptionalLong.empty()));
    }
    Event.Reason reason = reason(e.type());
    if (reason != Event.Reason.REASON_UNSPECIFIED) {
      b.setReason(reason);
    }
    if (!e.message().isEmpty()) {
      b.setMessage(e.message());
    }
    if (ServiceVersions.changes(e.type()) && ServiceVersions.serviceOf(e.name()) != null) {
      b.setServiceVersion(e.revision());
    }
    if (e.previous() != null) {
      b.setPreviousAttributes(e.previous());
    }
    return b.build();
  }

  /** The API type: a ban's endings are REVOKED events whose reason says BANNED. */
  public static Event.Type type(LeaseEvent.Type t) {
    return switch (t) {
      case ACQUIRED -> Event.Type.ACQUIRED;
      case RENEWED -> Event.Type.RENEWED;
      case UPDATED -> Event.Type.UPDATED;
      case RELEASED, TRANSFERRED, SESSION_CLOSED -> Event.Type.RELEASED;
      case EXPIRED, SESSION_EXPIRED -> Event.Type.EXPIRED;
      case REVOKED, BANNED -> Event.Type.REVOKED;
      case POLICY_CHANGED -> Event.Type.POLICY_CHANGED;
    };
  }

  /** Why a lease ended, for endings; unspecified otherwise. */
  public static Event.Reason reason(LeaseEvent.Type t) {
    return switch (t) {
      case RELEASED -> Event.Reason.REASON_RELEASED;
      case EXPIRED -> Event.Reason.REASON_EXPIRED;
      case REVOKED -> Event.Reason.REASON_REVOKED;
      case BANNED -> Event.Reason.REASON_BANNED;
      case TRANSFERRED -> Event.Reason.REASON_TRANSFERRED;
      case SESSION_EXPIRED -> Event.Reason.REASON_SESSION_EXPIRED;
      case SESSION_CLOSED -> Event.Reason.REASON_SESSION_CLOSED;
      default -> Event.Reason.REASON_UNSPECIFIED;
    };
  }

  static LeaseEvent.Type type(Event.Type t, Event.Reason reason) {
    return switch (t) {
      case ACQUIRED -> LeaseEvent.Type.ACQUIRED;
      case RENEWED -> LeaseEvent.Type.RENEWED;
      case UPDATED -> LeaseEvent.Type.UPDATED;
      case RELEASED ->
          reason == Event.Reason.REASON_TRANSFERRED
              ? LeaseEvent.Type.TRANSFERRED
              : reason == Event.Reason.REASON_SESSION_CLOSED
                  ? LeaseEvent.Type.SESSION_CLOSED
                  : LeaseEvent.Type.RELEASED;
      case EXPIRED ->
          reason == Event.Reason.REASON_SESSION_EXPIRED
              ? LeaseEvent.Type.SESSION_EXPIRED
              : LeaseEvent.Type.EXPIRED;
      case REVOKED ->
          reason == Event.Reason.REASON_BANNED ? LeaseEvent.Type.BANNED : LeaseEvent.Type.REVOKED;
      case POLICY_CHANGED -> LeaseEvent.Type.POLICY_CHANGED;
      default -> throw new StoreException("unknown event type in history: " + t, null);
    };
  }

  /** Whether the event is kept in the history. Renewals are not: a batch of them would flood it. */
  public static boolean kept(LeaseEvent e) {
    return e.type() != LeaseEvent.Type.RENEWED;
  }

  /**
   * The {@link StoredEvent} bytes of {@code e}, with {@code leaseBytes} (the serialised {@code
   * e.lease()}) copied in as they are: the apply loop has already serialised the record for the
   * lease write, and serialising it again was a third of the cost of an acquisition.
   */
  static byte[] encode(LeaseEvent e, byte[] leaseBytes) {
    int type = type(e.type()).getNumber();
    // Only endings that share their API type with another carry a reason here (REVOKED or
    // BANNED, a transfer's or a session's ending); the others' reasons follow from their type, and
    // stay out of the bytes as before.
    int reason =
        switch (e.type()) {
          case REVOKED, BANNED, TRANSFERRED, SESSION_EXPIRED, SESSION_CLOSED ->
              reason(e.type()).getNumber();
          default -> 0;
        };
    int size =
        CodedOutputStream.computeEnumSize(StoredEvent.TYPE_FIELD_NUMBER, type)
            + CodedOutputStream.computeInt64Size(
                StoredEvent.TIME_MICROS_FIELD_NUMBER, e.timeMicros())
            + CodedOutputStream.computeStringSize(StoredEvent.NAME_FIELD_NUMBER, e.name())
            + CodedOutputStream.computeByteArraySize(StoredEvent.LEASE_FIELD_NUMBER, leaseBytes)
            + (reason != 0
                ? CodedOutputStream.computeEnumSize(StoredEvent.REASON_FIELD_NUMBER, reason)
                : 0)
            + (!e.message().isEmpty()
                ? CodedOutputStream.computeStringSize(StoredEvent.MESSAGE_FIELD_NUMBER, e.message())
                : 0)
            + (e.previous() != null
                ? CodedOutputStream.computeMessageSize(
                    StoredEvent.PREVIOUS_ATTRIBUTES_FIELD_NUMBER, e.previous())
                : 0);
    byte[] out = new byte[size];
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    try {
      o.writeEnum(StoredEvent.TYPE_FIELD_NUMBER, type);
      o.writeInt64(StoredEvent.TIME_MICROS_FIELD_NUMBER, e.timeMicros());
      o.writeString(StoredEvent.NAME_FIELD_NUMBER, e.name());
      // A length-delimited field: the same wire form as the embedded message.
      o.writeByteArray(StoredEvent.LEASE_FIELD_NUMBER, leaseBytes);
      if (reason != 0) {
        o.writeEnum(StoredEvent.REASON_FIELD_NUMBER, reason);
      }
      if (!e.message().isEmpty()) {
        o.writeString(StoredEvent.MESSAGE_FIELD_NUMBER, e.message());
      }
      if (e.previous() != null) {
        o.writeMessage(StoredEvent.PREVIOUS_ATTRIBUTES_FIELD_NUMBER, e.previous());
      }
      o.checkNoSpaceLeft();
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
    return out;
  }

  /** The event stored under a key of {@code revision}. */
  static LeaseEvent decode(long revision, byte[] value) {
    StoredEvent s;
    try {
      s = StoredEvent.parseFrom(value);
    } catch (InvalidProtocolBufferException ex) {
      throw new StoreException("corrupt event in history at revision " + revision, ex);
    }
    return new LeaseEvent(
        type(s.getType(), s.getReason()),
        revision,
        s.getName(),
        s.getLease(),
        s.getTimeMicros(),
        s.getMessage(),
        s.hasPreviousAttributes() ? s.getPreviousAttributes() : null);
  }

  /**
   * History key: revision then sequence within the entry, big-endian, so keys sort in event order.
   */
  public static byte[] key(long revision, int sequence) {
    return ByteBuffer.allocate(12).putLong(revision).putInt(sequence).array();
  }

  public static long revisionOf(byte[] key) {
    return ByteBuffer.wrap(key).getLong();
  }
}
