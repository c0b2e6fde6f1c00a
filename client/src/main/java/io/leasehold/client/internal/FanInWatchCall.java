package io.leasehold.client.internal;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ResumeToken;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * A watch across namespaces where no node is a member of every lease group: one stream per node
 * chosen, each following the groups it hosts ({@code WatchRequest.groups}), merged into what one
 * node's stream of every group would be (docs/design/multi-raft.md, "Watches, lists and
 * revisions"). Each message passed on is one group's, with a resume token of every group's position
 * as passed on, so the watch above resumes from it as from one node's.
 *
 * <p>A message naming moves ({@code after}: a namespace came to its group from a group another
 * stream follows) is held, and so is its stream, until the other stream has passed the move's
 * freeze: the moved names' events stay in order across the two groups.
 *
 * <p>Nothing is passed on until every stream has sent a message, so that a watch from now sees
 * every write after its first message, as on one node. Each stream has at most one message here at
 * a time: the next is asked of it once its message was passed on. The first stream to end ends the
 * call, with the token in the trailers.
 */
final class FanInWatchCall extends ClientCall<WatchRequest, WatchResponse> {
  static final Metadata.Key<byte[]> RESUME_TOKEN =
      Metadata.Key.of("leasehold-resume-token-bin", Metadata.BINARY_BYTE_MARSHALLER);

  /** A node to follow {@code groups} on, through {@code channel}. */
  record Target(Endpoint endpoint, Channel channel, List<Integer> groups) {}

  /** One node's stream of some of the groups. */
  private static final class Part {
    final Endpoint endpoint;
    final List<Integer> groups;
    final ClientCall<WatchRequest, WatchResponse> call;

    /** When it was asked for a message it has not sent yet; 0 while it has none to send. */
    volatile long askedNanos;

    Part(Target t) {
      this.endpoint = t.endpoint();
      this.groups = List.copyOf(t.groups());
      this.call = t.channel().newCall(LeasesGrpc.getWatchMethod(), CallOptions.DEFAULT);
    }
  }

  private record Received(Part part, WatchResponse message) {}

  private final List<Part> parts = new ArrayList<>();
  private final LongSupplier clock;
  private Listener<WatchResponse> listener;

  // Guarded by this.
  /** Each group's revision up to which every event was passed on; absent: not known yet. */
  private final Map<Integer, Long> through = new TreeMap<>();

  /** Messages ready to pass on, in the order they came. */
  private final ArrayDeque<Received> ready = new ArrayDeque<>();

  /** Messages that wait for another stream to pass a move's freeze, in the order they came. */
  private final List<Received> held = new ArrayList<>();

  /**
   * The streams that sent a message: nothing is passed on before each has, so that from the first
   * message on every group's stream is registered on its node, as one node's stream of every group
   * is before its first message (a watch from now sees every later write).
   */
  private final Set<Part> answered = new HashSet<>();

  private int demand;
  private boolean ended;
  private Endpoint endedAt;

  /** What to tell the listener, in order, outside this object's lock. */
  private final ArrayDeque<Runnable> outbox = new ArrayDeque<>();

  private boolean delivering;

  /**
   * @param plan each node and the groups its stream follows (the meta group, 0, among them)
   */
  FanInWatchCall(Map<Endpoint, List<Integer>> plan) {
    this(
        plan.entrySet().stream()
            .map(e -> new Target(e.getKey(), e.getKey().channel(), e.getValue()))
            .toList());
  }

  FanInWatchCall(List<Target> targets) {
    this(targets, System::nanoTime);
  }

  FanInWatchCall(List<Target> targets, LongSupplier clock) {
    this.clock = clock;
    targets.forEach(t -> parts.add(new Part(t)));
  }

