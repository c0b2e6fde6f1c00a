package io.leasehold.statemachine.core;

import java.util.Arrays;
import java.util.function.ObjLongConsumer;

/**
 * Lease names in token order, for one group of {@link LeaseIndex} (a namespace, or a holder's
 * leases in one namespace): two parallel arrays instead of a tree.
 *
 * <p>A token derives from the log position of the command that granted the lease ({@link
 * LogFormat}), so a replica's grants arrive in token order and nearly every add appends. A removal
 * leaves a hole (its name set to null, its token kept, so the tokens stay sorted for binary
 * search); holes at either end are dropped at once, the arrays are squeezed rather than grown when
 * they fill with half of them free, and shrunk when three quarters are. A lease then costs no
 * object of its own here, where a {@code TreeMap<Long, String>} took an entry and a boxed token:
 * with the holder's index, 4 of the 13.5 objects a live lease kept on every node (HeapPerLease in
 * benchmarks/). It did not shorten young pauses measurably; it is memory. Apply thread only.
 */
final class TokenOrder {
  private static final long[] NO_TOKENS = new long[0];
  private static final String[] NO_NAMES = new String[0];

  /** The namespace this group's names are in (one shared string for the namespace's groups). */
  final String namespace;

  private long[] tokens = NO_TOKENS;
  private String[] names = NO_NAMES;

  /** Slots in use are [head, tail); names[head] and names[tail - 1] are live unless size is 0. */
  private int head;

  private int tail;
  private int size;

  TokenOrder(String namespace) {
    this.namespace = namespace;
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /**
   * Adds a name under its token. Tokens are unique, so a token already here is not expected; if one
   * comes, its name is replaced, as the tree this replaced did, rather than failing the apply
   * thread after the entry's commit.
   */
  void add(long token, String name) {
    if (size == 0) {
      head = 0;
      tail = 0;
    }
    if (tail == tokens.length) {
      makeRoom();
    }
    if (tail == head || token > tokens[tail - 1]) {
      tokens[tail] = token;
      names[tail] = name;
    } else {
      // Only a store loaded out of token order gets here (CoreState sorts before it adds).
      int at = Arrays.binarySearch(tokens, head, tail, token);
      if (at >= 0) {
        if (names[at] == null) {
          size++; // a hole that held the same token: reuse it
        }
        names[at] = name;
        return;
      }
      at = -at - 1;
      System.arraycopy(tokens, at, tokens, at + 1, tail - at);
      System.arraycopy(names, at, names, at + 1, tail - at);
      tokens[at] = token;
      names[at] = name;
    }
    tail++;
    size++;
  }

  /** Removes the name under this token; whether it was here. */
  boolean remove(long token) {
    int at = size == 0 ? -1 : Arrays.binarySearch(tokens, head, tail, token);
    if (at < 0 || names[at] == null) {
      return false;
    }
    names[at] = null;
    size--;
    if (size == 0) {
      head = 0;
      tail = 0;
      if (tokens.length > 16) {
        tokens = NO_TOKENS;
        names = NO_NAMES;
      }
      return true;
    }
    while (names[head] == null) {
      head++;
    }
    while (names[tail - 1] == null) {
      tail--;
    }
    if (tokens.length > 64 && size < tokens.length / 4) {
      resize(Math.max(16, size * 2)); // most of the group ended: give the memory back
    }
    return true;
  }

  /**
   * How many names here have a token below {@code token}. Walks them: only for quotas lowered below
   * use.
   */
  int countBefore(long token) {
    int end = size == 0 ? head : Arrays.binarySearch(tokens, head, tail, token);
    if (end < 0) {
      end = -end - 1;
    }
    int n = 0;
    for (int i = head; i < end; i++) {
      if (names[i] != null) {
        n++;
      }
    }
    return n;
  }

  /** Every name with its token, in token order. */
  void forEach(ObjLongConsumer<String> visitor) {
    for (int i = head; i < tail; i++) {
      if (names[i] != null) {
        visitor.accept(names[i], tokens[i]);
      }
    }
  }

  /**
   * Room for one more at the tail: squeeze out the holes if that frees half the arrays, else grow.
   */
  private void makeRoom() {
    resize(
        tokens.length > 0 && size <= tokens.length / 2
            ? tokens.length
            : Math.max(2, tokens.length * 2));
  }

  /** Copies the live names to the front of arrays of this capacity (at least {@code size}). */
  private void resize(int capacity) {
    long[] t = capacity == tokens.length ? tokens : new long[capacity];
    String[] n = capacity == names.length ? names : new String[capacity];
    int j = 0;
    for (int i = head; i < tail; i++) {
      if (names[i] != null) {
        t[j] = tokens[i];
        n[j] = names[i];
        j++;
      }
    }
    if (n == names) {
      Arrays.fill(n, j, tail, null);
    }
    tokens = t;
    names = n;
    head = 0;
    tail = j;
  }
}
