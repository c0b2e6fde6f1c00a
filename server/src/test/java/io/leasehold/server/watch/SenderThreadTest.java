package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.netty.util.concurrent.FastThreadLocalThread;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.TestCluster;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.store.InMemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The hub's senders hand every message to gRPC on one of Netty's own threads, the only kind Netty's
 * pooled allocator gives a per-thread buffer cache by default: gRPC frames each message in a pooled
 * direct buffer taken on the sending thread, and without a cache every one of them came from the
 * shared arena under its locks (see WatchHub's sender threads).
 */
class SenderThreadTest {
  @Test
  void everyMessageIsHandedToGrpcOnANettyThread() throws Exception {
    LeaseCore core = new LeaseCore(new InMemoryStore());
    try (WatchHub hub = new WatchHub(() -> core, 1_000, Duration.ofMillis(100), 1_000_000, 2)) {
      List<Thread> senders = new CopyOnWriteArrayList<>();
      List<Long> revisions = new CopyOnWriteArrayList<>();
      Runnable[] onReady = new Runnable[1];
      TestStream out =
          new TestStream() {
            @Override
            public void onNext(WatchFrame frame) {
              senders.add(Thread.currentThread());
              frame.events().forEach(e -> revisions.add(e.revision()));
            }

            @Override
            public void setOnReadyHandler(Runnable handler) {
              onReady[0] = handler;
            }
          };
      hub.watch(WatchRequest.newBuilder().setPrefix("x/").build(), out);
      // As gRPC does: the stream is first ready once the service method has returned.
      out.ready = true;
      onReady[0].run();
      // Its first message says where it starts; events applied before that would count as seen.
      TestCluster.await("the watcher started", Duration.ofSeconds(10), () -> !senders.isEmpty());
      for (long index = 1; index <= 3; index++) {
        hub.onApplied(core.apply(1, index, TestCommands.acquire("x/" + index, index)));
      }
      TestCluster.await(
          "the watcher got the three events", Duration.ofSeconds(10), () -> revisions.size() == 3);
      assertEquals(List.of(1L, 2L, 3L), revisions);
      for (Thread t : senders) {
        assertTrue(
            t instanceof FastThreadLocalThread,
            "a message was handed to gRPC on " + t + ", not a Netty thread");
        assertTrue(t.getName().startsWith("leasehold-watch-"), t.getName());
      }
    }
  }
}
