package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** Hand-made histories for checker tests: times are plain numbers, in call order. */
final class Histories {
  private final List<Op> ops = new ArrayList<>();
  private final List<Validity> validities = new ArrayList<>();
  private long ids;

  private Op invoke(int p, String f, String key, String holder, OptionalLong token, long at) {
    Op op = new Op(++ids, p, Op.Type.INVOKE, f, key, Optional.ofNullable(holder), token, "", at);
    ops.add(op);
    return op;
  }

  private void done(
      Op inv, Op.Type type, String holder, OptionalLong token, String value, long at) {
    ops.add(inv.complete(type, Optional.ofNullable(holder), token, value, at));
  }

  Histories granted(String holder, String name, long token, long from, long to) {
    done(
        invoke(0, "acquire", name, holder, OptionalLong.empty(), from),
        Op.Type.OK,
        holder,
        OptionalLong.of(token),
        "GRANTED",
        to);
    return this;
  }

  /** {@code holder}'s lease with {@code token} handed to {@code to}, who got {@code newToken}. */
  Histories transferred(
      String holder, String name, long token, String to, long newToken, long from, long at) {
    done(
        invoke(0, "transfer", name, to, OptionalLong.of(token), from),
        Op.Type.OK,
        to,
        OptionalLong.of(newToken),
        "TRANSFERRED",
        at);
    return this;
  }

  /** An all-or-nothing acquisition of {@code names} answered {@code value}: ALL, NONE or SOME. */
  Histories allOrNothing(String holder, String names, String value, long from, long to) {
    done(
        invoke(0, AllOrNothingChecker.F, names, holder, OptionalLong.empty(), from),
        Op.Type.OK,
        holder,
        OptionalLong.empty(),
        value,
        to);
    return this;
  }

  Histories conflict(
      String holder, String name, String seenHolder, long seenToken, long from, long to) {
    done(
        invoke(0, "acquire", name, holder, OptionalLong.empty(), from),
        Op.Type.OK,
        seenHolder,
        OptionalLong.of(seenToken),
        "CONFLICT",
        to);
    return this;
  }

  Histories acquireUnknown(String holder, String name, long from) {
    invoke(0, "acquire", name, holder, OptionalLong.empty(), from);
    return this;
  }

  Histories released(String holder, String name, long token, long from, long to) {
    done(
        invoke(0, "release", name, holder, OptionalLong.of(token), from),
        Op.Type.OK,
        holder,
        OptionalLong.of(token),
        "RELEASED",
        to);
    return this;
  }

  Histories notHeld(String holder, String name, long token, long from, long to) {
    done(
        invoke(0, "release", name, holder, OptionalLong.of(token), from),
        Op.Type.OK,
        holder,
        OptionalLong.of(token),
        "NOT_HELD",
        to);
    return this;
  }

  Histories read(String name, String holder, long token, long from, long to) {
    done(
        invoke(0, "get", name, null, OptionalLong.empty(), from),
        Op.Type.OK,
        holder,
        holder == null ? OptionalLong.empty() : OptionalLong.of(token),
        holder == null ? "NONE" : "FOUND",
        to);
    return this;
  }

  Histories readNone(String name, long from, long to) {
    return read(name, null, 0, from, to);
  }

  Histories registered(String holder, String name, long token, long from, long to) {
    done(
        invoke(0, "register", name, holder, OptionalLong.empty(), from),
        Op.Type.OK,
        holder,
        OptionalLong.of(token),
        "REGISTERED",
        to);
    return this;
  }

  Histories deregistered(String holder, String name, long token, long from, long to) {
    done(
        invoke(0, "deregister", name, holder, OptionalLong.of(token), from),
        Op.Type.OK,
        holder,
        OptionalLong.of(token),
        "DEREGISTERED",
        to);
    return this;
  }

  Histories resolved(String service, String instances, long from, long to) {
    done(
        invoke(0, "resolve", service, null, OptionalLong.empty(), from),
        Op.Type.OK,
        null,
        OptionalLong.empty(),
        instances,
        to);
    return this;
  }

  Histories policy(String namespace, long value, long from, long to) {
    done(
        invoke(0, "set-policy", namespace, null, OptionalLong.empty(), from),
        Op.Type.OK,
        null,
        OptionalLong.empty(),
        Long.toString(value),
        to);
    return this;
  }

  Histories valid(String client, String name, long token, long from, long until) {
    validities.add(new Validity(client, name, token, from, until));
    return this;
  }

  /** A namespace move answered {@code type}: with the epoch it reached when OK (0: none). */
  Histories moved(String namespace, Op.Type type, long epoch, long from, long to) {
    done(
        invoke(400, "move", namespace, null, OptionalLong.empty(), from),
        type,
        null,
        epoch > 0 ? OptionalLong.of(epoch) : OptionalLong.empty(),
        "",
        to);
    return this;
  }

  History build() {
    return History.empty().withOps(ops).withValidities(validities);
  }
}
