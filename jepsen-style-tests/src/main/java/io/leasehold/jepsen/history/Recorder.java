package io.leasehold.jepsen.history;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/** Collects a history from many client threads; {@link #snapshot} freezes it for the checkers. */
public final class Recorder {
  private final AtomicLong ids = new AtomicLong();
  private final List<Op> ops = new ArrayList<>();
  private final List<Validity> validities = new ArrayList<>();
  private final List<RegisterWrite> registerWrites = new ArrayList<>();
  private final List<UnfencedWrite> unfencedWrites = new ArrayList<>();
  private final List<WatchedEvent> watchedEvents = new ArrayList<>();
  private final List<String> watchers = new ArrayList<>();
  private final List<LivenessProbe> liveness = new ArrayList<>();
  private FinalState finalState = FinalState.none();

  /** Records an invocation now and returns it, to be completed with {@link #complete}. */
  public Op invoke(int process, String f, String key, Optional<String> holder, OptionalLong token) {
    Op op =
        new Op(
            ids.incrementAndGet(),
            process,
            Op.Type.INVOKE,
            f,
            key,
            holder,
            token,
            "",
            System.nanoTime());
    add(op);
    return op;
  }

  public Op complete(
      Op invoke, Op.Type type, Optional<String> holder, OptionalLong token, String value) {
    Op op = invoke.complete(type, holder, token, value, System.nanoTime());
    add(op);
    return op;
  }

  public synchronized void add(Op op) {
    ops.add(op);
  }

  public synchronized void validity(Validity v) {
    validities.add(v);
  }

  public synchronized void registerWrite(RegisterWrite w) {
    registerWrites.add(w);
  }

  public synchronized void unfenced(UnfencedWrite w) {
    unfencedWrites.add(w);
  }

  public synchronized void watcher(String name) {
    watchers.add(name);
  }

  public synchronized void watched(WatchedEvent e) {
    watchedEvents.add(e);
  }

  public synchronized void liveness(LivenessProbe p) {
    liveness.add(p);
  }

  public synchronized void finalState(FinalState f) {
    finalState = f;
  }

  public synchronized int opCount() {
    return ops.size();
  }

  public synchronized History snapshot() {
    return new History(
        ops,
        validities,
        registerWrites,
        unfencedWrites,
        watchedEvents,
        watchers,
        liveness,
        finalState);
  }
}
