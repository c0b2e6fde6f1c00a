package io.leasehold.server.raft;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;

/**
 * Controlled delivery of the AppendEntries requests that reach this node's Raft server: a fault
 * hook for tests, which decide, message by message, to deliver, drop or hold one, and later deliver
 * what they held in the order they choose. Raft must stay safe under any such schedule (a network
 * may lose, delay and reorder messages across connections), so a test can replay the exact
 * interleaving a fault needs instead of waiting for timing to produce it.
 *
 * <p>It sits on Ratis's gRPC server through Ratis's public services customizer, outside Ratis's own
 * code: Ratis sees only which messages arrive and when. With no rule set (always, outside tests)
 * every message is delivered at once, at the cost of one volatile read.
 */
public final class PeerTraffic {
  /** What happens to one request. */
  public enum Verdict {
    DELIVER,
    DROP,
    HOLD
  }

  /**
   * An AppendEntries request as the rule sees it: who sent it in which term and for which Raft
   * group (its id's UUID: the meta group's or a lease group's), the entry before its entries, its
   * entries' span (none for a heartbeat: first index -1) and the leader's commit index.
   */
  public record Append(
      String from,
      String group,
      long term,
      long previousIndex,
      long previousTerm,
      long firstIndex,
      long lastIndex,
      long lastTerm,
      long leaderCommit) {
    public boolean heartbeat() {
      return firstIndex < 0;
    }

    static Append of(AppendEntriesRequestProto r) {
      int n = r.getEntriesCount();
      LogEntryProto first = n == 0 ? null : r.getEntries(0);
      LogEntryProto last = n == 0 ? null : r.getEntries(n - 1);
      return new Append(
          r.getServerRequest().getRequestorId().toStringUtf8(),
          RaftGroupId.valueOf(r.getServerRequest().getRaftGroupId().getId()).getUuid().toString(),
          r.getLeaderTerm(),
          r.hasPreviousLog() ? r.getPreviousLog().getIndex() : -1,
          r.hasPreviousLog() ? r.getPreviousLog().getTerm() : -1,
          first == null ? -1 : first.getIndex(),
          last == null ? -1 : last.getIndex(),
          last == null ? -1 : last.getTerm(),
          r.getLeaderCommit());
    }
  }

  /** Decides each request's fate; called on gRPC's threads, must return quickly. */
  @FunctionalInterface
  public interface Rule {
    Verdict decide(Append append);
  }

  /** A request held back: {@link #deliver} hands it to Ratis now; one never delivered is lost. */
  public static final class Held {
    private final Append append;
    private final Call<?> call;
    private final Object message;
    private boolean done;

    private Held(Append append, Call<?> call, Object message) {
      this.append = append;
      this.call = call;
      this.message = message;
    }

    public Append append() {
      return append;
    }

    /**
     * Hands the request to Ratis, on the calling thread, as if it arrived now on its own stream.
     */
    public void deliver() {
      synchronized (call) {
        if (!done) {
          done = true;
          call.pass(message);
        }
      }
    }

    @Override
    public String toString() {
      return append.toString();
    }
  }

  private static final String APPEND_METHOD_SUFFIX = "/appendEntries";

  private volatile Rule rule;
  private volatile Set<String> cutOff = Set.of();
  private final List<Held> held = new ArrayList<>();
  private Delay delay; // guarded by this

  /**
   * Holds every AppendEntries (heartbeats too) from {@code fromPeer} for a random time in {@code
   * [min, max]}, then delivers it; messages of one stream keep their order, so what is reordered is
   * a stream against another (a resend on a new stream against the late original, a heartbeat
   * against an append). Replaces any rule; {@link #clear} ends it and delivers what is held at
   * once. For the fault tests' delay nemesis ({@link FaultControl}).
   */
  public synchronized void delay(String fromPeer, Duration min, Duration max, long seed) {
    clear();
    Delay d =
        new Delay(
            fromPeer, min.toNanos(), Math.max(min.toNanos(), max.toNanos()), new Random(seed));
    delay = d;
    rule(a -> a.from().equals(fromPeer) ? Verdict.HOLD : Verdict.DELIVER);
    d.start();
  }

  /** Ends any rule, and delivers at once, in order, whatever a delay holds. */
  public synchronized void clear() {
    rule(null);
    Delay d = delay;
    delay = null;
    if (d != null) {
      d.stop();
    }
    takeHeld().forEach(Held::deliver);
  }

  /** The delay nemesis's releaser: delivers each held message once its time has come. */
  private final class Delay {
    final String from;
    final long minNanos;
    final long maxNanos;
    final Random random;

    /**
     * When each held message goes, by message; a message never goes before an earlier one of its
     * stream.
     */
    final Map<Held, Long> due = new IdentityHashMap<>();

    final Map<Call<?>, Long> lastOfCall = new IdentityHashMap<>();
    final Thread releaser;
    volatile boolean running = true;

    Delay(String from, long minNanos, long maxNanos, Random random) {
      this.from = from;
      this.minNanos = minNanos;
      this.maxNanos = maxNanos;
      this.random = random;
      this.releaser = new Thread(this::run, "leasehold-peer-delay-" + from);
      releaser.setDaemon(true);
    }

    void start() {
      releaser.start();
    }

    void stop() {
      running = false;
      releaser.interrupt();
    }

