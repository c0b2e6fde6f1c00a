package io.leasehold.server.watch;

import com.google.protobuf.CodedOutputStream;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.WatchResponse;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * An event with its wire form as one element of {@code WatchResponse.events} (tag, length, bytes),
 * in the full and in the {@link io.leasehold.proto.v1.EventView#EVENT_VIEW_BASIC basic} view. Each
 * form is encoded once, by the first sender that needs it (not by the apply thread, and not at all
 * if no watcher asks for that view); every watcher that matches the event sends those same bytes,
 * instead of serialising the event again per watcher (a third of the senders' time with a thousand
 * watchers). What filters look at is kept unpacked beside it: every watcher checks every event.
 */
final class WireEvent {
  private final Event event;

  /** The full form's bytes once some sender needed them (racing senders encode the same bytes). */
  private volatile byte[] wire;

  private final Event.Type type;
  private final String name;
  private final boolean hasLease;
  private final Attributes attributes;

  /** An update's attributes before it; null for other types (and updates without them). */
  private final Attributes previous;

  /** The basic form's bytes once some sender needed them (racing senders encode the same bytes). */
  private volatile byte[] basicWire;

  private WireEvent(Event event) {
    this.event = event;
    this.type = event.getType();
    this.name = event.getName();
    this.hasLease = event.hasLease();
    this.attributes = event.getLease().getAttributes();
    this.previous = event.hasPreviousAttributes() ? event.getPreviousAttributes() : null;
  }

  static WireEvent of(Event event) {
    return new WireEvent(event);
  }

  /**
   * What a basic view keeps of an event: type, revision, name, reason, message, and of its lease
   * only the holder, token and attributes (what a routing cache needs); not the attributes before
   * an update.
   */
  static Event basic(Event e) {
    Event.Builder b =
        Event.newBuilder()
            .setType(e.getType())
            .setRevision(e.getRevision())
            .setName(e.getName())
            .setReason(e.getReason())
            .setMessage(e.getMessage())
            .setServiceVersion(e.getServiceVersion());
    if (e.hasLease()) {
      Lease l = e.getLease();
      Lease.Builder lb = Lease.newBuilder().setHolder(l.getHolder()).setToken(l.getToken());
      if (l.hasAttributes()) {
        lb.setAttributes(l.getAttributes());
      }
      b.setLease(lb);
    }
    return b.build();
  }

  private static byte[] encode(Event event) {
    int size = event.getSerializedSize();
    byte[] wire =
        new byte
            [CodedOutputStream.computeTagSize(WatchResponse.EVENTS_FIELD_NUMBER)
                + CodedOutputStream.computeUInt32SizeNoTag(size)
                + size];
    CodedOutputStream out = CodedOutputStream.newInstance(wire);
    try {
      out.writeMessage(WatchResponse.EVENTS_FIELD_NUMBER, event);
    } catch (IOException e) {
      throw new UncheckedIOException("encoding an event into an array of its own size", e);
    }
    out.checkNoSpaceLeft();
    return wire;
  }

  /** The event in the view asked for, as a client receives it. */
  Event event(boolean basic) {
    return basic ? basic(event) : event;
  }

  byte[] wire(boolean basic) {
    if (!basic) {
      byte[] w = wire;
      if (w == null) {
        wire = w = encode(event);
      }
      return w;
    }
    byte[] b = basicWire;
    if (b == null) {
      basicWire = b = encode(basic(event));
    }
    return b;
  }

  Event.Type type() {
    return type;
  }

  String name() {
    return name;
  }

  boolean hasLease() {
    return hasLease;
  }

  Attributes attributes() {
    return attributes;
  }

  Attributes previous() {
    return previous;
  }

  long revision() {
    return event.getRevision();
  }
}
