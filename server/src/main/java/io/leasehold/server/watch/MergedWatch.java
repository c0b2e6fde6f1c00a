package io.leasehold.server.watch;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.ResumeToken;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A watch whose prefix spans namespaces on a node with lease groups (docs/design/multi-raft.md,
 * "Watches, lists and revisions"): one watcher in each group's hub, their messages interleaved on
 * one stream as they come. Each message is one group's, as its watcher built it, with the group and
 * a resume token added: every group's revision up to which all its events were sent. A client that
 * resumes from the token misses nothing and gets nothing twice, in any group, on any node.
 *
 * <p>Ends as soon as any group's watcher ends (cut off for lagging, a compacted start, the node
 * stopping), with the token in the trailers.
 */
final class MergedWatch {
  private final ServerCallStreamObserver<WatchFrame> out;

  /** Guarded by this: each group's revision up to which every event was sent. */
  private final Map<Integer, Long> through = new TreeMap<>();

  private final List<WatchHub.WatchStream> parts = new ArrayList<>();
  private volatile boolean ended;

  private MergedWatch(ServerCallStreamObserver<WatchFrame> out) {
    this.out = out;
  }

  /**
   * Starts a watcher in each hub, group {@code g} from revision {@code from.get(g)}, and wires the
   * stream's handlers to them all; called during the service method.
   */
  static void start(
      WatchRequest request,
      Map<Integer, WatchHub> hubs,
      Map<Integer, Long> from,
      ServerCallStreamObserver<WatchFrame> out) {
    MergedWatch merged = new MergedWatch(out);
    from.forEach((g, start) -> merged.through.put(g, start - 1));
    List<WatchHub.WatchStream> started = new ArrayList<>();
    for (Map.Entry<Integer, WatchHub> e : hubs.entrySet()) {
      WatchRequest part =
          request.toBuilder().clearResumeToken().setStartRevision(from.get(e.getKey())).build();
      started.add(e.getValue().start(part, merged.new Part(e.getKey())));
    }
    synchronized (merged) {
      merged.parts.addAll(started);
    }
    out.setOnCancelHandler(merged::cancelled);
    out.setOnReadyHandler(() -> started.forEach(WatchHub.WatchStream::ready));
  }

  /** The groups' revisions a token holds, each the last one delivered. */
  static Map<Integer, Long> parse(com.google.protobuf.ByteString token)
      throws com.google.protobuf.InvalidProtocolBufferException {
    return new TreeMap<>(ResumeToken.parseFrom(token).getThroughMap());
  }

  static byte[] token(Map<Integer, Long> through) {
    return ResumeToken.newBuilder().putAllThrough(through).build().toByteArray();
  }

  private void cancelled() {
    ended = true;
    List<WatchHub.WatchStream> all;
    synchronized (this) {
      all = List.copyOf(parts);
    }
    all.forEach(WatchHub.WatchStream::cancelled);
  }

  private synchronized void send(int group, WatchFrame frame) {
    if (ended) {
      return;
    }
    through.merge(group, frame.revision(), Math::max);
    byte[] fields =
        WatchResponse.newBuilder()
            .setResumeToken(com.google.protobuf.ByteString.copyFrom(token(through)))
            .setGroup(group)
            .build()
            .toByteArray();
    WatchFrame framed = frame.withFields(fields);
    out.setMessageCompression(framed.length() >= Watcher.COMPRESS_FROM_BYTES);
    out.onNext(framed);
  }

  /** A group's watcher ended: so does the stream, with where to resume. */
  private void partEnded(Throwable t) {
    List<WatchHub.WatchStream> all;
    byte[] token;
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      all = List.copyOf(parts);
      token = token(through);
    }
    Status status = Status.fromThrowable(t);
    Metadata trailers = Status.trailersFromThrowable(t);
    Metadata sent = new Metadata();
    String compact = trailers == null ? null : trailers.get(WatchTrailers.COMPACT_REVISION);
    if (compact != null) {
      sent.put(WatchTrailers.COMPACT_REVISION, compact);
    }
    sent.put(WatchTrailers.RESUME_TOKEN, token);
    // Every other group's watcher stops; its messages are no longer sent.
    all.forEach(WatchHub.WatchStream::cancelled);
    try {
      out.onError(status.asRuntimeException(sent));
    } catch (RuntimeException alreadyGone) {
      // The client went away first.
    }
  }

  /** One group's watcher's view of the stream. */
  private final class Part extends ServerCallStreamObserver<WatchFrame> {
    private final int group;

    Part(int group) {
      this.group = group;
    }

    @Override
    public void onNext(WatchFrame frame) {
      send(group, frame);
    }

    @Override
    public void onError(Throwable t) {
      partEnded(t);
    }

    @Override
    public void onCompleted() {
      partEnded(Status.INTERNAL.withDescription("a group's watch ended").asRuntimeException());
    }

    @Override
    public boolean isReady() {
      synchronized (MergedWatch.this) {
        return !ended && out.isReady();
      }
    }

    @Override
    public boolean isCancelled() {
      return ended;
    }

    @Override
    public void setMessageCompression(boolean enable) {
      // Decided per message by the merged stream.
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
      // The merged stream's handler tells every part.
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {
      // Likewise.
    }

    @Override
    public void setCompression(String compression) {}

    @Override
    public void request(int count) {}

    @Override
    public void disableAutoInboundFlowControl() {}
  }
}
