package io.leasehold.server.watch;

import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.WatchRequest;

/**
 * What serves the Watch call: a node's one hub, or the hubs of its groups ({@link GroupWatches}).
 */
public interface WatchService {
  /** Starts a watch; the request was validated by the API. */
  void watch(WatchRequest request, ServerCallStreamObserver<WatchFrame> out);
}
