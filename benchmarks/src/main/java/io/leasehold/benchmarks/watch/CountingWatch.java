package io.leasehold.benchmarks.watch;

import com.google.protobuf.CodedInputStream;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.WatchRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Leases.Watch with a response marshaller that does not build messages: it walks the wire format of
 * a {@code WatchResponse} and keeps only what a counting watcher needs (how many ACQUIRED events,
 * how many others, the first and last event revision, the response revision). With a thousand
 * watchers in the benchmark's own JVM this keeps the client's share of the two cores small; the
 * server still sends, and the client still receives and reads, every byte.
 */
final class CountingWatch {
  /** What one WatchResponse carried. */
  record Counted(
      int acquired,
      int other,
      long firstRevision,
      long lastRevision,
      boolean inOrder,
      long revision,
      int bytes) {
    int events() {
      return acquired + other;
    }
  }

  private static final int RESPONSE_EVENTS = (1 << 3) | 2; // repeated Event events = 1
  private static final int RESPONSE_REVISION = (2 << 3); // int64 revision = 2
  private static final int EVENT_TYPE = (1 << 3); // Type type = 1
  private static final int EVENT_REVISION = (2 << 3); // int64 revision = 2

  static final MethodDescriptor.Marshaller<Counted> MARSHALLER =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Counted value) {
          throw new UnsupportedOperationException("the counting marshaller only reads");
        }

        @Override
        public Counted parse(InputStream stream) {
          try {
            // One copy into a reused array, then the array decoder: gRPC's stream decoder costs
            // several times as much per field, a fresh array per message was a quarter of a GB/s of
            // garbage, and this client shares the cores with the cluster it measures.
            int length =
                stream.available(); // gRPC's message streams know their length (inflated ones too)
            byte[] buffer = BUFFER.get();
            if (buffer.length < length) {
              buffer = new byte[Math.max(length, buffer.length * 2)];
              BUFFER.set(buffer);
            }
            int read = stream.readNBytes(buffer, 0, length);
            if (stream.read() != -1) {
              throw new IllegalStateException(
                  "a message stream held more than its announced " + length + " bytes");
            }
            return count(CodedInputStream.newInstance(buffer, 0, read), read);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static final ThreadLocal<byte[]> BUFFER =
      ThreadLocal.withInitial(() -> new byte[64 << 10]);

  static final MethodDescriptor<WatchRequest, Counted> METHOD =
      LeasesGrpc.getWatchMethod().toBuilder(
              LeasesGrpc.getWatchMethod().getRequestMarshaller(), MARSHALLER)
          .build();

  private CountingWatch() {}

  /**
   * Starts the watch; {@code wireBytes} counts its messages' bytes as received (compressed or not).
   */
  static void watch(
      Channel channel,
      WatchRequest request,
      StreamObserver<Counted> observer,
      LongAdder wireBytes) {
    ClientStreamTracer.Factory tracer =
        new ClientStreamTracer.Factory() {
          @Override
          public ClientStreamTracer newClientStreamTracer(
              ClientStreamTracer.StreamInfo info, Metadata headers) {
            return new ClientStreamTracer() {
              @Override
              public void inboundWireSize(long bytes) {
                wireBytes.add(bytes);
              }
            };
          }
        };
    ClientCalls.asyncServerStreamingCall(
        channel.newCall(METHOD, CallOptions.DEFAULT.withStreamTracerFactory(tracer)),
        request,
        observer);
  }

  static Counted count(CodedInputStream in, int bytes) throws IOException {
    int acquired = 0;
    int other = 0;
    long first = 0;
    long last = 0;
    long revision = 0;
    boolean inOrder = true;
    while (true) {
      int tag = in.readTag();
      if (tag == 0) {
        break;
      }
      if (tag == RESPONSE_EVENTS) {
        int length = in.readRawVarint32();
        int limit = in.pushLimit(length);
        int type = 0;
        long eventRevision = 0;
        // type (1) and revision (2) come first on the wire; skip the rest (name, lease, …) unread.
        while (!in.isAtEnd()) {
          int t = in.readTag();
          if (t == EVENT_TYPE) {
            type = in.readEnum();
          } else if (t == EVENT_REVISION) {
            eventRevision = in.readInt64();
          } else {
            in.skipRawBytes(in.getBytesUntilLimit());
            break;
          }
        }
        in.popLimit(limit);
        if (type == Event.Type.ACQUIRED_VALUE) {
          acquired++;
        } else {
          other++;
        }
        if (first == 0) {
          first = eventRevision;
        } else if (eventRevision < last) { // one entry's events share its revision
          inOrder = false;
        }
        last = eventRevision;
      } else if (tag == RESPONSE_REVISION) {
        revision = in.readInt64();
      } else if (!in.skipField(tag)) {
        break;
      }
    }
    return new Counted(acquired, other, first, last, inOrder, revision, bytes);
  }
}
