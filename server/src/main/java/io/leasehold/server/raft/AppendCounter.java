package io.leasehold.server.raft;

import java.util.concurrent.atomic.LongAdder;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;

/**
 * Counts the AppendEntries requests (heartbeats included) that reach this node's Raft server from a
 * leader, and their bytes as serialized: what replication costs the network, per follower. Summed
 * over a cluster's followers it is what the leader sent. An interceptor on Ratis's gRPC server,
 * like the fault hook's: Ratis's messages are read, never changed.
 */
final class AppendCounter {
  private static final String APPEND_METHOD_SUFFIX = "/appendEntries";

  private final LongAdder requests = new LongAdder();
  private final LongAdder bytes = new LongAdder();

  long requests() {
    return requests.sum();
  }

  long bytes() {
    return bytes.sum();
  }

  ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        ServerCall.Listener<Q> ratis = next.startCall(call, headers);
        if (!call.getMethodDescriptor().getFullMethodName().endsWith(APPEND_METHOD_SUFFIX)) {
          return ratis;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(ratis) {
          @Override
          public void onMessage(Q message) {
            if (message instanceof AppendEntriesRequestProto r) {
              requests.increment();
              bytes.add(r.getSerializedSize());
            }
            super.onMessage(message);
          }
        };
      }
    };
  }
}
