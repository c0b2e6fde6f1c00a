package io.leasehold.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/2 keepalive on the client port: a client that stops answering (its machine died, or it
 * stopped reading) loses its connection after one unanswered PING, and its Watch streams leave the
 * hub. Without the keepalive they stay registered until TCP gives up, as long as no events push
 * them over the lag limit (the frozen watcher here gets none).
 */
class ClientKeepaliveTest {
  /**
   * The shortest server keepalive grpc-java allows: NettyServerBuilder raises anything below 10 s
   * to 10 s (KeepAliveManager.clampKeepAliveTimeInNanos, grpc 1.68). The timeout may be short.
   */
  private static final Duration INTERVAL = Duration.ofSeconds(10);

  private static final Duration TIMEOUT = Duration.ofMillis(200);

  @TempDir Path dir;
  TestCluster cluster;
  FreezableRelay relay;
  ManagedChannel relayed;

  @AfterEach
  void stop() throws Exception {
    if (relayed != null) {
      relayed.shutdownNow();
      relayed.awaitTermination(5, TimeUnit.SECONDS);
    }
    if (relay != null) {
      relay.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aWatchWhoseClientStopsAnsweringPingsLeavesTheHub() throws Exception {
    cluster =
        TestCluster.start(
            1, dir, b -> b.grpcKeepaliveInterval(INTERVAL).grpcKeepaliveTimeout(TIMEOUT));
    LeaseholdNode node = cluster.node("n1");
    relay = new FreezableRelay(node.config().self().clientPort());
    relayed = ManagedChannelBuilder.forAddress("127.0.0.1", relay.port()).usePlaintext().build();
    WatchRequest request = WatchRequest.newBuilder().setPrefix("keepalive/").build();

    Recorder healthy = new Recorder(); // on the cluster's own channel, straight to the node
    LeasesGrpc.newStub(cluster.channel("n1")).watch(request, healthy);
    Recorder frozen = new Recorder();
    LeasesGrpc.newStub(relayed).watch(request, frozen);
    TestCluster.await(
        () -> "both watchers registered (hub has " + node.watchHub().watchers() + ")",
        Duration.ofSeconds(10),
        () -> node.watchHub().watchers() == 2);

    relay.freeze();
    long frozenAt = System.nanoTime();
    // Ten seconds of silence, then a PING that gets no ACK within TIMEOUT: the node closes the
    // connection, which cancels the frozen watch.
    TestCluster.await(
        () ->
            "the frozen client's watcher to leave the hub (hub has "
                + node.watchHub().watchers()
                + ")",
        INTERVAL.plus(Duration.ofSeconds(8)),
        () -> node.watchHub().watchers() == 1);
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt);

    // The one left is the healthy client's: it answered its PINGs, is still open and gets events.
    assertNull(healthy.error(), "the healthy watch is still open");
    assertEquals(
        Outcome.GRANTED,
        cluster
            .leases("n1")
            .acquire(Requests.acquire("keepalive/job", "runner-1", 30))
            .getOutcome());
    TestCluster.await(
        () -> "the healthy watch to see keepalive/job (error " + healthy.error() + ")",
        Duration.ofSeconds(10),
        () -> healthy.events().stream().anyMatch(e -> e.getName().equals("keepalive/job")));
    assertEquals(1, node.watchHub().watchers(), "closed after " + tookMillis + " ms");
  }

  /** One Watch stream's events and how it ended. */
  private static final class Recorder implements StreamObserver<WatchResponse> {
    private final List<Event> events = new ArrayList<>();
    private Throwable error;

    @Override
    public synchronized void onNext(WatchResponse value) {
      events.addAll(value.getEventsList());
    }

    @Override
    public synchronized void onError(Throwable t) {
      error = t;
    }

    @Override
    public void onCompleted() {}

    synchronized List<Event> events() {
      return List.copyOf(events);
    }

    synchronized Throwable error() {
      return error;
    }
  }

  /**
   * A TCP relay on loopback to a node's client port. {@link #freeze} makes it behave like a client
   * whose machine died: from then on it forwards nothing either way and, after what it read last,
   * reads nothing more, so the node's PINGs get no ACK and its connection no FIN.
   */
  static final class FreezableRelay implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private final CountDownLatch closing = new CountDownLatch(1);
    private volatile boolean frozen;

    FreezableRelay(int targetPort) throws IOException {
      this.targetPort = targetPort;
      this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      start("relay-accept", this::accept);
    }

    int port() {
      return server.getLocalPort();
    }

    void freeze() {
      frozen = true;
    }

    private void start(String name, Runnable body) {
      Thread t = new Thread(body, name);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }

    private void accept() {
      while (!server.isClosed()) {
        Socket client;
        try {
          client = server.accept();
        } catch (IOException closed) {
          return;
        }
        sockets.add(client);
        try {
          Socket node = new Socket(InetAddress.getLoopbackAddress(), targetPort);
          sockets.add(node);
          client.setTcpNoDelay(true);
          node.setTcpNoDelay(true);
          start("relay-to-node", () -> pump(client, node));
          start("relay-to-client", () -> pump(node, client));
        } catch (IOException e) {
          closeQuietly(client);
        }
      }
    }

    private void pump(Socket from, Socket to) {
      byte[] buffer = new byte[16 << 10];
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        while (true) {
          int n = in.read(buffer);
          if (n < 0) {
            to.shutdownOutput();
            return;
          }
          if (frozen) {
            closing.await(); // drop what was read, and read nothing more until the test ends
            return;
          }
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException | InterruptedException e) {
        // Closed by the test, or by the other side.
      }
    }

    @Override
    public void close() throws InterruptedException {
      frozen = true;
      closing.countDown();
      closeQuietly(server);
      for (Socket s : sockets) {
        closeQuietly(s);
      }
      for (Thread t : threads) {
        t.join(5_000);
      }
    }

    private static void closeQuietly(AutoCloseable c) {
      try {
        c.close();
      } catch (Exception ignored) {
        // closing anyway
      }
    }
  }
}
