package io.leasehold.client;

import java.util.ArrayList;
import java.util.List;

/** Records a lease's transitions and the threads they were delivered on. */
final class TransitionRecorder implements LeaseListener {
  private final List<LeaseTransition> transitions = new ArrayList<>();
  private final List<String> threads = new ArrayList<>();

  @Override
  public synchronized void onTransition(LeaseTransition t) {
    transitions.add(t);
    threads.add(Thread.currentThread().getName());
  }

  synchronized List<LeaseState> states() {
    return transitions.stream().map(LeaseTransition::to).toList();
  }

  synchronized List<LeaseTransition> transitions() {
    return List.copyOf(transitions);
  }

  synchronized List<String> threads() {
    return List.copyOf(threads);
  }

  synchronized boolean saw(LeaseState state) {
    return transitions.stream().anyMatch(t -> t.to() == state);
  }
}
