package io.leasehold.server.watch;

import com.google.protobuf.CodedOutputStream;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.leasehold.proto.Lz4BlockCodec;
import io.leasehold.proto.ThreadScratch;
import io.leasehold.proto.v1.WatchResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code WatchResponse} as the server sends it: events already encoded (see {@link WireEvent}),
 * in the full or the basic view, and the response revision. Its marshaller writes exactly the bytes
 * protobuf would write for the same {@code WatchResponse}, so clients see the ordinary message.
 *
 * <p>A frame that several watchers send (see {@link Watcher}) is gathered into one array once, by
 * {@link #shared()}, and each stream then writes that array.
 */
public final class WatchFrame {
  private final List<WireEvent> events;
  private final long revision;
  private final boolean basic;

  /** Fields encoded after the revision (a merged watch's group and resume token); often empty. */
  private final byte[] suffix;

  /** The whole message, once {@link #shared()} was called (racing callers build the same bytes). */
  private volatile byte[] encoded;

  /**
   * The message in {@link Lz4BlockCodec}'s encoding, once a compressing stream sent it (likewise).
   */
  private volatile byte[] lz4;

  /** The message's size, once {@link #length()} was asked (racing callers count the same). */
  private int length = -1;

  public WatchFrame(List<WireEvent> events, long revision, boolean basic) {
    this(events, revision, basic, new byte[0]);
  }

  private WatchFrame(List<WireEvent> events, long revision, boolean basic, byte[] suffix) {
    this.events = events;
    this.revision = revision;
    this.basic = basic;
    this.suffix = suffix;
  }

  /**
   * This frame with more fields of the message after its own, already encoded ({@code
   * WatchResponse} fields other than events and revision): the same events, not encoded again.
   */
  WatchFrame withFields(byte[] encodedFields) {
    return new WatchFrame(events, revision, basic, encodedFields);
  }

  /** A frame of full events. */
  public WatchFrame(List<WireEvent> events, long revision) {
    this(events, revision, false);
  }

  public List<WireEvent> events() {
    return events;
  }

  public long revision() {
    return revision;
  }

  public boolean basic() {
    return basic;
  }

  /**
   * This frame, with its message bytes built once for every stream that sends it: each stream then
   * writes one array instead of gathering the events again.
   */
  WatchFrame shared() {
    if (encoded == null) {
      FrameStream stream = new FrameStream(this);
      byte[] b = new byte[stream.available()];
      stream.gather(b);
      encoded = b;
    }
    return this;
  }

  /** The size of the message (uncompressed), in bytes. */
  int length() {
    int n = length;
    if (n < 0) {
      byte[] e = encoded;
      if (e != null) {
        n = e.length;
      } else {
        n = revisionField().length + suffix.length;
        for (WireEvent event : events) {
          n += event.wire(basic).length;
        }
      }
      length = n;
    }
    return n;
  }

  /**
   * This frame's message in {@link Lz4BlockCodec}'s encoding, compressed once for every stream that
   * sends it compressed.
   */
  byte[] lz4() {
    byte[] compressed = lz4;
    if (compressed == null) {
      byte[] plain = encoded;
      if (plain != null) {
        compressed = Lz4BlockCodec.encode(plain, 0, plain.length);
      } else {
        FrameStream stream = new FrameStream(this);
        int n = stream.available();
        byte[] gathered = GATHER.get(n);
        stream.gather(gathered);
        compressed = Lz4BlockCodec.encode(gathered, 0, n);
      }
      lz4 = compressed;
    }
    return compressed;
  }

  /**
   * Server side: writes the frame; parse (for tests and in-process clients) goes through
   * WatchResponse.
   */
  public static final MethodDescriptor.Marshaller<WatchFrame> MARSHALLER =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(WatchFrame frame) {
          return new FrameStream(frame);
        }

        @Override
        public WatchFrame parse(InputStream stream) {
          try {
            return of(WatchResponse.parseFrom(stream));
          } catch (IOException e) {
            throw Status.INTERNAL
                .withDescription("not a WatchResponse")
                .withCause(e)
                .asRuntimeException();
          }
        }
      };

  /**
   * A message of {@code events}, claiming as fully sent its last event's revision, unless more
   * events of that revision follow in the next message. Then only the revision before: a client
   * that resumes from the claimed revision + 1 must still get the rest.
   */
  static WatchFrame of(List<WireEvent> events, boolean splitsARevision, boolean basic) {
    long last = events.get(events.size() - 1).revision();
    return new WatchFrame(events, splitsARevision ? last - 1 : last, basic);
  }

  static WatchFrame of(WatchResponse response) {
    List<WireEvent> events = new ArrayList<>(response.getEventsCount());
    response.getEventsList().forEach(e -> events.add(WireEvent.of(e)));
    byte[] fields =
        WatchResponse.newBuilder()
            .setResumeToken(response.getResumeToken())
            .setGroup(response.getGroup())
            .build()
            .toByteArray();
    return new WatchFrame(events, response.getRevision(), false, fields);
  }

  /** The message this frame encodes. */
  public WatchResponse toResponse() {
    WatchResponse.Builder b = WatchResponse.newBuilder().setRevision(revision);
    events.forEach(e -> b.addEvents(e.event(basic)));
    if (suffix.length > 0) {
      try {
        b.mergeFrom(suffix);
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        throw new IllegalStateException("a frame's own fields do not parse", e);
      }
    }
    return b.build();
  }

  private byte[] revisionField() {
    if (revision == 0) {
      return new byte[0]; // proto3 leaves a default scalar off the wire
    }
    byte[] b =
        new byte[CodedOutputStream.computeInt64Size(WatchResponse.REVISION_FIELD_NUMBER, revision)];
    CodedOutputStream out = CodedOutputStream.newInstance(b);
    try {
      out.writeInt64(WatchResponse.REVISION_FIELD_NUMBER, revision);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return b;
  }

  /**
   * Frames up to this size are gathered into one array per sending thread before gRPC gets them.
   */
  static final int GATHER_LIMIT = 256 << 10;

  private static final ThreadScratch GATHER = new ThreadScratch(16 << 10, GATHER_LIMIT);

  /**
   * gRPC asks a {@link KnownLength} stream for its size and has a {@link Drainable} one write
   * itself into the transport's buffer: nothing is encoded. The events' bytes are first gathered
   * into one array and handed over in one write: gRPC's Netty buffer checks its reference count and
   * bounds on every write, and with a thousand watchers (some 200 events per message, two million
   * event writes a second) those checks cost the senders more than the copying did.
   */
  private static final class FrameStream extends InputStream implements Drainable, KnownLength {
    private final WatchFrame frame;
    private final byte[] revisionField;
    private int remaining;
    private ByteArrayInputStream materialized;

    /** Whether anything was read byte-wise (the frame is then no longer written whole). */
    private boolean read;

    FrameStream(WatchFrame frame) {
      this.frame = frame;
      byte[] encoded = frame.encoded;
      if (encoded != null) {
        this.revisionField = null;
        this.materialized = new ByteArrayInputStream(encoded);
        this.remaining = encoded.length;
        return;
      }
      this.revisionField = frame.revisionField();
      this.remaining = frame.length();
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      if (target instanceof Lz4BlockCodec.Sink sink && !read) {
        // A stream that compresses (its client accepts lz4-block): the frame's compressed bytes,
        // built once however many streams send them.
        int n = available();
        sink.writeEncoded(frame.lz4());
        remaining = 0;
        materialized = null;
        return n;
      }
      if (materialized != null) {
        // A shared frame's bytes, or what byte-wise reads left of a copied one.
        int n = materialized.available();
        materialized.transferTo(target);
        remaining = 0;
        return n;
      }
      int n = remaining;
      if (n > GATHER_LIMIT || frame.events.size() < 2) {
        for (WireEvent e : frame.events) {
          target.write(e.wire(frame.basic));
        }
        target.write(revisionField);
        target.write(frame.suffix);
      } else {
        byte[] gathered = GATHER.get(n);
        gather(gathered);
        target.write(gathered, 0, n);
      }
      remaining = 0;
      return n;
    }

    /** Copies the whole message into the start of {@code into}. */
    void gather(byte[] into) {
      int at = 0;
      for (WireEvent e : frame.events) {
        byte[] wire = e.wire(frame.basic);
        System.arraycopy(wire, 0, into, at, wire.length);
        at += wire.length;
      }
      System.arraycopy(revisionField, 0, into, at, revisionField.length);
      at += revisionField.length;
      System.arraycopy(frame.suffix, 0, into, at, frame.suffix.length);
    }

    @Override
    public int available() {
      return materialized != null ? materialized.available() : remaining;
    }

    /** Byte-wise reads (not used by gRPC's framer, which drains): copy the frame out once. */
    private ByteArrayInputStream materialized() throws IOException {
      if (materialized == null) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(remaining);
        drainTo(out);
        materialized = new ByteArrayInputStream(out.toByteArray());
      }
      return materialized;
    }

    @Override
    public int read() throws IOException {
      read = true;
      return materialized().read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      read = true;
      return materialized().read(b, off, len);
    }
  }
}
