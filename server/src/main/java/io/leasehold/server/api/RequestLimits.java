package io.leasehold.server.api;

import com.google.protobuf.Any;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Duration;
import com.google.protobuf.WireFormat;
import com.google.rpc.RetryInfo;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.rpc.RequestGate;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * This node's limits against abuse, checked where calls arrive (docs/operations.md, "Limits").
 * Registered right after the authorization point ({@link io.leasehold.server.auth.Authorizer}),
 * which stays the one place that decides who may do what: a call reaches these checks only once it
 * is authorized, and sees its {@link Caller}.
 *
 * <ul>
 *   <li>Acquire, CreateSession, Transfer and Registry/Register (and AcquireMany, one token a name):
 *       a token bucket per identity (per remote IP address on a node without authentication) of
 *       {@code --max-acquires-per-second}, with a burst of as many; beyond it RESOURCE_EXHAUSTED
 *       with a retry hint ({@code google.rpc.RetryInfo} and the text).
 *   <li>Watch: open streams per client connection ({@code --max-watches-per-connection}) and per
 *       identity ({@code --max-watches-per-identity}); a stream's slot is freed however it ends
 *       (completed, failed, cancelled, its connection dropped).
 *   <li>Renew: at most {@code --max-renew-items} names (INVALID_ARGUMENT naming {@code items}).
 * </ul>
 *
 * Request and metadata size are gRPC's own limits, set on the server builder. None of these is
 * replicated: each node counts the calls it receives.
 */
public final class RequestLimits implements ServerInterceptor {
  /** A number unique to each client connection, set when its transport is ready. */
  public static final Attributes.Key<Long> CONNECTION_ID =
      Attributes.Key.create("leasehold-connection-id");

  private static final String ACQUIRE = LeasesGrpc.getAcquireMethod().getFullMethodName();
  private static final String ACQUIRE_MANY = LeasesGrpc.getAcquireManyMethod().getFullMethodName();
  private static final String REGISTER = RegistryGrpc.getRegisterMethod().getFullMethodName();
  private static final String CREATE_SESSION =
      LeasesGrpc.getCreateSessionMethod().getFullMethodName();
  private static final String TRANSFER = LeasesGrpc.getTransferMethod().getFullMethodName();
  private static final String RENEW = LeasesGrpc.getRenewMethod().getFullMethodName();
  private static final String WATCH = LeasesGrpc.getWatchMethod().getFullMethodName();
  private static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final NodeConfig.ApiLimits limits;
  private final LongSupplier nanoTime;
  private final AtomicLong connections = new AtomicLong();
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
  private volatile long sweptAt;
  private final Map<Object, Integer> watchesByConnection = new HashMap<>();
  private final Map<String, Integer> watchesByIdentity = new HashMap<>();
  private int watches;

  public RequestLimits(NodeConfig.ApiLimits limits) {
    this(limits, System::nanoTime);
  }

  RequestLimits(NodeConfig.ApiLimits limits, LongSupplier nanoTime) {
    this.limits = limits;
    this.nanoTime = nanoTime;
    this.sweptAt = nanoTime.getAsLong();
  }

