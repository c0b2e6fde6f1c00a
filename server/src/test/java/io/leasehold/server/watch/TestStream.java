package io.leasehold.server.watch;

import io.grpc.stub.ServerCallStreamObserver;

/**
 * A Watch stream for tests that drive a {@link Watcher} without gRPC: the subclass records what it
 * is sent ({@code onNext}); the stream is ready while {@link #ready} is set, keeps the error it
 * ends with, and the rest of a server call's controls do nothing.
 */
abstract class TestStream extends ServerCallStreamObserver<WatchFrame> {
  volatile boolean ready;
  volatile Throwable error;

  @Override
  public void onError(Throwable t) {
    error = t;
  }

  @Override
  public boolean isReady() {
    return ready;
  }

  @Override
  public void onCompleted() {}

  @Override
  public boolean isCancelled() {
    return false;
  }

  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {}

  @Override
  public void setCompression(String compression) {}

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {}

  @Override
  public void disableAutoInboundFlowControl() {}

  @Override
  public void request(int count) {}

  @Override
  public void setMessageCompression(boolean enable) {}
}
