package io.leasehold.server.watch;

import io.grpc.stub.ServerCallStreamObserver;

/**
 * A Watch stream for tests that drive a {@link Watcher} without gRPC: it records what it is sent
 * (the subclass's {@code onNext} and {@code onError}) and is ready when the subclass says so; the
 * rest of a server call's controls do nothing.
 */
abstract class TestStream extends ServerCallStreamObserver<WatchFrame> {
  @Override
  public void onCompleted() {
  }

  @Override
  public boolean isCancelled() {
    return false;
  }

  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
  }

  @Override
  public void setCompression(String compression) {
  }

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {
  }

  @Override
  public void disableAutoInboundFlowControl() {
  }

  @Override
  public void request(int count) {
  }

  @Override
  public void setMessageCompression(boolean enable) {
  }
}
