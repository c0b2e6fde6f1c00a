package io.leasehold.client.internal;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchCompactedException;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.client.internal.ConnectionDiagnosis.Diagnosis;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Watch stream that survives its node: when the stream breaks, it is opened again — on another
 * node if the node was the problem — from right after the last revision delivered, and whatever the
 * new stream repeats is dropped. Messages are handled one at a time on a serial executor and the
 * next one is requested only after the listener returned (flow control): a slow listener makes the
 * server cut the stream, which then resumes where the listener is.
 *
 * <p>The cursor is the revision every event up to which was delivered, plus the events already
 * delivered at that very revision: the server may split one revision's events over two messages, so
 * a stream that breaks between them resumes at that revision, not after it.
 */
public final class ResumingWatch implements Watch {
  private static final Logger LOG = LoggerFactory.getLogger(ResumingWatch.class);

  private final ClientCore core;
  private final WatchOptions options;
  private final WatchListener listener;
  private final SerialExecutor delivery;

  // Guarded by this.
  private ClientCall<WatchRequest, WatchResponse> call;
  private Endpoint endpoint;
  private int generation;
  private boolean closed;
  private int failures;

  /**
   * Whether a stream ever delivered a message; until then, the endpoints that cannot be connected
   * to, and why.
   */
  private boolean connected;

  private final Map<String, Diagnosis> diagnosed = new LinkedHashMap<>();
  private ScheduledFuture<?> restart;
  private ScheduledFuture<?> silenceCheck;

  // Touched only on the delivery executor.
  private final Set<String> tail = new HashSet<>();

  /**
   * Events delivered at revisions above the cursor: the server claims a revision only once all its
   * events are sent, so the first part of one it split over two messages lies beyond the cursor. A
   * stream that breaks in between sends that part again, which is dropped here.
   */
  private final NavigableMap<Long, Set<String>> ahead = new TreeMap<>();

  private long streamStart;

  /**
   * The group whose revisions the cursor counts (a watch of one namespace on a cluster with lease
   * groups; 0: the meta group; -1: not known yet). A resumed stream says it, so that a node refuses
   * to go on from it in a group the namespace moved to (revisions of two groups do not compare).
   */
  private int cursorGroup;

  private volatile long complete;
  private volatile long lastMessageNanos;

  /**
   * A watch across lease groups (its messages carry a resume token): the token of the last message
   * handled, which the next stream resumes from instead of a revision; and each group's cursor.
   * Revisions of different groups do not compare, so events are checked against their own group's
   * cursor; {@link #complete} follows the meta group's.
   */
  private ByteString resumeToken = ByteString.EMPTY;

  private final Map<Integer, GroupCursor> groupCursors = new HashMap<>();

  /**
   * A lease group's cursor in a watch across groups: every event up to {@code complete} was
   * delivered, and of each later revision (one split over messages), the events in {@code partial}.
   * A stream resumed from a token starts each group right after its {@code complete}.
   */
  private static final class GroupCursor {
    long complete;
    final NavigableMap<Long, Set<String>> partial = new TreeMap<>();
  }

  ResumingWatch(ClientCore core, WatchOptions options, WatchListener listener, Executor executor) {
    this(core, options, ByteString.EMPTY, listener, executor);
  }

  /**
   * @param startToken where to start instead of the options' revision: a list's resume token (a
   *     list across lease groups); empty for none
   */
  ResumingWatch(
      ClientCore core,
      WatchOptions options,
      ByteString startToken,
      WatchListener listener,
      Executor executor) {
    this.resumeToken = startToken;
    this.core = core;
    this.options = options;
    this.listener = listener;
    this.delivery = new SerialExecutor(executor);
    // Before the first message of a from-now watch the position is unknown (-1).
    this.complete = options.fromRevision() > 0 ? options.fromRevision() - 1 : -1;
    this.cursorGroup = options.fromRevision() > 0 ? options.fromGroup() : -1;
  }

  /** Opens the first stream. */
  public void start() {
    long silence = core.settings().watchSilenceTimeout().toNanos();
    synchronized (this) {
      silenceCheck = core.scheduleWithFixedDelay(this::checkSilence, silence / 2);
    }
    delivery.execute(this::open);
  }

