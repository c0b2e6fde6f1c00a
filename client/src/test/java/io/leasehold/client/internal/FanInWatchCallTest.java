package io.leasehold.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.ResumeToken;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The merge of one stream per node for a watch across namespaces where no node hosts every lease
 * group: each stream asked for its groups from its part of the token, messages passed on with the
 * token of every group, a moved namespace's events held until the old group's stream passed its
 * freeze, and the first stream's end ending the call.
 */
class FanInWatchCallTest {
  /** A stream the test answers for its node. */
  private static final class Fake extends ClientCall<WatchRequest, WatchResponse> {
    Listener<WatchResponse> listener;
    int requested;
    WatchRequest sent;
    String cancelled;

    @Override
    public void start(Listener<WatchResponse> l, Metadata headers) {
      listener = l;
    }

    @Override
    public void request(int n) {
      requested += n;
    }

    @Override
    public void cancel(String message, Throwable cause) {
      cancelled = message;
    }

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(WatchRequest message) {
      sent = message;
    }

    Channel channel() {
      Fake call = this;
      return new Channel() {
        @Override
        @SuppressWarnings("unchecked")
        public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> m, CallOptions o) {
          return (ClientCall<Q, R>) call;
        }

        @Override
        public String authority() {
          return "fake";
        }
      };
    }
  }

  /** What the merged call passed on, as a watch does: asking for one more after each message. */
  private static final class Outer extends ClientCall.Listener<WatchResponse> {
    final List<WatchResponse> messages = new ArrayList<>();
    FanInWatchCall call;
    Status closed;
    Metadata trailers;

    @Override
    public void onMessage(WatchResponse message) {
      messages.add(message);
      call.request(1);
    }

    @Override
    public void onClose(Status status, Metadata t) {
      closed = status;
      trailers = t;
    }

    List<String> sent() {
      return messages.stream().map(m -> m.getGroup() + "@" + m.getRevision()).toList();
    }
  }

  private final Fake metaAndOne = new Fake();
  private final Fake two = new Fake();
  private final Outer outer = new Outer();

  private final long[] now = {1_000};

  private FanInWatchCall start(WatchRequest request) {
    FanInWatchCall call =
        new FanInWatchCall(
            List.of(
                new FanInWatchCall.Target(null, metaAndOne.channel(), List.of(0, 1)),
                new FanInWatchCall.Target(null, two.channel(), List.of(2))),
            () -> now[0]);
    outer.call = call;
    call.start(outer, new Metadata());
    call.request(1);
    call.sendMessage(request);
    call.halfClose();
    return call;
  }

  private static ByteString token(Map<Integer, Long> through) {
    return ResumeToken.newBuilder().putAllThrough(through).build().toByteString();
  }

  private static Map<Integer, Long> through(WatchResponse m) throws Exception {
    return ResumeToken.parseFrom(m.getResumeToken()).getThroughMap();
  }

  private static WatchResponse message(int group, long revision, String... names) {
    WatchResponse.Builder b = WatchResponse.newBuilder().setGroup(group).setRevision(revision);
    for (String n : names) {
      b.addEvents(Event.newBuilder().setName(n).setRevision(revision));
    }
    return b.build();
  }

  @Test
  void eachStreamFollowsItsGroupsFromItsPartOfTheToken() throws Exception {
    start(
        WatchRequest.newBuilder()
            .setPrefix("")
            .setResumeToken(token(Map.of(0, 5L, 1, 7L, 2, 3L)))
            .build());
    assertEquals(List.of(0, 1), metaAndOne.sent.getGroupsList());
    assertEquals(
        Map.of(0, 5L, 1, 7L),
        ResumeToken.parseFrom(metaAndOne.sent.getResumeToken()).getThroughMap());
    assertEquals(List.of(2), two.sent.getGroupsList());
    assertEquals(Map.of(2, 3L), ResumeToken.parseFrom(two.sent.getResumeToken()).getThroughMap());
    assertEquals(1, metaAndOne.requested);
    assertEquals(1, two.requested);

    // Each message goes on with every group's position, and its stream is asked for the next.
    metaAndOne.listener.onMessage(message(0, 6, "a/x"));
    two.listener.onMessage(message(2, 4, "b/y"));
    assertEquals(List.of("0@6", "2@4"), outer.sent());
    assertEquals(Map.of(0, 6L, 1, 7L, 2, 3L), through(outer.messages.get(0)));
    assertEquals(Map.of(0, 6L, 1, 7L, 2, 4L), through(outer.messages.get(1)));
    assertEquals(2, metaAndOne.requested);
    assertEquals(2, two.requested);
  }

  @Test
  void nothingIsPassedOnUntilEveryStreamHasAnswered() {
    start(WatchRequest.newBuilder().setPrefix("").build());
    metaAndOne.listener.onMessage(message(0, 6));
    assertEquals(List.of(), outer.sent(), "group 2's stream may not be registered on its node yet");
    two.listener.onMessage(message(2, 4));
    assertEquals(List.of("0@6", "2@4"), outer.sent());
  }

  @Test
  void theFirstTokenOfAWatchFromNowHoldsEveryGroup() throws Exception {
    start(WatchRequest.newBuilder().setPrefix("").build());
    metaAndOne.listener.onMessage(
        message(0, 6).toBuilder().setResumeToken(token(Map.of(0, 6L, 1, 3L))).build());
    two.listener.onMessage(
        WatchResponse.newBuilder()
            .setGroup(2)
            .setRevision(9)
            .addEvents(Event.newBuilder().setName("b/y").setRevision(8))
            .addEvents(Event.newBuilder().setName("b/z").setRevision(9))
            .setResumeToken(token(Map.of(2, 9L)))
            .build());
    assertEquals(List.of("0@6", "2@9"), outer.sent());
    assertEquals(
        Map.of(0, 6L, 1, 3L, 2, 7L),
        through(outer.messages.get(0)),
        "group 2 from before its first message's events: a resume there misses none of them");
    assertEquals(Map.of(0, 6L, 1, 3L, 2, 9L), through(outer.messages.get(1)));
  }

  @Test
  void aStreamAskedForAMessageThatSendsNoneIsSilent() {
    FanInWatchCall call = start(WatchRequest.newBuilder().setPrefix("").build());
    now[0] = 6_000;
    assertEquals(5_000, call.silentNanos(), "both asked at 1,000");
    metaAndOne.listener.onMessage(message(0, 6));
    now[0] = 8_000;
    assertEquals(7_000, call.silentNanos(), "group 2's stream still owes its first message");
    two.listener.onMessage(message(2, 4));
    assertEquals(0, call.silentNanos(), "both passed on and asked again just now");
    now[0] = 9_500;
    assertEquals(1_500, call.silentNanos());
  }

  @Test
  void aMovedNamespacesEventsWaitUntilTheOldGroupsStreamPassedItsFreeze() throws Exception {
    start(
        WatchRequest.newBuilder()
            .setPrefix("")
            .setResumeToken(token(Map.of(0, 5L, 1, 7L, 2, 3L)))
            .build());

    // ns moved from group 2 (frozen at 6) to group 1, whose stream sends its release first.
    metaAndOne.listener.onMessage(message(1, 9, "ns/a").toBuilder().putAfter(2, 6).build());
    assertEquals(List.of(), outer.sent(), "held until group 2's stream passes 6");
    assertEquals(1, metaAndOne.requested, "its stream waits too");

    two.listener.onMessage(message(2, 5, "ns/a"));
    assertEquals(List.of("2@5"), outer.sent());
    two.listener.onMessage(message(2, 6));
    assertEquals(List.of("2@5", "2@6", "1@9"), outer.sent());
    WatchResponse released = outer.messages.get(2);
    assertEquals(Map.of(), released.getAfterMap(), "the merge's own field is not passed on");
    assertEquals(Map.of(0, 5L, 1, 9L, 2, 6L), through(released));
    assertEquals(2, metaAndOne.requested);
  }

  @Test
  void aWatchFromNowHoldsAMovedNamespaceUntilTheOldGroupsStreamSaysWhereItIs() {
    start(WatchRequest.newBuilder().setPrefix("").build());
    assertEquals(ByteString.EMPTY, two.sent.getResumeToken());

    metaAndOne.listener.onMessage(message(1, 9, "ns/a").toBuilder().putAfter(2, 6).build());
    assertEquals(List.of(), outer.sent(), "group 2's position is not known yet");
    two.listener.onMessage(message(2, 8));
    assertEquals(List.of("2@8", "1@9"), outer.sent());
  }

  @Test
  void theFirstStreamToEndEndsTheCallWithWhereToResume() throws Exception {
    start(
        WatchRequest.newBuilder()
            .setPrefix("")
            .setResumeToken(token(Map.of(0, 5L, 1, 7L, 2, 3L)))
            .build());
    metaAndOne.listener.onMessage(message(1, 8, "a/x"));
    two.listener.onMessage(message(2, 3));
    assertEquals(List.of("1@8", "2@3"), outer.sent());
    Metadata trailers = new Metadata();
    trailers.put(Errors.COMPACT_REVISION, "4");
    two.listener.onClose(Status.OUT_OF_RANGE.withDescription("compacted"), trailers);

    assertEquals(Status.Code.OUT_OF_RANGE, outer.closed.getCode());
    assertEquals("4", outer.trailers.get(Errors.COMPACT_REVISION));
    assertEquals(
        Map.of(0, 5L, 1, 8L, 2, 3L),
        ResumeToken.parseFrom(outer.trailers.get(FanInWatchCall.RESUME_TOKEN)).getThroughMap(),
        "the token of what was passed on");
    assertNotNull(metaAndOne.cancelled, "the other stream is cancelled");
    assertNull(two.cancelled);

    // Nothing is passed on after the end.
    metaAndOne.listener.onMessage(message(1, 9, "a/y"));
    assertEquals(List.of("1@8", "2@3"), outer.sent());

    // A stream that completes without an error is an end all the same.
    Outer again = new Outer();
    Fake meta = new Fake();
    Fake other = new Fake();
    FanInWatchCall call =
        new FanInWatchCall(
            List.of(
                new FanInWatchCall.Target(null, meta.channel(), List.of(0)),
                new FanInWatchCall.Target(null, other.channel(), List.of(2))));
    again.call = call;
    call.start(again, new Metadata());
    other.listener.onClose(Status.OK, new Metadata());
    assertEquals(Status.Code.UNAVAILABLE, again.closed.getCode());
  }
}
