package io.leasehold.server.ui;

import com.google.protobuf.util.JsonFormat;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.watch.WatchFrame;
import io.leasehold.server.watch.WatchHub;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's live event tail: ONE subscription to each of the node's {@link WatchHub}s (the
 * meta group's and each lease group's; every lease, every type but RENEWED), opened while at least
 * one browser tab listens and fanned out to all of them. Groups' events interleave as they come.
 * Each tab has a bounded queue; a tab that falls {@link #TAB_QUEUE} events behind is dropped (it
 * reconnects), so a slow browser never holds back the hub or the other tabs.
 */
final class EventTail implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EventTail.class);
  static final int TAB_QUEUE = 1000;

  /**
   * One listening tab: its filter and its queue of JSON events; {@code null} in the queue ends it.
   */
  static final class Tab {
    final String prefix;
    final Set<Event.Type> types;
    final BlockingQueue<String> queue = new ArrayBlockingQueue<>(TAB_QUEUE + 1);
    volatile boolean dropped;

    Tab(String prefix, Set<Event.Type> types) {
      this.prefix = prefix;
      this.types = types;
    }

    boolean wants(Event e) {
      return e.getName().startsWith(prefix) && (types.isEmpty() || types.contains(e.getType()));
    }
  }

  private final Supplier<List<WatchHub>> hubs;
  private final Set<Tab> tabs = new CopyOnWriteArraySet<>();
  private List<Subscription> subscriptions = List.of();
  private boolean closed;

  /**
   * @param hubs the node's hubs, asked each time the tail opens
   */
  EventTail(Supplier<List<WatchHub>> hubs) {
    this.hubs = hubs;
  }

  /** Adds a tab; the first one opens the hub subscriptions. */
  synchronized Tab open(String prefix, Set<Event.Type> types) {
    Tab tab = new Tab(prefix, types);
    tabs.add(tab);
    if (subscriptions.isEmpty() && !closed) {
      List<Subscription> opened = new ArrayList<>();
      for (WatchHub hub : hubs.get()) {
        Subscription s = new Subscription();
        hub.watch(WatchRequest.getDefaultInstance(), s);
        opened.add(s);
      }
      subscriptions = List.copyOf(opened);
      subscriptions.forEach(Subscription::start);
    }
    return tab;
  }

  /** Removes a tab; the last one closes the hub subscriptions. */
  synchronized void close(Tab tab) {
    tabs.remove(tab);
    if (tabs.isEmpty()) {
      cancelAll();
    }
  }

  private void cancelAll() {
    subscriptions.forEach(Subscription::cancel);
    subscriptions = List.of();
  }

  /** How many hub watchers the dashboard holds: none, or one per hub. */
  synchronized int hubWatchers() {
    return subscriptions.size();
  }

  int tabs() {
    return tabs.size();
  }

  private void deliver(WatchFrame frame) {
    for (Event e : frame.toResponse().getEventsList()) {
      String json = null;
      for (Tab tab : tabs) {
        if (tab.dropped || !tab.wants(e)) {
          continue;
        }
        if (json == null) {
          try {
            json = JsonFormat.printer().omittingInsignificantWhitespace().print(e);
          } catch (com.google.protobuf.InvalidProtocolBufferException ex) {
            return;
          }
        }
        if (tab.queue.size() >= TAB_QUEUE || !tab.queue.offer(json)) {
          tab.dropped = true;
          tab.queue.clear();
          tab.queue.offer(""); // wakes its writer, which sees dropped
        }
      }
    }
  }

  /**
   * The hub ended our watch (a node closing, a watcher too far behind): every tab ends, and
   * reconnects.
   */
  private synchronized void ended(Subscription s, Throwable why) {
    if (!subscriptions.contains(s)) {
      return;
    }
    cancelAll();
    LOG.debug("dashboard event tail ended: {}", why == null ? "completed" : why.toString());
    for (Tab tab : tabs) {
      tab.dropped = true;
      tab.queue.offer("");
    }
    tabs.clear();
  }

  @Override
  public synchronized void close() {
    closed = true;
    cancelAll();
    for (Tab tab : tabs) {
      tab.dropped = true;
      tab.queue.offer("");
    }
  }

  /**
   * The hub's view of our one watcher: always ready (tabs' queues absorb the flow), so the hub
   * sends as fast as it builds frames; {@code deliver} never blocks.
   */
  private final class Subscription extends ServerCallStreamObserver<WatchFrame> {
    private volatile Runnable onCancel = () -> {};
    private volatile Runnable onReady = () -> {};
    private volatile boolean cancelled;

    void start() {
      onReady.run();
    }

    void cancel() {
      cancelled = true;
      onCancel.run();
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
      onCancel = handler;
    }

    @Override
    public void setCompression(String compression) {}

    @Override
    public boolean isReady() {
      return !cancelled;
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {
      onReady = handler;
    }

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void onNext(WatchFrame frame) {
      if (!cancelled) {
        deliver(frame);
      }
    }

    @Override
    public void onError(Throwable t) {
      ended(this, t);
    }

    @Override
    public void onCompleted() {
      ended(this, null);
    }
  }
}
