package io.leasehold.client.internal;

import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's endpoints and which one to use. Reads and watches stick to a "home" endpoint
 * (spreading clients over nodes) and move to the next one when it fails. Writes go to the leader
 * when it is known and {@code preferLeader} is on — any node accepts writes and forwards them, so
 * this only saves a hop — and otherwise to the home endpoint.
 *
 * <p>The leader and the members are learned from {@code Cluster.Status}, asked at start and after
 * every failure, and from the leader hint a node puts on an UNAVAILABLE reply.
 */
public final class Connection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);
  private static final long PROBE_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final ClientSettings settings;
  private final ConnectionDiagnosis diagnosis;
  private final ScheduledExecutorService scheduler;
  private final Executor channelExecutor;
  private final CopyOnWriteArrayList<Endpoint> endpoints = new CopyOnWriteArrayList<>();
  private final AtomicInteger home = new AtomicInteger();
  private final AtomicBoolean probing = new AtomicBoolean();
  private volatile Endpoint leader;
  private volatile long lastProbeNanos = System.nanoTime() - PROBE_GAP_NANOS;
  private volatile boolean closed;

  /**
   * @param channelExecutor where the channels run calls' callbacks (shared by every client, rather
   *     than a pool of gRPC's own per channel)
   */
  public Connection(
      ClientSettings settings, ScheduledExecutorService scheduler, Executor channelExecutor) {
    this.settings = settings;
    this.diagnosis = new ConnectionDiagnosis(settings);
    this.scheduler = scheduler;
    this.channelExecutor = channelExecutor;
    for (String address : settings.endpoints()) {
      endpoint(address, true);
    }
  }

  /** Where reads and watches go. */
  public Endpoint forReads() {
    return endpoints.get(Math.floorMod(home.get(), endpoints.size()));
  }

  /** Where writes go. */
  public Endpoint forWrites() {
    Endpoint l = leader;
    return settings.preferLeader() && l != null ? l : forReads();
  }

  /**
   * The endpoint at {@code address} (a member's client address), added to the pool if it is new.
   */
  public Endpoint at(String address) {
    Endpoint e = endpoint(address, true);
    if (e == null) {
      throw new IllegalStateException("the client is closed");
    }
    return e;
  }

  /** Tells the failures no retry mends (see {@link ConnectionDiagnosis}). */
  public ConnectionDiagnosis diagnosis() {
    return diagnosis;
  }

  /**
   * The pool's endpoint at {@code address} if it has one; otherwise an endpoint outside the pool,
   * for a call to that one node (the caller shuts it down after), so that asking a node that is not
   * a member does not make it one of the nodes requests fail over to.
   */
  public Endpoint forOneCall(String address) {
    Endpoint e = endpoint(address, false);
    return e != null ? e : new Endpoint(address, settings, channelExecutor);
  }

  /** Whether {@code e} is one of the pool's endpoints. */
  public boolean pooled(Endpoint e) {
    return endpoints.contains(e);
  }

  public List<String> addresses() {
    return endpoints.stream().map(Endpoint::address).toList();
  }

  /**
   * A call to {@code e} failed: take its hint, move away from it if the node is the problem, look
   * for the leader again.
   */
  public void failed(Endpoint e, Status status, Metadata trailers) {
    String hint = trailers == null ? null : trailers.get(Errors.LEADER_HINT);
    boolean nodeTrouble = Errors.nodeTrouble(status.getCode());
    if (nodeTrouble) {
      if (leader == e) {
        leader = null;
      }
      int h = home.get();
      if (endpoints.get(Math.floorMod(h, endpoints.size())) == e && home.compareAndSet(h, h + 1)) {
        LOG.debug(
            "endpoint {} failed ({}); reads and watches move to {}",
            e,
            status.getCode(),
            forReads());
      }
    }
    if (hint != null && !hint.isEmpty() && !hint.equals(e.address())) {
      Endpoint hinted = endpoint(hint, settings.discoverMembers());
      if (hinted != null) {
        leaderIs(hinted);
      }
    }
    if (nodeTrouble) {
      probe();
    }
  }

  /** Asks the home endpoint for the leader and the members, at most once per 200 ms. */
  public void probe() {
    if (closed || !probing.compareAndSet(false, true)) {
      return;
    }
    long wait = PROBE_GAP_NANOS - (System.nanoTime() - lastProbeNanos);
    if (wait > 0) {
      scheduler.schedule(this::sendProbe, wait, TimeUnit.NANOSECONDS);
    } else {
      sendProbe();
    }
  }

  private void sendProbe() {
    Endpoint target = forReads();
    lastProbeNanos = System.nanoTime();
    if (closed) {
      probing.set(false);
      return;
    }
    try {
      ClientCalls.asyncUnaryCall(
          target
              .channel()
              .newCall(
                  ClusterGrpc.getStatusMethod(),
                  CallOptions.DEFAULT.withDeadlineAfter(
                      settings.attemptTimeout().toNanos(), TimeUnit.NANOSECONDS)),
          StatusRequest.getDefaultInstance(),
          new StreamObserver<>() {
            @Override
            public void onNext(StatusResponse status) {
              learn(status);
            }

            @Override
            public void onError(Throwable t) {
              probing.set(false);
              Status s = Status.fromThrowable(t);
              if (Errors.nodeTrouble(s.getCode())) {
                int h = home.get();
                if (endpoints.get(Math.floorMod(h, endpoints.size())) == target) {
                  home.compareAndSet(h, h + 1);
                }
              }
            }

            @Override
            public void onCompleted() {
              probing.set(false);
            }
          });
    } catch (RuntimeException e) {
      probing.set(false);
      LOG.debug("cluster status probe failed to start", e);
    }
  }

  private void learn(StatusResponse status) {
    if (settings.discoverMembers()) {
      for (Member m : status.getMembersList()) {
        if (!m.getClientAddress().isEmpty()) {
          endpoint(m.getClientAddress(), true);
        }
      }
    }
    if (!status.getLeaderClientAddress().isEmpty()) {
      Endpoint l = endpoint(status.getLeaderClientAddress(), settings.discoverMembers());
      if (l != null && leaderIs(l)) {
        LOG.debug("leader is {} ({})", status.getLeaderId(), l);
      }
    }
  }

  /**
   * Writes go to {@code l} from now; true if it is a new leader, whose channel then reconnects at
   * once.
   */
  private boolean leaderIs(Endpoint l) {
    if (l == leader) {
      return false;
    }
    l.reconnectNow();
    leader = l;
    return true;
  }

  /** The endpoint for an address, added if {@code add} (and the client is open). */
  private synchronized Endpoint endpoint(String address, boolean add) {
    for (Endpoint e : endpoints) {
      if (e.address().equals(address)) {
        return e;
      }
    }
    if (!add || closed) {
      return null;
    }
    Endpoint e = new Endpoint(address, settings, channelExecutor);
    endpoints.add(e);
    return e;
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    for (Endpoint e : endpoints) {
      e.shutdown();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    try {
      for (Endpoint e : endpoints) {
        e.awaitTermination(Math.max(0, deadline - System.nanoTime()));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
