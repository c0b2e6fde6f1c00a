package io.leasehold.server.api;

import io.grpc.Attributes;
import io.grpc.KnownLength;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * grpc-java answers a request body that is not valid protobuf with INTERNAL or UNKNOWN. It is the
 * caller's fault, so this wrapper receives the raw bytes, parses them itself and answers a
 * malformed body with INVALID_ARGUMENT naming the request.
 */
public final class StrictProtobuf {
  private StrictProtobuf() {}

  public static ServerServiceDefinition wrap(ServerServiceDefinition service) {
    ServiceDescriptor original = service.getServiceDescriptor();
    List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
    for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
      methods.add(strict(m));
    }
    ServiceDescriptor.Builder descriptor =
        ServiceDescriptor.newBuilder(original.getName())
            .setSchemaDescriptor(original.getSchemaDescriptor());
    methods.forEach(m -> descriptor.addMethod(m.getMethodDescriptor()));
    ServerServiceDefinition.Builder builder = ServerServiceDefinition.builder(descriptor.build());
    methods.forEach(builder::addMethod);
    return builder.build();
  }

  private static <Q, R> ServerMethodDefinition<byte[], R> strict(
      ServerMethodDefinition<Q, R> definition) {
    MethodDescriptor<Q, R> typed = definition.getMethodDescriptor();
    MethodDescriptor<byte[], R> raw = typed.toBuilder(BYTES, typed.getResponseMarshaller()).build();
    ServerCallHandler<Q, R> handler = definition.getServerCallHandler();
    ServerCallHandler<byte[], R> strictHandler =
        (call, headers) -> {
          ServerCall.Listener<Q> inner = handler.startCall(new TypedCall<>(call, typed), headers);
          return new ServerCall.Listener<>() {
            private boolean rejected;

            @Override
            public void onMessage(byte[] message) {
              Q request;
              try {
                request = typed.parseRequest(new KnownLengthBytes(message));
              } catch (StatusRuntimeException e) {
                rejected = true;
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                call.close(
                    Status.INVALID_ARGUMENT.withDescription(
                        "request: not a valid "
                            + typed.getBareMethodName()
                            + " request message ("
                            + cause.getMessage()
                            + ")"),
                    new Metadata());
                return;
              }
              inner.onMessage(request);
            }

            @Override
            public void onHalfClose() {
              if (!rejected) {
                inner.onHalfClose();
              }
            }

            @Override
            public void onCancel() {
              inner.onCancel();
            }

            @Override
            public void onComplete() {
              inner.onComplete();
            }

            @Override
            public void onReady() {
              inner.onReady();
            }
          };
        };
    return ServerMethodDefinition.create(raw, strictHandler);
  }

  /**
   * The raw call seen with the typed request: only the method descriptor's request type differs.
   */
  private static final class TypedCall<Q, R> extends ServerCall<Q, R> {
    private final ServerCall<byte[], R> call;
    private final MethodDescriptor<Q, R> method;

    TypedCall(ServerCall<byte[], R> call, MethodDescriptor<Q, R> method) {
      this.call = call;
      this.method = method;
    }

    @Override
    public void request(int numMessages) {
      call.request(numMessages);
    }

    @Override
    public void sendHeaders(Metadata headers) {
      call.sendHeaders(headers);
    }

    @Override
    public void sendMessage(R message) {
      call.sendMessage(message);
    }

    @Override
    public void close(Status status, Metadata trailers) {
      call.close(status, trailers);
    }

    @Override
    public boolean isCancelled() {
      return call.isCancelled();
    }

    @Override
    public boolean isReady() {
      return call.isReady();
    }

    @Override
    public void setMessageCompression(boolean enabled) {
      call.setMessageCompression(enabled);
    }

    @Override
    public void setCompression(String compressor) {
      call.setCompression(compressor);
    }

    @Override
    public Attributes getAttributes() {
      return call.getAttributes();
    }

    @Override
    public String getAuthority() {
      return call.getAuthority();
    }

    @Override
    public MethodDescriptor<Q, R> getMethodDescriptor() {
      return method;
    }
  }

  /**
   * The request's bytes, announced as of known length: grpc's protobuf marshaller then parses from
   * an array it reuses. Given a plain stream it would allocate a 4 KiB read buffer for every
   * request, as {@code readAllBytes} would an 8 KiB one: together half the garbage of taking a
   * request in.
   */
  private static final class KnownLengthBytes extends ByteArrayInputStream implements KnownLength {
    KnownLengthBytes(byte[] bytes) {
      super(bytes);
    }
  }

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new KnownLengthBytes(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return readMessage(stream);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  /**
   * A message's bytes. grpc hands over each message as a stream of known length: that is read into
   * an array of exactly that length, and only then is more looked for (there should be none).
   */
  static byte[] readMessage(InputStream stream) throws IOException {
    if (!(stream instanceof KnownLength)) {
      return stream.readAllBytes();
    }
    byte[] bytes = new byte[stream.available()];
    int read = stream.readNBytes(bytes, 0, bytes.length);
    int next = stream.read();
    if (read == bytes.length && next == -1) {
      return bytes;
    }
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    all.write(bytes, 0, read);
    if (next != -1) {
      all.write(next);
      stream.transferTo(all);
    }
    return all.toByteArray();
  }
}
