package io.leasehold.client.internal;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/** The per-name queues of this client's acquisitions ({@link NameSlot}). */
final class NameSlots {
  private final ClientCore core;
  private final ConcurrentHashMap<String, NameSlot> slots = new ConcurrentHashMap<>();

  NameSlots(ClientCore core) {
    this.core = core;
  }

  /** Queues {@code waiter} for {@code name} and lets the queue move. */
  void enqueue(String name, Waiter waiter) {
    while (true) {
      NameSlot slot = slots.computeIfAbsent(name, n -> new NameSlot(core, n, this));
      if (slot.add(waiter)) {
        slot.pump();
        return;
      }
      // The slot was retired between the lookup and the add: take a fresh one.
    }
  }

  void retire(NameSlot slot) {
    slots.remove(slot.name(), slot);
  }

  List<NameSlot> all() {
    return List.copyOf(slots.values());
  }
}
