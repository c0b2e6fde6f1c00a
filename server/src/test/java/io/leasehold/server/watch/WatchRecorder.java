package io.leasehold.server.watch;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Records one Watch stream: its events, the highest revision it was told is complete, and how it
 * ended.
 */
final class WatchRecorder implements StreamObserver<WatchResponse> {
  private final List<Event> events = new ArrayList<>();
  private long revision = -1;
  private int responses;

  /** Events that arrived at or below a revision an earlier message had claimed complete. */
  private int afterTheirClaim;

  private Throwable error;
  private boolean completed;

  static WatchRecorder watch(TestCluster cluster, String nodeId, WatchRequest request) {
    return watch(cluster.channel(nodeId), request);
  }

  static WatchRecorder watch(io.grpc.Channel channel, WatchRequest request) {
    WatchRecorder r = new WatchRecorder();
    LeasesGrpc.newStub(channel).watch(request, r);
    return r;
  }

  @Override
  public synchronized void onNext(WatchResponse value) {
    for (Event e : value.getEventsList()) {
      if (e.getRevision() <= revision) {
        afterTheirClaim++;
      }
    }
    events.addAll(value.getEventsList());
    revision = Math.max(revision, value.getRevision());
    responses++;
  }

  @Override
  public synchronized void onError(Throwable t) {
    error = t;
  }

  @Override
  public synchronized void onCompleted() {
    completed = true;
  }

  synchronized List<Event> events() {
    return List.copyOf(events);
  }

  synchronized long revision() {
    return revision;
  }

  synchronized int afterTheirClaim() {
    return afterTheirClaim;
  }

  synchronized int responses() {
    return responses;
  }

  synchronized Status status() {
    return error == null ? null : Status.fromThrowable(error);
  }

  synchronized io.grpc.Metadata trailers() {
    return error instanceof StatusRuntimeException e ? e.getTrailers() : null;
  }

  /** Waits until the stream has reported everything up to {@code revision}. */
  void awaitRevision(long revision) {
    TestCluster.await(
        () ->
            "watch reached revision "
                + revision
                + " (at "
                + revision()
                + ", error "
                + status()
                + ")",
        Duration.ofSeconds(20),
        () -> {
          if (status() != null) {
            throw new AssertionError("watch failed: " + status());
          }
          return revision() >= revision;
        });
  }

  void awaitError() {
    TestCluster.await("the watch to fail", Duration.ofSeconds(20), () -> status() != null);
  }
}
