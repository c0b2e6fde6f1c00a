package io.leasehold.jepsen.history;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One step of a client operation, as the client saw it: the invocation, then one completion (OK,
 * FAIL when it certainly did not happen, INFO when it may or may not have happened).
 *
 * @param id pairs an invocation with its completion; unique in a history
 * @param process the client process (a thread with its own holder identity)
 * @param type INVOKE or one completion type
 * @param f the operation: acquire, release, get, register, deregister, resolve, set-policy …
 * @param key the name (or service, or namespace) it is about
 * @param holder the holder it acts as, or (on a CONFLICT or a read) the holder it saw
 * @param token the token it sent (release) or received (grant, read)
 * @param value the outcome (GRANTED, CONFLICT, RELEASED, NOT_HELD …) or a read's value; "" if none
 * @param nanos the client's monotonic clock (System.nanoTime) when it happened
 */
public record Op(
    long id,
    int process,
    Type type,
    String f,
    String key,
    Optional<String> holder,
    OptionalLong token,
    String value,
    long nanos) {
  public enum Type {
    INVOKE,
    OK,
    FAIL,
    INFO
  }

  public Op {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(f, "f");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(value, "value");
  }

  public boolean isInvoke() {
    return type == Type.INVOKE;
  }

  public Op complete(
      Type outcome, Optional<String> seenHolder, OptionalLong seenToken, String result, long at) {
    if (outcome == Type.INVOKE) {
      throw new IllegalArgumentException("type: a completion cannot be INVOKE");
    }
    return new Op(id, process, outcome, f, key, seenHolder, seenToken, result, at);
  }

  @Override
  public String toString() {
    return "#"
        + id
        + " p"
        + process
        + " "
        + type
        + " "
        + f
        + " "
        + key
        + holder.map(h -> " holder=" + h).orElse("")
        + (token.isPresent() ? " token=" + token.getAsLong() : "")
        + (value.isEmpty() ? "" : " " + value)
        + " @"
        + nanos;
  }
}
