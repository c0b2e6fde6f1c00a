package io.leasehold.proto;

/**
 * One reusable byte array per thread, for work that needs a whole message in one array for a moment
 * (gathering a watch message, reading a compressed block) without making garbage per message.
 * Arrays grow by doubling up to a limit; a request over the limit gets a fresh array. Each user
 * owns its own instance, so two uses can never hand out the same array.
 */
public final class ThreadScratch {
  private final int limit;
  private final ThreadLocal<byte[]> arrays;

  /** Arrays start at {@code initial} bytes and are kept up to {@code limit}. */
  public ThreadScratch(int initial, int limit) {
    if (initial <= 0 || limit < initial) {
      throw new IllegalArgumentException(
          "initial: must be positive and at most limit, got " + initial + " and " + limit);
    }
    this.limit = limit;
    this.arrays = ThreadLocal.withInitial(() -> new byte[initial]);
  }

  /**
   * An array of at least {@code n} bytes: this thread's own up to the limit, a fresh one beyond it.
   */
  public byte[] get(int n) {
    if (n > limit) {
      return new byte[n];
    }
    byte[] a = arrays.get();
    if (a.length < n) {
      a = new byte[Math.min(limit, Math.max(n, 2 * a.length))];
      arrays.set(a);
    }
    return a;
  }
}
