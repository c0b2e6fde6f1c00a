package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A call cancelled before it started (here by an interceptor) is an attempt that failed: retried,
 * never left hanging.
 */
class CallStartTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(1, dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @Test
  void aCallCancelledBeforeItStartedIsRetried() throws Exception {
    AtomicInteger acquires = new AtomicInteger();
    ClientInterceptor cancelFirstAcquire =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            ClientCall<Q, R> call = next.newCall(method, options);
            if (method.getBareMethodName().equals("Acquire") && acquires.getAndIncrement() == 0) {
              call.cancel("cancelled before it started", null);
            }
            return call;
          }
        };
    try (LeaseholdClient client =
        Fixtures.client(cluster, b -> b.interceptor(cancelFirstAcquire).holder("starter"))) {
      Lease lease = client.acquire("start/x", Fixtures.ttl(30)).get(20, TimeUnit.SECONDS);
      assertEquals("starter", lease.holder());
      assertTrue(acquires.get() >= 2, "the cancelled attempt was retried: " + acquires.get());
    }
  }
}
