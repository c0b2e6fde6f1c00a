package io.leasehold.benchmarks.watch;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.leasehold.proto.v1.WatchRequest;

/**
 * A benchmark's Watch stream that it can end itself, and that tells such an end from a failure:
 * only an end the benchmark did not ask for is recorded in {@link #error}.
 */
abstract class EndableWatch<R> implements ClientResponseObserver<WatchRequest, R> {
  private volatile ClientCallStreamObserver<WatchRequest> call;
  private volatile boolean cancelling;

  /**
   * Why the stream ended without the benchmark asking; null while it runs or after {@link #cancel}.
   */
  volatile String error;

  @Override
  public final void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
    this.call = requestStream;
  }

  @Override
  public final void onError(Throwable t) {
    if (!cancelling) {
      failed(Status.fromThrowable(t));
    }
  }

  /** The stream failed, not by {@link #cancel}: sets {@link #error}. */
  abstract void failed(Status status);

  @Override
  public final void onCompleted() {
    error = "completed by the server";
  }

  /** Ends the stream; its end is then not an error. */
  final void cancel(String why) {
    cancelling = true;
    ClientCallStreamObserver<WatchRequest> c = call;
    if (c != null) {
      c.cancel(why, null);
    }
  }
}
