package io.leasehold.server.watch;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.ResumeToken;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A watch whose prefix spans namespaces on a node with lease groups (docs/design/multi-raft.md,
 * "Watches, lists and revisions"): one watcher in each group's hub, their messages interleaved on
 * one stream as they come. Each message is one group's, as its watcher built it, with the group and
 * a resume token added: every group's revision up to which all its events were sent. A client that
 * resumes from the token misses nothing and gets nothing twice, in any group, on any node.
 *
 * <p>A namespace that moved between groups keeps its order too: a group that adopted it in a move
 * records the group it came from and the entry that froze it there, after which that group sent no
 * event of it. This node's replicas apply the two groups independently, so the new group's first
 * events of the namespace can come before the old group's last ones; a message of the new group
 * with such events waits, with every later one of that group, until this stream has passed the
 * freeze in the old group (its events, or its progress, which comes within a second when idle).
 *
 * <p>Ends as soon as any group's watcher ends (cut off for lagging, a compacted start, the node
 * stopping), with the token in the trailers.
 */
final class MergedWatch {
  private final ServerCallStreamObserver<WatchFrame> out;

  /** Guarded by this: each group's revision up to which every event was sent. */
  private final Map<Integer, Long> through = new TreeMap<>();

  private final List<WatchHub.WatchStream> parts = new ArrayList<>();

  /** Each group's watcher, to wake it once its held messages are sent. */
  private final Map<Integer, WatchHub.WatchStream> partOf =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Each group's hub, whose state says which namespaces it adopted in moves. */
  private final Map<Integer, WatchHub> hubs;

  /** Guarded by this: each group's messages held back, in order, until a move's source passed. */
  private final Map<Integer, java.util.ArrayDeque<WatchFrame>> held = new TreeMap<>();

  private volatile boolean ended;

  private MergedWatch(ServerCallStreamObserver<WatchFrame> out, Map<Integer, WatchHub> hubs) {
    this.out = out;
    this.hubs = Map.copyOf(hubs);
  }

  /**
   * Starts a watcher in each hub, group {@code g} from revision {@code from.get(g)}, and wires the
   * stream's handlers to them all; called during the service method.
   */
  static MergedWatch start(
      WatchRequest request,
      Map<Integer, WatchHub> hubs,
      Map<Integer, Long> from,
      ServerCallStreamObserver<WatchFrame> out) {
    MergedWatch merged = new MergedWatch(out, hubs);
    from.forEach((g, start) -> merged.through.put(g, start - 1));
    List<WatchHub.WatchStream> started = new ArrayList<>();
    for (Map.Entry<Integer, WatchHub> e : hubs.entrySet()) {
      WatchRequest part =
          request.toBuilder().clearResumeToken().setStartRevision(from.get(e.getKey())).build();
      WatchHub.WatchStream stream = e.getValue().start(part, merged.new Part(e.getKey()));
      merged.partOf.put(e.getKey(), stream);
      started.add(stream);
    }
    synchronized (merged) {
      merged.parts.addAll(started);
    }
    out.setOnCancelHandler(merged::cancelled);
    out.setOnReadyHandler(() -> started.forEach(WatchHub.WatchStream::ready));
    return merged;
  }

  /** How many messages wait for a move's source to pass its freeze; for tests. */
  synchronized int held() {
    return held.values().stream().mapToInt(java.util.ArrayDeque::size).sum();
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

  private void send(int group, WatchFrame frame) {
    List<WatchHub.WatchStream> wake = new ArrayList<>();
    synchronized (this) {
      if (ended) {
        return;
      }
      java.util.ArrayDeque<WatchFrame> mine = held.get(group);
      if ((mine != null && !mine.isEmpty()) || waitsForSource(group, frame)) {
        held.computeIfAbsent(group, g -> new java.util.ArrayDeque<>()).add(frame);
        return;
      }
      emit(group, frame);
      // What this group's progress lets go of the other groups' held messages.
      boolean sent = true;
      while (sent) {
        sent = false;
        for (Map.Entry<Integer, java.util.ArrayDeque<WatchFrame>> e : held.entrySet()) {
          java.util.ArrayDeque<WatchFrame> q = e.getValue();
          while (!q.isEmpty() && !waitsForSource(e.getKey(), q.peek())) {
            emit(e.getKey(), q.poll());
            sent = true;
            if (q.isEmpty()) {
              Optional.ofNullable(partOf.get(e.getKey())).ifPresent(wake::add);
            }
          }
        }
      }
    }
    wake.forEach(WatchHub.WatchStream::ready);
  }

  /**
   * Whether {@code frame} of {@code group} carries an event of a namespace the group adopted in a
   * move, from its adoption on, while this stream has not yet passed the freeze in its old group.
   */
  private boolean waitsForSource(int group, WatchFrame frame) {
    WatchHub hub = hubs.get(group);
    if (hub == null || frame.events().isEmpty()) {
      return false;
    }
    for (WireEvent e : frame.events()) {
      String name = e.name();
      int slash = name.indexOf('/');
      if (slash <= 0) {
        continue;
      }
      // The adoption this message's events follow, even if the namespace has moved on since.
      Optional<PlacementResponse> p = hub.arrivalBefore(name.substring(0, slash), frame.revision());
      if (p.isEmpty() || p.get().getMovedFrom() == group) {
        continue;
      }
      Long sourceThrough = through.get(p.get().getMovedFrom());
      if (sourceThrough != null && sourceThrough < p.get().getFrozenAt()) {
        return true;
      }
    }
    return false;
  }

  /**
   * For a watch of some groups only: the groups outside it that {@code frame}'s events of moved
   * namespaces came from, each with the freeze there that a client merging streams waits for.
   */
  private Map<Integer, Long> outsideSources(int group, WatchFrame frame) {
    WatchHub hub = hubs.get(group);
    Map<Integer, Long> after = new TreeMap<>();
    if (hub == null || frame.events().isEmpty()) {
      return after;
    }
    for (WireEvent e : frame.events()) {
      int slash = e.name().indexOf('/');
      if (slash <= 0) {
        continue;
      }
      Optional<PlacementResponse> p =
          hub.arrivalBefore(e.name().substring(0, slash), frame.revision());
      if (p.isPresent()
          && p.get().getMovedFrom() != group
          && !hubs.containsKey(p.get().getMovedFrom())) {
        after.merge(p.get().getMovedFrom(), p.get().getFrozenAt(), Math::max);
      }
    }
    return after;
  }

  /** Sends a group's message with the stream's resume token; under this. */
  private void emit(int group, WatchFrame frame) {
    through.merge(group, frame.revision(), Math::max);
    byte[] fields =
        WatchResponse.newBuilder()
            .setResumeToken(com.google.protobuf.ByteString.copyFrom(token(through)))
            .setGroup(group)
            .putAllAfter(outsideSources(group, frame))
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
        java.util.ArrayDeque<WatchFrame> mine = held.get(group);
        // A group with held messages waits: its watcher builds no more until they are sent.
        return !ended && out.isReady() && (mine == null || mine.isEmpty());
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
