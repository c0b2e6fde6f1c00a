package io.leasehold.statemachine.core;

import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Values that carry their own name, by name: an open-addressed table (linear probing,
 * backward-shift deletion), one array slot an entry where a {@code HashMap} spends a 32-byte node
 * and a slot. For what is kept once per live lease (the lease table, the leader's deadlines): with
 * a million leases a node map is some 40 MB of heap. Not thread-safe.
 *
 * @param <V> the values; {@code nameOf} must give each the same name for as long as it is in the
 *     table
 */
public final class NameTable<V> {
  private static final int MIN_CAPACITY = 1 << 10;

  private final Function<V, String> nameOf;
  private Object[] slots;
  private int size;
  private int threshold;

  public NameTable(Function<V, String> nameOf) {
    this.nameOf = nameOf;
    allocate(MIN_CAPACITY);
  }

  public int size() {
    return size;
  }

  public V get(String name) {
    return at(slot(name));
  }

  public boolean containsKey(String name) {
    return slots[slot(name)] != null;
  }

  /** Sets the value under its own name; returns the one it replaced, or null. */
  public V put(V value) {
    int i = slot(nameOf.apply(value));
    V old = at(i);
    slots[i] = value;
    if (old == null && ++size > threshold) {
      allocate(slots.length * 2);
    }
    return old;
  }

  /** Drops {@code name}'s value; returns it, or null if there was none. */
  public V remove(String name) {
    int i = slot(name);
    V old = at(i);
    if (old == null) {
      return null;
    }
    size--;
    int mask = slots.length - 1;
    for (int j = (i + 1) & mask; slots[j] != null; j = (j + 1) & mask) {
      int home = home(nameOf.apply(at(j)), mask);
      boolean staysPut = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!staysPut) {
        slots[i] = slots[j];
        i = j;
      }
    }
    slots[i] = null;
    return old;
  }

  public void clear() {
    slots = null;
    allocate(MIN_CAPACITY);
  }

  /** Every value, in no particular order. */
  public void forEach(Consumer<V> visitor) {
    for (int i = 0; i < slots.length; i++) {
      if (slots[i] != null) {
        visitor.accept(at(i));
      }
    }
  }

  @SuppressWarnings("unchecked")
  private V at(int i) {
    return (V) slots[i];
  }

  private int slot(String name) {
    int mask = slots.length - 1;
    int i = home(name, mask);
    while (slots[i] != null && !nameOf.apply(at(i)).equals(name)) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private static int home(String name, int mask) {
    int h = name.hashCode() * 0x9E3779B9;
    return (h ^ (h >>> 16)) & mask;
  }

  private void allocate(int capacity) {
    Object[] old = slots;
    slots = new Object[capacity];
    threshold = (int) (capacity * 0.7);
    size = 0;
    if (old != null) {
      int mask = capacity - 1;
      for (Object v : old) {
        if (v != null) {
          @SuppressWarnings("unchecked")
          int j = home(nameOf.apply((V) v), mask);
          while (slots[j] != null) {
            j = (j + 1) & mask;
          }
          slots[j] = v;
          size++;
        }
      }
    }
  }
}
