package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.WatchResponse;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A frame must be exactly the WatchResponse a client expects, byte for byte. */
class WatchFrameTest {
  static Event event(long revision, String name, Event.Type type) {
    return Event.newBuilder()
        .setType(type)
        .setRevision(revision)
        .setName(name)
        .setLease(
            Lease.newBuilder()
                .setName(name)
                .setHolder("runner-" + revision)
                .setToken(revision * 7)
                .setAttributes(
                    Attributes.newBuilder()
                        .setAddress("10.0.0.1:80")
                        .putMetadata("zone", "é-ü")
                        .build()))
        .build();
  }

  static byte[] drained(WatchFrame frame) throws Exception {
    InputStream in = WatchFrame.MARSHALLER.stream(frame);
    int known = ((KnownLength) in).available();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int n = ((Drainable) in).drainTo(out);
    assertEquals(known, n, "drainTo returns the length it announced");
    assertEquals(known, out.size());
    return out.toByteArray();
  }

  @Test
  void framesEncodeExactlyAsProtobufWould() throws Exception {
    List<Event> events =
        List.of(
            event(41, "svc/a", Event.Type.ACQUIRED),
            event(41, "svc/b", Event.Type.RELEASED),
            event(300_000_000_000L, "svc/c", Event.Type.EXPIRED));
    for (long revision : new long[] {0, 1, 41, 300_000_000_000L}) {
      for (int n = 0; n <= events.size(); n++) {
        WatchResponse expected =
            WatchResponse.newBuilder()
                .addAllEvents(events.subList(0, n))
                .setRevision(revision)
                .build();
        WatchFrame frame =
            new WatchFrame(events.subList(0, n).stream().map(WireEvent::of).toList(), revision);
        assertArrayEquals(
            expected.toByteArray(), drained(frame), "revision " + revision + ", " + n + " events");
        assertEquals(expected, frame.toResponse());
        assertEquals(
            expected,
            WatchResponse.parseFrom(WatchFrame.MARSHALLER.stream(frame).readAllBytes()),
            "byte-wise reads give the same message");
        assertEquals(
            expected,
            WatchFrame.MARSHALLER
                .parse(new java.io.ByteArrayInputStream(expected.toByteArray()))
                .toResponse());
      }
    }
  }

  /**
   * A merged watch's frame: the group's frame with its group and resume token after it, exactly as
   * protobuf would encode the whole message, drained, gathered, shared or read byte-wise.
   */
  @Test
  void aFrameWithAGroupAndTokenEncodesExactlyAsProtobufWould() throws Exception {
    List<Event> events =
        List.of(event(41, "svc/a", Event.Type.ACQUIRED), event(42, "svc/b", Event.Type.RELEASED));
    byte[] fields =
        WatchResponse.newBuilder()
            .setGroup(2)
            .setResumeToken(com.google.protobuf.ByteString.copyFromUtf8("token"))
            .build()
            .toByteArray();
    for (int n = 0; n <= events.size(); n++) {
      WatchResponse expected =
          WatchResponse.newBuilder()
              .addAllEvents(events.subList(0, n))
              .setRevision(42)
              .setGroup(2)
              .setResumeToken(com.google.protobuf.ByteString.copyFromUtf8("token"))
              .build();
      WatchFrame frame =
          new WatchFrame(events.subList(0, n).stream().map(WireEvent::of).toList(), 42)
              .withFields(fields);
      assertArrayEquals(expected.toByteArray(), drained(frame), n + " events");
      assertEquals(expected, frame.toResponse());
      assertEquals(
          expected, WatchResponse.parseFrom(WatchFrame.MARSHALLER.stream(frame).readAllBytes()));
      assertArrayEquals(expected.toByteArray(), drained(frame.shared()), "shared, " + n);
      assertEquals(
          expected,
          WatchFrame.MARSHALLER
              .parse(new java.io.ByteArrayInputStream(expected.toByteArray()))
              .toResponse(),
          "parsed back with its group and token");
    }
  }

  /**
   * Frames are gathered into one reused array per thread up to {@link WatchFrame#GATHER_LIMIT}: one
   * that outgrows the array, one beyond the limit (written event by event), and a small one after
   * them (the array still holds the bytes of the larger ones) are each exactly right.
   */
  @Test
  void framesOfEverySizeEncodeExactlyOneAfterAnother() throws Exception {
    String padding = "x".repeat(400);
    int[] counts = {2, 400, 1000, 2, 3};
    boolean[] padded = {false, false, true, false, true};
    for (int k = 0; k < counts.length; k++) {
      List<Event> events = new java.util.ArrayList<>();
      for (int i = 0; i < counts[k]; i++) {
        Event e = event(1000L * k + i, "svc/" + k + "/" + i, Event.Type.ACQUIRED);
        events.add(padded[k] ? e.toBuilder().setMessage(padding).build() : e);
      }
      WatchResponse expected =
          WatchResponse.newBuilder()
              .addAllEvents(events)
              .setRevision(1000L * k + counts[k])
              .build();
      WatchFrame frame =
          new WatchFrame(events.stream().map(WireEvent::of).toList(), expected.getRevision());
      if (counts[k] == 1000) {
        org.junit.jupiter.api.Assertions.assertTrue(
            expected.getSerializedSize() > WatchFrame.GATHER_LIMIT,
            "this frame is meant to pass the limit");
      }
      assertArrayEquals(
          expected.toByteArray(), drained(frame), "frame " + k + ": " + counts[k] + " events");
    }
  }

