package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.WatchResponse;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The fan-out benchmark's counting watchers read only each event's type and revision from the wire;
 * what they count must agree with protobuf's full parse, or "every watcher saw every acquisition"
 * would mean nothing.
 */
class CountingWatchTest {
  private static final Event.Type[] TYPES = {
    Event.Type.ACQUIRED,
    Event.Type.UPDATED,
    Event.Type.RELEASED,
    Event.Type.EXPIRED,
    Event.Type.REVOKED,
    Event.Type.RENEWED,
    Event.Type.TYPE_UNSPECIFIED
  };

  @Test
  void countsWhatProtobufParses() throws Exception {
    Random random = new Random(7);
    for (int round = 0; round < 2_000; round++) {
      WatchResponse response = randomResponse(random);
      byte[] wire = response.toByteArray();
      // Padded: only the first wire.length bytes belong to the message, as in the reused buffer.
      byte[] buffer = Arrays.copyOf(wire, wire.length + random.nextInt(64));
      Arrays.fill(buffer, wire.length, buffer.length, (byte) 0x0a);
      CountingWatch.Counted counted = count(buffer, wire.length);

      WatchResponse parsed = WatchResponse.parseFrom(wire);
      int acquired = 0;
      boolean inOrder = true;
      long last = 0;
      for (int i = 0; i < parsed.getEventsCount(); i++) {
        Event e = parsed.getEvents(i);
        if (e.getType() == Event.Type.ACQUIRED) {
          acquired++;
        }
        if (i > 0 && e.getRevision() < last) {
          inOrder = false;
        }
        last = e.getRevision();
      }
      String what = "round " + round + ": " + parsed;
      assertEquals(acquired, counted.acquired(), what);
      assertEquals(parsed.getEventsCount() - acquired, counted.other(), what);
      assertEquals(
          parsed.getEventsCount() == 0 ? 0 : parsed.getEvents(0).getRevision(),
          counted.firstRevision(),
          what);
      assertEquals(last, counted.lastRevision(), what);
      assertEquals(inOrder, counted.inOrder(), what);
      assertEquals(parsed.getRevision(), counted.revision(), what);
      assertEquals(wire.length, counted.bytes(), what);
    }
  }

  @Test
  void aMessageCutShortIsAnError() throws Exception {
    WatchResponse response =
        WatchResponse.newBuilder()
            .addEvents(
                Event.newBuilder().setType(Event.Type.ACQUIRED).setRevision(300).setName("a/b"))
            .setRevision(Long.MAX_VALUE)
            .build();
    byte[] wire = response.toByteArray();
    assertEquals(1, count(wire, wire.length).acquired());
    // Inside the event, then inside the final revision's varint.
    assertThrows(InvalidProtocolBufferException.class, () -> count(wire, 4));
    assertThrows(InvalidProtocolBufferException.class, () -> count(wire, wire.length - 1));
  }

  private static CountingWatch.Counted count(byte[] buffer, int length) throws java.io.IOException {
    return CountingWatch.count(CodedInputStream.newInstance(buffer, 0, length), length);
  }

  private static WatchResponse randomResponse(Random random) {
    WatchResponse.Builder b = WatchResponse.newBuilder();
    int events = random.nextInt(5) == 0 ? 0 : 1 + random.nextInt(300);
    long revision =
        random.nextInt(3) == 0 ? random.nextLong() & Long.MAX_VALUE : 1 + random.nextInt(1 << 20);
    for (int i = 0; i < events; i++) {
      if (random.nextInt(50) == 0) {
        revision -= random.nextInt(3); // out of order now and then, as a broken stream would be
      } else if (random.nextBoolean()) {
        revision += random.nextInt(1 << random.nextInt(20));
      }
      Event.Builder e =
          Event.newBuilder().setType(TYPES[random.nextInt(TYPES.length)]).setRevision(revision);
      if (random.nextBoolean()) {
        e.setName("service/" + random.nextInt(10_000));
        e.setLease(
            Lease.newBuilder()
                .setName(e.getName())
                .setHolder("h" + random.nextInt(100))
                .setToken(random.nextLong() & Long.MAX_VALUE));
      }
      if (random.nextInt(10) == 0) {
        e.setUnknownFields(unknown(random)); // protobuf writes unknown fields after the known ones
      }
      b.addEvents(e);
    }
    if (random.nextBoolean()) {
      b.setRevision(random.nextBoolean() ? revision : random.nextLong() & Long.MAX_VALUE);
    }
    if (random.nextInt(5) == 0) {
      b.setUnknownFields(unknown(random));
    }
    return b.build();
  }

  /**
   * Fields of every wire type a proto3 message can carry, some with tags of more than one byte;
   * numbers above every field Event and WatchResponse know (Event's go up to 9).
   */
  private static UnknownFieldSet unknown(Random random) {
    int number = random.nextBoolean() ? 10 + random.nextInt(6) : 16 + random.nextInt(100_000);
    UnknownFieldSet.Field.Builder f = UnknownFieldSet.Field.newBuilder();
    switch (random.nextInt(4)) {
      case 0 -> f.addVarint(random.nextLong());
      case 1 -> f.addFixed64(random.nextLong());
      case 2 -> f.addFixed32(random.nextInt());
      default -> f.addLengthDelimited(ByteString.copyFromUtf8("x".repeat(random.nextInt(300))));
    }
    return UnknownFieldSet.newBuilder().addField(number, f.build()).build();
  }
}
