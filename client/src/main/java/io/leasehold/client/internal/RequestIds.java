package io.leasehold.client.internal;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Request ids for writes that must not be applied twice (Acquire, Register): a random per-client
 * prefix of 96 bits and a counter. A call keeps its id across its retries, so an attempt that
 * reaches the log after its caller gave up on it is answered as the first and changes nothing.
 */
public final class RequestIds {
  private final String prefix;
  private final AtomicLong next = new AtomicLong();

  public RequestIds() {
    byte[] random = new byte[12];
    new SecureRandom().nextBytes(random);
    this.prefix = Base64.getUrlEncoder().withoutPadding().encodeToString(random) + "-";
  }

  /** A new id: 16 characters of prefix, a dash and the counter in base 36. */
  public String next() {
    return prefix + Long.toString(next.incrementAndGet(), 36);
  }
}
