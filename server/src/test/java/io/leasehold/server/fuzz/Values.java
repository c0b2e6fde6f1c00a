package io.leasehold.server.fuzz;

import java.util.List;
import java.util.Random;

/**
 * The choices and values one generated call is built from: a random source seeded by jqwik and the
 * strings and numbers jqwik drew for it ({@link Atoms}), handed out in turn.
 */
final class Values {
  final Random random;
  private final List<String> strings;
  private final List<Long> numbers;
  private int nextString;
  private int nextNumber;

  Values(long seed, List<String> strings, List<Long> numbers) {
    this.random = new Random(seed);
    this.strings = strings;
    this.numbers = numbers;
  }

  /** One of the call's drawn strings. */
  String string() {
    return strings.get(nextString++ % strings.size());
  }

  /** One of the call's drawn numbers. */
  long number() {
    return numbers.get(nextNumber++ % numbers.size());
  }

  boolean chance(double p) {
    return random.nextDouble() < p;
  }

  int below(int bound) {
    return random.nextInt(bound);
  }

  long between(long min, long max) {
    return min + (long) (random.nextDouble() * (max - min + 1));
  }

  <T> T pick(List<T> items) {
    return items.get(random.nextInt(items.size()));
  }

  @SafeVarargs
  final <T> T pickOf(T... items) {
    return items[random.nextInt(items.length)];
  }
}
