package io.leasehold.client;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

/**
 * For a resource server (a store, a queue, a mailbox) that lease holders write to: remembers the
 * highest fencing token it has accepted per resource and refuses lower ones, so a writer whose
 * lease ended without it noticing (a GC pause, a slow network) cannot overwrite the work of the
 * holder that came after it.
 *
 * <p>Equal tokens are accepted (the same lease writes many times). Every method is atomic per
 * resource; {@link #guard} also runs the write itself under the resource's lock, so a write checked
 * against an old token can never land after one with a newer token. Keep one guard per resource
 * server for as long as it runs; tokens of different resources are independent.
 *
 * <pre>{@code
 * FencingGuard guard = new FencingGuard();
 * // in the write handler, with the token the writer sent:
 * guard.guard("mailbox/42", request.token(), () -> store.write(request));   // throws StaleTokenException
 * }</pre>
 */
public final class FencingGuard {
  private final ConcurrentHashMap<String, Slot> resources = new ConcurrentHashMap<>();

  private static final class Slot {
    long highest;
  }

  /**
   * Accepts {@code token} for {@code resource} if it is at least the highest accepted so far (and
   * remembers it as the highest); returns false, changing nothing, if it is lower.
   *
   * @param resource the guarded resource
   * @param token the fencing token the writer sent (positive)
   * @return whether the token is not stale (and is now the highest)
   */
  public boolean tryAdvance(String resource, long token) {
    Slot slot = slot(resource, token);
    synchronized (slot) {
      if (token < slot.highest) {
        return false;
      }
      slot.highest = token;
      return true;
    }
  }

  /**
   * As {@link #tryAdvance}, throwing instead of returning false.
   *
   * @param resource the guarded resource
   * @param token the fencing token the writer sent (positive)
   * @throws StaleTokenException if a higher token was already accepted for {@code resource}
   */
  public void check(String resource, long token) {
    Slot slot = slot(resource, token);
    synchronized (slot) {
      if (token < slot.highest) {
        throw new StaleTokenException(resource, token, slot.highest);
      }
      slot.highest = token;
    }
  }

  /**
   * Checks {@code token} and, if it is current, runs {@code write} while holding the resource's
   * lock: writes to one resource are serialized, and none runs with a token lower than one that
   * already ran. The token counts as accepted even if the write fails.
   *
   * @param <T> what the write returns
   * @param resource the guarded resource
   * @param token the fencing token the writer sent (positive)
   * @param write the write, run only if the token is not stale
   * @return what the write returned
   * @throws StaleTokenException if a higher token was already accepted; {@code write} did not run
   * @throws Exception whatever {@code write} throws
   */
  public <T> T guard(String resource, long token, Callable<T> write) throws Exception {
    Objects.requireNonNull(write, "write");
    Slot slot = slot(resource, token);
    synchronized (slot) {
      if (token < slot.highest) {
        throw new StaleTokenException(resource, token, slot.highest);
      }
      slot.highest = token;
      return write.call();
    }
  }

  /**
   * The highest token accepted for {@code resource}, if any.
   *
   * @param resource the guarded resource
   * @return the highest token accepted for the resource; empty if none was
   */
  public OptionalLong highest(String resource) {
    Slot slot = resources.get(Objects.requireNonNull(resource, "resource"));
    if (slot == null) {
      return OptionalLong.empty();
    }
    synchronized (slot) {
      return OptionalLong.of(slot.highest);
    }
  }

  private Slot slot(String resource, long token) {
    Objects.requireNonNull(resource, "resource");
    if (token <= 0) {
      throw new IllegalArgumentException("token: must be a positive fencing token, got " + token);
    }
    return resources.computeIfAbsent(resource, r -> new Slot());
  }
}