  @Override
  public long revision() {
    return Math.max(0, complete);
  }

  @Override
  public synchronized boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    ClientCall<WatchRequest, WatchResponse> c;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      c = call;
      call = null;
      cancelTimers();
    }
    if (c != null) {
      c.cancel("watch closed", null);
    }
    core.forget(this);
  }

  private void cancelTimers() {
    if (restart != null) {
      restart.cancel(false);
    }
    if (silenceCheck != null) {
      silenceCheck.cancel(false);
    }
  }

  /** On the delivery executor: a new stream from the cursor. */
  private void open() {
    long start = complete < 0 ? 0 : (tail.isEmpty() ? complete + 1 : complete);
    WatchRequest.Builder builder = WatchRequest.newBuilder();
    if (resumeToken.isEmpty()) {
      builder.setStartRevision(start);
      if (start > 0 && cursorGroup >= 0) {
        builder.setStartGroup(cursorGroup);
      }
    } else {
      // Every group from where this watch's last message left it (split revisions repeat, and
      // are dropped by each group's cursor).
      builder.setResumeToken(resumeToken);
      start = 0;
    }
    WatchRequest request =
        builder
            .setPrefix(options.prefix())
            .addAllTypes(Protos.eventTypes(options.types()))
            .setIncludeRenewals(options.includeRenewals())
            .setRoutesOnly(options.routesOnly())
            .setView(Protos.view(options.view()))
            .addAllZones(options.filter().zones())
            .putAllMetadata(options.filter().metadata())
            .addAllStatuses(Protos.statuses(options.filter()))
            .build();
    ClientCall<WatchRequest, WatchResponse> c;
    int gen;
    streamStart = start;
    // Stamped before the call is published, so the silence check never cancels it unstarted.
    lastMessageNanos = System.nanoTime();
    synchronized (this) {
      if (closed) {
        return;
      }
      String namespace = Routing.of(options.prefix());
      Map<Endpoint, List<Integer>> plan =
          namespace == null ? core.connection().forWatchAcross() : Map.of();
      try {
        if (plan.size() > 1) {
          // No node hosts every lease group: one stream per chosen node, merged here.
          FanInWatchCall fanIn = new FanInWatchCall(plan);
          endpoint = fanIn.endpoint();
          c = fanIn;
        } else {
          endpoint =
              plan.isEmpty()
                  ? core.connection().forWatch(namespace)
                  : plan.keySet().iterator().next();
          c = endpoint.channel().newCall(LeasesGrpc.getWatchMethod(), CallOptions.DEFAULT);
        }
      } catch (RuntimeException shutDown) {
        return; // the client is closing
      }
      call = c;
      gen = ++generation;
    }
    try {
      c.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(WatchResponse message) {
              delivery.execute(() -> handle(gen, message));
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              delivery.execute(() -> ended(gen, status, trailers));
            }
          },
          new Metadata());
    } catch (RuntimeException notStarted) {
      // Cancelled before it started (close(), an interceptor): gRPC throws and no onClose will
      // come, so nothing else would open a stream again. A failed stream like any other.
      ended(
          gen,
          Status.CANCELLED
              .withDescription("the watch stream could not start: " + notStarted)
              .withCause(notStarted),
          null);
      return;
    }
    try {
      c.request(1);
      c.sendMessage(request);
      c.halfClose();
    } catch (IllegalStateException cancelled) {
      // close() cancelled the call meanwhile; its onClose ends it.
    }
  }

  private synchronized ClientCall<WatchRequest, WatchResponse> current(int gen) {
    return !closed && gen == generation ? call : null;
  }

  private void handle(int gen, WatchResponse message) {
    ClientCall<WatchRequest, WatchResponse> c = current(gen);
    if (c == null) {
      return;
    }
    lastMessageNanos = System.nanoTime();
    synchronized (this) {
      failures = 0;
      connected = true;
      diagnosed.clear();
    }
    if (!message.getResumeToken().isEmpty()) {
      handleGroup(c, message);
      return;
    }
    if (message.getGroup() != cursorGroup) {
      if (cursorGroup >= 0) {
        // A node never switches a watch of one namespace to another group (it ends it when the
        // namespace moves): revisions of two groups do not compare, so this cursor cannot go on.
        c.cancel("the watch's group changed", null);
        terminate(
            new WatchCompactedException(
                "watch of \""
                    + options.prefix()
                    + "\": a message of group "
                    + message.getGroup()
                    + " in a watch of group "
                    + cursorGroup
                    + "; list again and watch from there",
                0));
        return;
      }
      cursorGroup = message.getGroup();
    }
    long before = complete;
    List<WatchEvent> out = new ArrayList<>(message.getEventsCount());
    List<String> keys = new ArrayList<>(message.getEventsCount());
    List<Long> revisions = new ArrayList<>(message.getEventsCount());
    for (Event e : message.getEventsList()) {
      long r = e.getRevision();
      // Below the cursor: a node that was behind repeats what another node already delivered.
      if (r < streamStart || r < before) {
        continue;
      }
      String key = key(e);
      if (r == before && tail.contains(key)) {
        continue;
      }
      if (r > before && ahead.getOrDefault(r, Set.of()).contains(key)) {
        continue; // the start of a split revision, delivered before the stream broke
      }
      out.add(Protos.event(e, cursorGroup));
      keys.add(key);
      revisions.add(r);
    }
    for (WatchEvent e : out) {
      if (current(gen) == null) {
        return; // closed by the listener
      }
      try {
        listener.onEvent(e);
      } catch (RuntimeException ex) {
        LOG.warn("watch listener threw on {} at revision {}", e.name(), e.revision(), ex);
      }
    }
    long after = Math.max(before, message.getRevision());
    if (after > before) {
      tail.clear();
      tail.addAll(ahead.getOrDefault(after, Set.of()));
    }
    ahead.headMap(after, true).clear();
    for (int i = 0; i < keys.size(); i++) {
      long r = revisions.get(i);
      if (r == after) {
        tail.add(keys.get(i));
      } else if (r > after) {
        ahead.computeIfAbsent(r, k -> new HashSet<>()).add(keys.get(i));
      }
    }
    complete = after;
    if (after >= 0) {
      try {
        listener.onProgress(after);
      } catch (RuntimeException ex) {
        LOG.warn("watch listener threw on progress {}", after, ex);
      }
    }
    c.request(1);
  }

  /**
   * A message of a watch across lease groups: its events are checked against their group's own
   * cursor, and progress is the meta group's alone (revisions of groups do not compare).
   */
  private void handleGroup(ClientCall<WatchRequest, WatchResponse> c, WatchResponse message) {
    GroupCursor cursor = groupCursors.computeIfAbsent(message.getGroup(), g -> new GroupCursor());
    List<WatchEvent> out = new ArrayList<>(message.getEventsCount());
    for (Event e : message.getEventsList()) {
      long r = e.getRevision();
      if (r <= cursor.complete
          || !cursor.partial.computeIfAbsent(r, k -> new HashSet<>()).add(key(e))) {
        continue; // delivered before this stream resumed
      }
      out.add(Protos.event(e, message.getGroup()));
    }
    for (WatchEvent e : out) {
      if (c != call()) {
        return; // closed by the listener
      }
      try {
        listener.onEvent(e);
      } catch (RuntimeException ex) {
        LOG.warn("watch listener threw on {} at revision {}", e.name(), e.revision(), ex);
      }
    }
    cursor.complete = Math.max(cursor.complete, message.getRevision());
    cursor.partial.headMap(cursor.complete, true).clear();
    resumeToken = message.getResumeToken();
    if (message.getGroup() == 0) {
      // The meta group's position is the watch's revision; lease groups' do not compare with it.
      complete = cursor.complete;
      try {
        listener.onProgress(cursor.complete);
      } catch (RuntimeException ex) {
        LOG.warn("watch listener threw on progress {}", cursor.complete, ex);
      }
    }
    c.request(1);
  }

  private synchronized ClientCall<WatchRequest, WatchResponse> call() {
    return closed ? null : call;
  }

  private static String key(Event e) {
    return e.getTypeValue() + "|" + e.getLease().getToken() + "|" + e.getName();
  }

  private void ended(int gen, Status status, Metadata trailers) {
    Endpoint failedAt;
    synchronized (this) {
      if (closed || gen != generation || call == null) {
        return; // closed, superseded, or this stream's end was already handled
      }
      failedAt = call instanceof FanInWatchCall fanIn ? fanIn.endpoint() : endpoint;
      call = null;
    }
    switch (status.getCode()) {
      case INVALID_ARGUMENT,
          PERMISSION_DENIED,
          UNAUTHENTICATED,
          UNIMPLEMENTED,
          FAILED_PRECONDITION,
          NOT_FOUND ->
          terminate(Errors.toException("Watch " + options.prefix(), status, false));
      case OUT_OF_RANGE -> {
        long compact = 0;
        String t = trailers == null ? null : trailers.get(Errors.COMPACT_REVISION);
        if (t != null) {
          try {
            compact = Long.parseLong(t);
          } catch (NumberFormatException ignored) {
            // keep 0: unknown
          }
        }
        terminate(
            new WatchCompactedException(
                "watch of \""
                    + options.prefix()
                    + "\" from revision "
                    + (complete + 1)
                    + ": "
                    + status.getDescription(),
                compact));
      }
      default -> {
        if (!connected) {
          // Before the first message: every endpoint failing to connect for a reason no retry
          // mends (TLS settings that do not match the nodes') ends the watch, as it ends a call.
          core.connection()
              .diagnosis()
              .diagnose(failedAt, status)
              .whenComplete(
                  (d, e) ->
                      delivery.execute(
                          () ->
                              resume(
                                  failedAt, status, trailers, d == null ? Optional.empty() : d)));
        } else {
          resume(failedAt, status, trailers, Optional.empty());
        }
      }
    }
  }

  /**
   * On the delivery executor, after a stream failed: opens another, unless no endpoint can be
   * connected to.
   */
  private void resume(
      Endpoint failedAt, Status status, Metadata trailers, Optional<Diagnosis> diagnosis) {
    Map<String, Diagnosis> cannot = null;
    synchronized (this) {
      if (closed) {
        return;
      }
      if (diagnosis.isPresent() && !diagnosis.get().reason().mayPass()) {
        diagnosed.put(failedAt.address(), diagnosis.get());
        if (diagnosed.keySet().containsAll(core.connection().addresses())) {
          cannot = new LinkedHashMap<>(diagnosed);
        }
      }
    }
    if (cannot != null) {
      core.connection().failed(failedAt, status, trailers);
      terminate(
          core.connection().diagnosis().exception("Watch " + options.prefix(), cannot, status));
      return;
    }
    // The node stopped, failed, or cut us off for lagging: resume, elsewhere unless we lagged.
    Status reported =
        status.getCode() == Status.Code.RESOURCE_EXHAUSTED
            ? status
            : Status.UNAVAILABLE.withDescription("watch stream ended: " + status);
    core.connection().failed(failedAt, reported, trailers);
    synchronized (this) {
      if (closed) {
        return;
      }
      failures++;
      long delay =
          failures == 1
              ? 0
              : core.settings()
                  .retry()
                  .backoff(failures - 1, ThreadLocalRandom.current().nextDouble())
                  .toNanos();
      LOG.debug(
          "watch of \"{}\" ended ({}); resuming after revision {} in {} ms",
          options.prefix(),
          status.getCode(),
          complete,
          delay / 1_000_000);
      restart = core.schedule(() -> delivery.execute(this::open), delay);
    }
  }

  private void terminate(LeaseholdException error) {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      cancelTimers();
    }
    core.forget(this);
    try {
      listener.onError(error);
    } catch (RuntimeException ex) {
      LOG.warn("watch listener threw on error", ex);
    }
  }

  /** A stream that says nothing (not even the server's idle progress) is presumed dead. */
  private void checkSilence() {
    ClientCall<WatchRequest, WatchResponse> c;
    synchronized (this) {
      c = call;
    }
    long silent = System.nanoTime() - lastMessageNanos;
    if (c instanceof FanInWatchCall fanIn) {
      // One group's stream can die while the others' messages keep this watch busy.
      silent = Math.max(silent, fanIn.silentNanos());
    }
    if (c != null && silent > core.settings().watchSilenceTimeout().toNanos()) {
      c.cancel("no message for " + silent / 1_000_000 + " ms", null);
    }
  }
}
