package io.leasehold.server.watch;

import com.google.protobuf.CodedOutputStream;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.WatchResponse;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * An event with its wire form as one element of {@code WatchResponse.events} (tag, length,
 * bytes). The hub encodes each live event once; every watcher that matches it sends these same
 * bytes, instead of serialising the event again per watcher (a third of the senders' time with
 * a thousand watchers). What filters look at is kept unpacked beside it: every watcher checks
 * every event.
 */
record WireEvent(Event event, byte[] wire, Event.Type type, String name, boolean hasAddress) {

  static WireEvent of(Event event) {
    int size = event.getSerializedSize();
    byte[] wire = new byte[CodedOutputStream.computeTagSize(WatchResponse.EVENTS_FIELD_NUMBER)
        + CodedOutputStream.computeUInt32SizeNoTag(size) + size];
    CodedOutputStream out = CodedOutputStream.newInstance(wire);
    try {
      out.writeMessage(WatchResponse.EVENTS_FIELD_NUMBER, event);
    } catch (IOException e) {
      throw new UncheckedIOException("encoding an event into an array of its own size", e);
    }
    out.checkNoSpaceLeft();
    return new WireEvent(event, wire, event.getType(), event.getName(), !event.getLease().getAttributes().getAddress().isEmpty());
  }

  long revision() {
    return event.getRevision();
  }
}