  /**
   * How long the stream silent the longest has been asked for a message and sent none. A node sends
   * each stream its progress within a second when idle, so a long silence is a stream that died;
   * the other streams' messages do not show it, so the watch checks this as well.
   */
  long silentNanos() {
    long now = clock.getAsLong();
    long longest = 0;
    for (Part p : parts) {
      long asked = p.askedNanos;
      if (asked != 0) {
        longest = Math.max(longest, now - asked);
      }
    }
    return longest;
  }

  /** The node whose stream ended the call first; the first node before then. */
  synchronized Endpoint endpoint() {
    return endedAt != null ? endedAt : parts.get(0).endpoint;
  }

  @Override
  public void start(Listener<WatchResponse> responseListener, Metadata headers) {
    this.listener = responseListener;
    try {
      startParts(headers);
    } catch (RuntimeException notStarted) {
      cancel("the watch could not start", notStarted);
      throw notStarted;
    }
  }

  private void startParts(Metadata headers) {
    for (Part p : parts) {
      Metadata h = new Metadata();
      h.merge(headers);
      p.call.start(
          new Listener<>() {
            @Override
            public void onMessage(WatchResponse message) {
              received(p, message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              partEnded(p, status, trailers);
            }
          },
          h);
      p.askedNanos = clock.getAsLong();
      p.call.request(1);
    }
  }

  @Override
  public void request(int numMessages) {
    List<Part> ask;
    synchronized (this) {
      demand += numMessages;
      ask = pass();
    }
    ask(ask);
    flush();
  }

  @Override
  public void cancel(String message, Throwable cause) {
    for (Part p : parts) {
      try {
        p.call.cancel(message, cause);
      } catch (RuntimeException notStarted) {
        // A stream that never started has nothing to cancel.
      }
    }
  }

  @Override
  public void halfClose() {
    parts.forEach(p -> p.call.halfClose());
  }

  /**
   * Sends each stream the request for its groups: from the token's position of each (a group the
   * token lacks from its first revision), or from now.
   */
  @Override
  public void sendMessage(WatchRequest request) {
    Map<Integer, Long> token;
    try {
      token =
          request.getResumeToken().isEmpty()
              ? Map.of()
              : ResumeToken.parseFrom(request.getResumeToken()).getThroughMap();
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("resume_token is not a token of this cluster", e);
    }
    synchronized (this) {
      if (!request.getResumeToken().isEmpty()) {
        for (Part p : parts) {
          p.groups.forEach(g -> through.put(g, Math.max(0, token.getOrDefault(g, 0L))));
        }
      }
    }
    for (Part p : parts) {
      WatchRequest.Builder mine = request.toBuilder().clearGroups().addAllGroups(p.groups);
      if (!request.getResumeToken().isEmpty()) {
        Map<Integer, Long> own = new TreeMap<>();
        p.groups.forEach(g -> own.put(g, token.getOrDefault(g, 0L)));
        mine.setResumeToken(ResumeToken.newBuilder().putAllThrough(own).build().toByteString());
      }
      p.call.sendMessage(mine.build());
    }
  }

  private void received(Part part, WatchResponse message) {
    part.askedNanos = 0;
    List<Part> ask;
    synchronized (this) {
      if (ended) {
        return;
      }
      answered.add(part);
      learnPositions(part, message);
      Received r = new Received(part, message);
      if (waits(message)) {
        held.add(r);
      } else {
        ready.add(r);
      }
      ask = pass();
    }
    ask(ask);
    flush();
  }

  /**
   * A watch from now learns where each group's stream started from that stream's messages, so that
   * the first token passed on already holds every group (a token without a group resumes it from
   * its first revision). Each message's token holds every group of its stream: the others as they
   * stood before it (none of their messages is waiting here, one message a stream at a time), its
   * own group up to it, so before it, for a message with events, their first revision less one.
   * Under this.
   */
  private void learnPositions(Part part, WatchResponse message) {
    // Known already (from this stream's first message, or from the token resumed from): the
    // token of every later message is not parsed.
    if (message.getResumeToken().isEmpty() || through.keySet().containsAll(part.groups)) {
      return;
    }
    Map<Integer, Long> positions;
    try {
      positions = ResumeToken.parseFrom(message.getResumeToken()).getThroughMap();
    } catch (InvalidProtocolBufferException e) {
      return; // not a token: the group's position is learned as its messages are passed on
    }
    for (Map.Entry<Integer, Long> p : positions.entrySet()) {
      int g = p.getKey();
      if (!part.groups.contains(g) || through.containsKey(g)) {
        continue;
      }
      if (g != message.getGroup()) {
        through.put(g, p.getValue());
      } else if (message.getEventsCount() > 0) {
        through.put(g, message.getEvents(0).getRevision() - 1);
      } else {
        through.put(g, message.getRevision());
      }
    }
  }

  /**
   * Whether a message names a move whose old group's stream has not passed its freeze; under this.
   */
  private boolean waits(WatchResponse message) {
    for (Map.Entry<Integer, Long> after : message.getAfterMap().entrySet()) {
      boolean followed = parts.stream().anyMatch(p -> p.groups.contains(after.getKey()));
      Long passed = through.get(after.getKey());
      if (followed && (passed == null || passed < after.getValue())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Passes on what the listener asked for and is ready, releasing held messages as their moves' old
   * groups pass; under this. Returns the streams to ask for their next message.
   */
  private List<Part> pass() {
    List<Part> ask = new ArrayList<>();
    if (answered.size() < parts.size()) {
      return ask;
    }
    while (!ended && demand > 0 && !ready.isEmpty()) {
      Received r = ready.poll();
      demand--;
      int group = r.message().getGroup();
      through.merge(group, r.message().getRevision(), Math::max);
      WatchResponse out = r.message().toBuilder().clearAfter().setResumeToken(token()).build();
      outbox.add(() -> listener.onMessage(out));
      ask.add(r.part());
      for (int i = 0; i < held.size(); ) {
        if (waits(held.get(i).message())) {
          i++;
        } else {
          ready.add(held.remove(i));
        }
      }
    }
    return ask;
  }

  private ByteString token() {
    return ResumeToken.newBuilder().putAllThrough(through).build().toByteString();
  }

  private void ask(List<Part> ask) {
    for (Part p : ask) {
      p.askedNanos = clock.getAsLong();
      try {
        p.call.request(1);
      } catch (RuntimeException gone) {
        // The stream ended meanwhile; its end ends the call.
      }
    }
  }

  /** The first stream to end ends the call, with where to resume; the others are cancelled. */
  private void partEnded(Part part, Status status, Metadata trailers) {
    Metadata sent = new Metadata();
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      endedAt = part.endpoint;
      String compact = trailers == null ? null : trailers.get(Errors.COMPACT_REVISION);
      if (compact != null) {
        sent.put(Errors.COMPACT_REVISION, compact);
      }
      sent.put(RESUME_TOKEN, token().toByteArray());
      Status reported =
          status.isOk()
              ? Status.UNAVAILABLE.withDescription(
                  "the watch of groups " + part.groups + " on " + part.endpoint + " ended")
              : status;
      outbox.add(() -> listener.onClose(reported, sent));
    }
    for (Part p : parts) {
      if (p != part) {
        p.call.cancel("another group's stream of this watch ended", null);
      }
    }
    flush();
  }

  /** Tells the listener what is in the outbox, in order, one thread at a time. */
  private void flush() {
    while (true) {
      Runnable next;
      synchronized (this) {
        if (delivering || outbox.isEmpty()) {
          return;
        }
        delivering = true;
        next = outbox.poll();
      }
      try {
        next.run();
      } finally {
        synchronized (this) {
          delivering = false;
        }
      }
    }
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("FanInWatchCall[");
    for (Part p : parts) {
      b.append(p.endpoint).append('=').append(p.groups).append(' ');
    }
    return b.append(']').toString();
  }
}