  /** Gives every client connection its {@link #CONNECTION_ID}: register on the server builder. */
  public ServerTransportFilter connectionIds() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attributes) {
        return attributes.toBuilder().set(CONNECTION_ID, connections.incrementAndGet()).build();
      }
    };
  }

  /** Watch streams open on this node that hold a slot. */
  public synchronized int openWatches() {
    return watches;
  }

  /** Identities (remote addresses) with a token bucket, for tests: idle buckets are dropped. */
  int buckets() {
    return buckets.size();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (method.equals(ACQUIRE)
        || method.equals(REGISTER)
        || method.equals(CREATE_SESSION)
        || method.equals(TRANSFER)) {
      String who = who(call);
      return new Checked<>(
          next.startCall(call, headers), call, message -> takeAcquire(who, 1), null);
    }
    if (method.equals(ACQUIRE_MANY)) {
      String who = who(call);
      return new Checked<>(
          next.startCall(call, headers),
          call,
          message -> takeAcquire(who, acquireManyNames(message)),
          null);
    }
    if (method.equals(RENEW)) {
      return new Checked<>(next.startCall(call, headers), call, this::checkRenew, null);
    }
    if (method.equals(WATCH)) {
      WatchSlot slot = new WatchSlot(connection(call), who(call));
      return new Checked<>(
          next.startCall(call, headers), call, message -> slot.take(), slot::release);
    }
    return next.startCall(call, headers);
  }

  /**
   * The caller's identity, or on a node without authentication the remote IP address (every
   * connection from it).
   */
  private static String who(ServerCall<?, ?> call) {
    Caller caller = Caller.current();
    if (caller.authenticated()) {
      return "identity " + caller.identity();
    }
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    if (remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
      return "address " + inet.getAddress().getHostAddress();
    }
    return "address " + remote;
  }

  private static Object connection(ServerCall<?, ?> call) {
    Long id = call.getAttributes().get(CONNECTION_ID);
    return id != null
        ? id
        : String.valueOf(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
  }

  /** The names an AcquireMany claims, each counted as one acquisition. */
  private static int acquireManyNames(Object message) {
    if (message instanceof AcquireManyRequest r) {
      return Math.max(1, r.getItemsCount());
    }
    if (message instanceof byte[] bytes) {
      return Math.max(1, countItems(bytes, AcquireManyRequest.ITEMS_FIELD_NUMBER));
    }
    return 1;
  }

  private StatusRuntimeException takeAcquire(String who, int names) {
    if (names > limits.acquiresPerSecond()) {
      return Status.RESOURCE_EXHAUSTED
          .withDescription(
              "items: an AcquireMany of "
                  + names
                  + " names is more than the "
                  + limits.acquiresPerSecond()
                  + " acquisitions a second this node allows (--max-acquires-per-second); "
                  + "send fewer names per call")
          .asRuntimeException();
    }
    long now = nanoTime.getAsLong();
    sweep(now);
    long waitNanos =
        buckets
            .computeIfAbsent(who, k -> new Bucket(limits.acquiresPerSecond(), now))
            .take(now, limits.acquiresPerSecond(), names);
    if (waitNanos == 0) {
      return null;
    }
    long retryMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos) + 1);
    String text =
        "acquisitions: more than "
            + limits.acquiresPerSecond()
            + " a second (Acquire, AcquireMany names and Register) by "
            + who
            + " on this node, the limit --max-acquires-per-second; retry in "
            + retryMillis
            + " ms";
    com.google.rpc.Status detail =
        com.google.rpc.Status.newBuilder()
            .setCode(Status.Code.RESOURCE_EXHAUSTED.value())
            .setMessage(text)
            .addDetails(
                Any.pack(
                    RetryInfo.newBuilder()
                        .setRetryDelay(
                            Duration.newBuilder()
                                .setSeconds(retryMillis / 1000)
                                .setNanos((int) (retryMillis % 1000) * 1_000_000))
                        .build()))
            .build();
    return StatusProto.toStatusRuntimeException(detail);
  }

  /**
   * Drops the buckets of identities idle long enough to have refilled: they would start full again
   * anyway.
   */
  private void sweep(long now) {
    long at = sweptAt;
    if (now - at < SWEEP_NANOS) {
      return;
    }
    sweptAt = now;
    buckets.values().removeIf(b -> b.full(now, limits.acquiresPerSecond()));
  }

  private StatusRuntimeException checkRenew(Object message) {
    int items;
    if (message instanceof RenewRequest r) {
      items = r.getItemsCount();
    } else if (message instanceof byte[] bytes) {
      items = countItems(bytes, RenewRequest.ITEMS_FIELD_NUMBER);
    } else {
      return null;
    }
    if (items <= limits.renewItems()) {
      return null;
    }
    return Status.INVALID_ARGUMENT
        .withDescription(
            "items: at most "
                + limits.renewItems()
                + " per Renew on this node "
                + "(the limit --max-renew-items), got "
                + items)
        .asRuntimeException();
  }

  /**
   * The number of repeated {@code field} entries (the items) in a serialized request, without
   * parsing them; -1 if malformed (left to the handler).
   */
  static int countItems(byte[] bytes, int field) {
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    int count = 0;
    try {
      while (true) {
        int tag = in.readTag();
        if (tag == 0) {
          return count;
        }
        if (WireFormat.getTagFieldNumber(tag) == field) {
          count++;
        }
        if (!in.skipField(tag)) {
          return count;
        }
      }
    } catch (IOException e) {
      return -1;
    }
  }

  private synchronized String reserveWatch(Object connection, String who) {
    int onConnection = watchesByConnection.getOrDefault(connection, 0);
    if (onConnection >= limits.watchesPerConnection()) {
      return "watches: "
          + onConnection
          + " open on this connection, the most one may have on this node "
          + "(the limit --max-watches-per-connection is "
          + limits.watchesPerConnection()
          + "); close one first";
    }
    int ofIdentity = watchesByIdentity.getOrDefault(who, 0);
    if (ofIdentity >= limits.watchesPerIdentity()) {
      return "watches: "
          + ofIdentity
          + " open by "
          + who
          + ", the most one may have on this node "
          + "(the limit --max-watches-per-identity is "
          + limits.watchesPerIdentity()
          + "); close one first";
    }
    watchesByConnection.put(connection, onConnection + 1);
    watchesByIdentity.put(who, ofIdentity + 1);
    watches++;
    return null;
  }

  private synchronized void releaseWatch(Object connection, String who) {
    watchesByConnection.computeIfPresent(connection, (k, n) -> n <= 1 ? null : n - 1);
    watchesByIdentity.computeIfPresent(who, (k, n) -> n <= 1 ? null : n - 1);
    watches--;
  }

  /** One Watch stream's slot: taken with its request, given back once however the stream ends. */
  private final class WatchSlot {
    private final Object connection;
    private final String who;
    private boolean held;

    WatchSlot(Object connection, String who) {
      this.connection = connection;
      this.who = who;
    }

    StatusRuntimeException take() {
      if (held) {
        return null;
      }
      String refused = reserveWatch(connection, who);
      if (refused != null) {
        return Status.RESOURCE_EXHAUSTED.withDescription(refused).asRuntimeException();
      }
      held = true;
      return null;
    }

    void release() {
      if (held) {
        held = false;
        releaseWatch(connection, who);
      }
    }
  }

  /**
   * A token bucket: refills at {@code rate} a second up to {@code rate} (a second's worth of
   * burst).
   */
  private static final class Bucket {
    private double tokens;
    private long at;

    Bucket(int rate, long now) {
      this.tokens = rate;
      this.at = now;
    }

    /** 0 if {@code n} tokens were taken, else the nanoseconds until they will be there. */
    synchronized long take(long now, int rate, int n) {
      refill(now, rate);
      if (tokens >= n) {
        tokens -= n;
        return 0;
      }
      return Math.max(1, (long) Math.ceil((n - tokens) * 1e9 / rate));
    }

    synchronized boolean full(long now, int rate) {
      refill(now, rate);
      return tokens >= rate;
    }

    private void refill(long now, int rate) {
      long elapsed = now - at;
      if (elapsed > 0) {
        tokens = Math.min(rate, tokens + elapsed * (double) rate / 1e9);
        at = now;
      }
    }
  }

  /**
   * Checks a call's first request before the handler sees it; a refused call hears nothing more but
   * its end.
   */
  private interface Check {
    StatusRuntimeException apply(Object message);
  }

  private static final class Checked<Q> extends RequestGate<Q> {
    private final Check check;
    private final Runnable onEnd;
    private boolean ended;

    Checked(ServerCall.Listener<Q> delegate, ServerCall<Q, ?> call, Check check, Runnable onEnd) {
      super(delegate, call);
      this.check = check;
      this.onEnd = onEnd;
    }

    @Override
    protected StatusRuntimeException refusal(Q message) {
      return check.apply(message);
    }

    @Override
    public void onComplete() {
      end();
      super.onComplete();
    }

    @Override
    public void onCancel() {
      end();
      super.onCancel();
    }

    private void end() {
      if (!ended && onEnd != null) {
        ended = true;
        onEnd.run();
      }
    }
  }
}
