package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegisterResponse;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Acquire or Register whose reply is lost is retried with the same request id, and the cluster
 * answers the retry with the first application's reply instead of applying it again.
 */
class RequestIdTest {
  @TempDir Path dir;
  TestCluster cluster;
  LeaseholdClient client;

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Records what Acquire and Register send and get; the first reply of each kind is lost on the way
   * back.
   */
  static final class LoseFirstReply implements ClientInterceptor {
    final List<Message> sent = new CopyOnWriteArrayList<>();
    final List<Message> received = new CopyOnWriteArrayList<>();
    final AtomicBoolean acquireLost = new AtomicBoolean();
    final AtomicBoolean registerLost = new AtomicBoolean();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      String name = method.getBareMethodName();
      AtomicBoolean lost =
          name.equals("Acquire") ? acquireLost : name.equals("Register") ? registerLost : null;
      if (lost == null) {
        return next.newCall(method, options);
      }
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void sendMessage(Q message) {
          sent.add((Message) message);
          super.sendMessage(message);
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                boolean drop;

                @Override
                public void onMessage(R message) {
                  received.add((Message) message);
                  drop = lost.compareAndSet(false, true);
                  if (!drop) {
                    super.onMessage(message);
                  }
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                  super.onClose(
                      drop ? Status.UNAVAILABLE.withDescription("reply lost by the test") : status,
                      trailers);
                }
              },
              headers);
        }
      };
    }
  }

  @Test
  void aRetryAfterALostReplyCarriesTheSameIdAndGetsTheFirstReply() throws Exception {
    cluster = TestCluster.start(3, dir);
    LoseFirstReply wire = new LoseFirstReply();
    client = Fixtures.client(cluster, b -> b.interceptor(wire));

    Lease lease = client.acquire("lock/a", Fixtures.ttl(30)).get();
    assertEquals(2, wire.sent.size(), "the lost reply made the SDK retry once");
    AcquireRequest first = (AcquireRequest) wire.sent.get(0);
    AcquireRequest retry = (AcquireRequest) wire.sent.get(1);
    assertFalse(first.getRequestId().isEmpty());
    assertEquals(first.getRequestId(), retry.getRequestId(), "a retry keeps its call's id");
    AcquireResponse applied = (AcquireResponse) wire.received.get(0);
    AcquireResponse answered = (AcquireResponse) wire.received.get(1);
    // Without the id the retry is the holder asking again: applied anew, at a later revision.
    assertEquals(applied, answered, "the retry was answered with the first application's reply");
    assertEquals(applied.getLease().getToken(), lease.token());
    assertTrue(lease.isValid());

    Registration r = client.register("svc", "i1", "10.0.0.1:80", Map.of()).get();
    RegisterRequest firstRegister = (RegisterRequest) wire.sent.get(2);
    assertEquals(firstRegister.getRequestId(), ((RegisterRequest) wire.sent.get(3)).getRequestId());
    assertNotEquals(first.getRequestId(), firstRegister.getRequestId(), "each call has its own id");
    assertEquals(((RegisterResponse) wire.received.get(2)).getInstance().getToken(), r.token());
    assertEquals(wire.received.get(2), wire.received.get(3));
  }
}