    private void run() {
      while (running) {
        List<Held> ready = new ArrayList<>();
        long now = System.nanoTime();
        synchronized (held) {
          for (Held h : held) {
            Long at = due.get(h);
            if (at == null) {
              long wait =
                  minNanos
                      + (maxNanos > minNanos
                          ? (long) (random.nextDouble() * (maxNanos - minNanos))
                          : 0);
              at = Math.max(now + wait, lastOfCall.getOrDefault(h.call, Long.MIN_VALUE));
              due.put(h, at);
              lastOfCall.put(h.call, at);
            }
            if (at - now <= 0) {
              ready.add(h);
            }
          }
          held.removeAll(ready);
          ready.forEach(due::remove);
        }
        ready.forEach(Held::deliver); // in arrival order: a stream's messages keep theirs
        try {
          Thread.sleep(5);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /**
   * Cuts this node off from these peers, in place of any earlier set (none: cut off from no one):
   * it drops every Raft request from them (appends, votes, snapshots, read indexes), on streams
   * open now and to come, and sends them none of its own calls through Ratis's client (forwarded
   * writes, reads of their deadlines or log format: each fails as an unreachable peer's would). One
   * side of a network partition: set it on both sides to cut a node off. Independent of the rule,
   * which still decides what the others send. For tests and the test kit.
   */
  public void cutOff(Collection<String> peers) {
    cutOff = Set.copyOf(peers);
  }

  /** Whether {@link #cutOff} cuts this node off from {@code peer}. */
  public boolean isCutOff(String peer) {
    return cutOff.contains(peer);
  }

  /** What a call to a peer this node is cut off from fails with. */
  public static final class CutOffException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    CutOffException(Object peer) {
      super("cut off from " + peer);
    }
  }

  /** Sets the rule (null: deliver everything again); requests held so far stay held. */
  public void rule(Rule newRule) {
    rule = newRule;
  }

  /** The requests held so far, oldest first, and forgets them (each can still be delivered). */
  public List<Held> takeHeld() {
    synchronized (held) {
      List<Held> all = new ArrayList<>(held);
      held.clear();
      return all;
    }
  }

  /** The requests held so far, oldest first, without taking them. */
  public List<Held> held() {
    synchronized (held) {
      return List.copyOf(held);
    }
  }

  ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        ServerCall.Listener<Q> ratis = next.startCall(call, headers);
        return call.getMethodDescriptor().getFullMethodName().endsWith(APPEND_METHOD_SUFFIX)
            ? new Call<>(call, ratis)
            : new Listener<>(call, ratis);
      }
    };
  }

  /**
   * One AppendEntries stream: every message reaches Ratis under this lock, so held ones never race
   * the rest.
   */
  private final class Call<Q> extends Listener<Q> {
    Call(ServerCall<Q, ?> call, ServerCall.Listener<Q> ratis) {
      super(call, ratis);
    }

    @Override
    public void onMessage(Q message) {
      if (dropped(message)) {
        return;
      }
      Rule r = rule;
      if (r == null || !(message instanceof AppendEntriesRequestProto request)) {
        synchronized (this) {
          deliver(message);
        }
        return;
      }
      Append append = Append.of(request);
      switch (r.decide(append)) {
        case DELIVER -> {
          synchronized (this) {
            deliver(message);
          }
        }
        case DROP ->
            call.request(1); // gRPC asks for the next message only once Ratis took this one
        case HOLD -> {
          synchronized (held) {
            held.add(new Held(append, this, message));
          }
          call.request(1);
        }
      }
    }

    @SuppressWarnings("unchecked")
    void pass(Object message) {
      deliver((Q) message);
    }
  }

  /** True if the request comes from a peer this node is cut off from. */
  private boolean cutOff(Object message) {
    if (cutOff.isEmpty()) {
      return false;
    }
    RaftRpcRequestProto request = null;
    if (message instanceof AppendEntriesRequestProto m) {
      request = m.getServerRequest();
    } else if (message instanceof RequestVoteRequestProto m) {
      request = m.getServerRequest();
    } else if (message instanceof InstallSnapshotRequestProto m) {
      request = m.getServerRequest();
    } else if (message instanceof ReadIndexRequestProto m) {
      request = m.getServerRequest();
    } else if (message instanceof StartLeaderElectionRequestProto m) {
      request = m.getServerRequest();
    }
    return request != null && isCutOff(request.getRequestorId().toStringUtf8());
  }

  /**
   * Any other Raft call (votes, snapshots, read indexes), and the base of {@link Call}: only {@link
   * #cutOff} applies. A dropped unary request leaves its call without a message; Ratis fails it
   * when the caller half-closes, and the caller sees an error, as it would a lost connection.
   */
  private class Listener<Q>
      extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
    final ServerCall<Q, ?> call;

    Listener(ServerCall<Q, ?> call, ServerCall.Listener<Q> ratis) {
      super(ratis);
      this.call = call;
    }

    @Override
    public void onMessage(Q message) {
      if (!dropped(message)) {
        deliver(message);
      }
    }

    /**
     * Drops the message if it comes from a peer this node is cut off from, and asks for the next.
     */
    boolean dropped(Q message) {
      if (cutOff(message)) {
        call.request(1);
        return true;
      }
      return false;
    }

    /** Hands the message to Ratis. */
    void deliver(Q message) {
      super.onMessage(message);
    }
  }
}