  /**
   * The basic view: exactly the bytes of the trimmed events, whichever view was asked for first.
   */
  @Test
  void basicFramesEncodeExactlyAsProtobufWouldForTheTrimmedEvents() throws Exception {
    com.google.protobuf.Timestamp t =
        com.google.protobuf.Timestamp.newBuilder()
            .setSeconds(1_790_000_000L)
            .setNanos(123_456_789)
            .build();
    com.google.protobuf.Duration ttl =
        com.google.protobuf.Duration.newBuilder().setSeconds(30).build();
    List<Event> full = new java.util.ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Event e = event(900 + i, "svc/" + i, i % 3 == 0 ? Event.Type.RELEASED : Event.Type.ACQUIRED);
      Lease.Builder l =
          e.getLease().toBuilder()
              .setTtl(ttl)
              .setAcquiredAt(t)
              .setRenewedAt(t)
              .setExpiresAt(t)
              .setModRevision(900 + i)
              .setLastRenewRevision(900 + i)
              .setRenewCount(i)
              .setHeartbeatInterval(ttl);
      Event.Builder b = e.toBuilder().setLease(l).setTime(t);
      if (i % 3 == 0) {
        b.setReason(Event.Reason.REASON_RELEASED);
      }
      if (i == 7) {
        b.clearLease(); // e.g. POLICY_CHANGED has none
      }
      full.add(b.build());
    }
    List<Event> trimmed =
        full.stream()
            .map(
                e -> {
                  Event.Builder b =
                      Event.newBuilder()
                          .setType(e.getType())
                          .setRevision(e.getRevision())
                          .setName(e.getName())
                          .setReason(e.getReason());
                  if (e.hasLease()) {
                    b.setLease(
                        Lease.newBuilder()
                            .setHolder(e.getLease().getHolder())
                            .setToken(e.getLease().getToken())
                            .setAttributes(e.getLease().getAttributes()));
                  }
                  return b.build();
                })
            .toList();
    List<WireEvent> wire = full.stream().map(WireEvent::of).toList();
    for (int n : new int[] {1, 2, 300}) {
      WatchResponse expectedBasic =
          WatchResponse.newBuilder().addAllEvents(trimmed.subList(0, n)).setRevision(2000).build();
      WatchResponse expectedFull =
          WatchResponse.newBuilder().addAllEvents(full.subList(0, n)).setRevision(2000).build();
      WatchFrame basic = new WatchFrame(wire.subList(0, n), 2000, true);
      WatchFrame plain = new WatchFrame(wire.subList(0, n), 2000, false);
      assertArrayEquals(expectedBasic.toByteArray(), drained(basic), n + " basic events");
      assertArrayEquals(
          expectedFull.toByteArray(),
          drained(plain),
          n + " full events from the same shared events");
      assertEquals(expectedBasic, basic.toResponse());
      org.junit.jupiter.api.Assertions.assertTrue(
          expectedBasic.getSerializedSize() * 2 < expectedFull.getSerializedSize(),
          "basic "
              + expectedBasic.getSerializedSize()
              + " bytes against full "
              + expectedFull.getSerializedSize());
    }
  }

  /**
   * A frame several watchers send is gathered once ({@code shared()}); every stream of it, drained
   * or read byte by byte, gives exactly the message, in either view.
   */
  @Test
  void aSharedFrameGivesEveryStreamTheSameBytes() throws Exception {
    List<Event> events =
        List.of(
            event(41, "svc/a", Event.Type.ACQUIRED),
            event(42, "svc/b", Event.Type.RELEASED),
            event(43, "svc/c", Event.Type.EXPIRED));
    for (boolean basic : new boolean[] {false, true}) {
      List<Event> sent = basic ? events.stream().map(WireEvent::basic).toList() : events;
      byte[] expected =
          WatchResponse.newBuilder().addAllEvents(sent).setRevision(43).build().toByteArray();
      WatchFrame frame = new WatchFrame(events.stream().map(WireEvent::of).toList(), 43, basic);
      assertSame(frame, frame.shared());
      for (int stream = 0; stream < 3; stream++) {
        assertArrayEquals(expected, drained(frame), "stream " + stream + ", basic " + basic);
        assertArrayEquals(
            expected,
            WatchFrame.MARSHALLER.stream(frame).readAllBytes(),
            "byte-wise, basic " + basic);
      }
      assertReadThenDrainedGives(expected, frame);
    }
  }

  /** A stream of the frame read for one byte, then drained, gives exactly the message. */
  static void assertReadThenDrainedGives(byte[] whole, WatchFrame frame) throws Exception {
    InputStream in = WatchFrame.MARSHALLER.stream(frame);
    int first = in.read();
    ByteArrayOutputStream rest = new ByteArrayOutputStream();
    ((Drainable) in).drainTo(rest);
    assertEquals(whole[0] & 0xff, first);
    assertArrayEquals(java.util.Arrays.copyOfRange(whole, 1, whole.length), rest.toByteArray());
  }

  @Test
  void aStreamPartlyReadThenDrainedGivesTheRest() throws Exception {
    WatchFrame frame = new WatchFrame(List.of(WireEvent.of(event(5, "a", Event.Type.ACQUIRED))), 5);
    byte[] whole =
        WatchResponse.newBuilder()
            .addEvents(event(5, "a", Event.Type.ACQUIRED))
            .setRevision(5)
            .build()
            .toByteArray();
    assertReadThenDrainedGives(whole, frame);
  }
}
