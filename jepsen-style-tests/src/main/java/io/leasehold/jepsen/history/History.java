package io.leasehold.jepsen.history;

import java.util.List;
import java.util.Objects;

/** Everything a run recorded, immutable: the input of every checker. */
public record History(
    List<Op> ops,
    List<Validity> validities,
    List<RegisterWrite> registerWrites,
    List<UnfencedWrite> unfencedWrites,
    List<WatchedEvent> watchedEvents,
    List<String> watchers,
    List<LivenessProbe> liveness,
    FinalState finalState) {
  public History {
    ops = List.copyOf(Objects.requireNonNull(ops, "ops"));
    validities = List.copyOf(Objects.requireNonNull(validities, "validities"));
    registerWrites = List.copyOf(Objects.requireNonNull(registerWrites, "registerWrites"));
    unfencedWrites = List.copyOf(Objects.requireNonNull(unfencedWrites, "unfencedWrites"));
    watchedEvents = List.copyOf(Objects.requireNonNull(watchedEvents, "watchedEvents"));
    watchers = List.copyOf(Objects.requireNonNull(watchers, "watchers"));
    liveness = List.copyOf(Objects.requireNonNull(liveness, "liveness"));
    Objects.requireNonNull(finalState, "finalState");
  }

  public static History empty() {
    return new History(
        List.of(),
        List.of(),
        List.of(),
        List.of(),
        List.of(),
        List.of(),
        List.of(),
        FinalState.none());
  }

  public History withOps(List<Op> o) {
    return new History(
        o,
        validities,
        registerWrites,
        unfencedWrites,
        watchedEvents,
        watchers,
        liveness,
        finalState);
  }

  public History withValidities(List<Validity> v) {
    return new History(
        ops, v, registerWrites, unfencedWrites, watchedEvents, watchers, liveness, finalState);
  }

  public History withRegisterWrites(List<RegisterWrite> w) {
    return new History(
        ops, validities, w, unfencedWrites, watchedEvents, watchers, liveness, finalState);
  }

  public History withWatch(List<String> w, List<WatchedEvent> e) {
    return new History(ops, validities, registerWrites, unfencedWrites, e, w, liveness, finalState);
  }

  public History withLiveness(List<LivenessProbe> l) {
    return new History(
        ops, validities, registerWrites, unfencedWrites, watchedEvents, watchers, l, finalState);
  }

  public History withFinalState(FinalState f) {
    return new History(
        ops, validities, registerWrites, unfencedWrites, watchedEvents, watchers, liveness, f);
  }

  /**
   * Invocations paired with their completions (an invocation without one counts as INFO at the
   * end).
   */
  public List<Completed> completed() {
    return Completed.pair(ops);
  }
}
