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
 * The API form of applied changes, their stored form in the history, and their keys. One
 * function ({@link #toApi}) for history and live delivery.
 */
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

  static LeaseEvent.Type type(Event.Type t) {
    return switch (t) {
      case ACQUIRED -> LeaseEvent.Type.ACQUIRED;
      case RENEWED -> LeaseEvent.Type.RENEWED;
      case UPDATED -> LeaseEvent.Type.UPDATED;
      case RELEASED -> LeaseEvent.Type.RELEASED;
      case EXPIRED -> LeaseEvent.Type.EXPIRED;
      default -> throw new StoreException("unknown event type in history: " + t, null);
    };
  }

  /** Whether the event is kept in the history. Renewals are not: a batch of them would flood it. */
  public static boolean kept(LeaseEvent e) {
    return e.type() != LeaseEvent.Type.RENEWED;
  }

  /**
   * The {@link StoredEvent} bytes of {@code e}, with {@code leaseBytes} (the serialised
   * {@code e.lease()}) copied in as they are: the apply loop has already serialised the record
   * for the lease write, and serialising it again was a third of the cost of an acquisition.
   */
  static byte[] encode(LeaseEvent e, byte[] leaseBytes) {
    int type = type(e.type()).getNumber();
    int size = CodedOutputStream.computeEnumSize(StoredEvent.TYPE_FIELD_NUMBER, type)
        + CodedOutputStream.computeInt64Size(StoredEvent.TIME_MICROS_FIELD_NUMBER, e.timeMicros())
        + CodedOutputStream.computeStringSize(StoredEvent.NAME_FIELD_NUMBER, e.name())
        + CodedOutputStream.computeByteArraySize(StoredEvent.LEASE_FIELD_NUMBER, leaseBytes);
    byte[] out = new byte[size];
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    try {
      o.writeEnum(StoredEvent.TYPE_FIELD_NUMBER, type);
      o.writeInt64(StoredEvent.TIME_MICROS_FIELD_NUMBER, e.timeMicros());
      o.writeString(StoredEvent.NAME_FIELD_NUMBER, e.name());
      // A length-delimited field: the same wire form as the embedded message.
      o.writeByteArray(StoredEvent.LEASE_FIELD_NUMBER, leaseBytes);
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
    return new LeaseEvent(type(s.getType()), revision, s.getName(), s.getLease(), s.getTimeMicros());
  }

  /** History key: revision then sequence within the entry, big-endian, so keys sort in event order. */
  public static byte[] key(long revision, int sequence) {
    return ByteBuffer.allocate(12).putLong(revision).putInt(sequence).array();
  }

  public static long revisionOf(byte[] key) {
    return ByteBuffer.wrap(key).getLong();
  }
}
