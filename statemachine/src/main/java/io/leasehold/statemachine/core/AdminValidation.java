package io.leasehold.statemachine.core;

import com.google.protobuf.Timestamp;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.LiftBans;
import io.leasehold.proto.v1.LiftLockDelays;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.UnbanRequest;

/** The input rules of the Admin API, shared (like {@link Validation}) by the API and the core. */
public final class AdminValidation {
  private AdminValidation() {}

  /** The latest time a ban may name: 9999-12-31T23:59:59Z, well inside a long of microseconds. */
  private static final long MAX_TIMESTAMP_SECONDS = 253_402_300_799L;

  /** A namespace: the first segment of lease names, so no '/'; "" means the default policy. */
  public static void namespace(String field, String namespace) {
    Validation.printable(field, namespace, Limits.MAX_NAMESPACE_BYTES);
    if (namespace.indexOf('/') >= 0) {
      throw new InvalidArgumentException(
          field,
          "must be the first segment of lease names, without '/' (\"\" for the default policy), got \""
              + abbreviate(namespace)
              + "\"");
    }
  }

  /** Checks a SetPolicy and returns the policy it sets, resolved and compiled. */
  public static PolicyTerms setPolicy(SetPolicyRequest r) {
    namespace("namespace", r.getNamespace());
    return PolicyTerms.validate("policy", r.getPolicy());
  }

  public static void deletePolicy(DeletePolicyRequest r) {
    namespace("namespace", r.getNamespace());
  }

  public static void getPolicy(GetPolicyRequest r) {
    namespace("namespace", r.getNamespace());
  }

  public static void ban(BanRequest r) {
    Validation.holder("holder", r.getHolder());
    Validation.printable("reason", r.getReason(), Limits.MAX_REASON_BYTES);
    if (r.hasUntil() && r.hasDuration()) {
      throw new InvalidArgumentException("duration", "give until or duration, not both");
    }
    if (r.hasUntil()) {
      timestamp("until", r.getUntil());
    }
    if (r.hasDuration()) {
      Validation.positiveDuration("duration", r.getDuration());
      if (r.getDuration().getSeconds() >= Limits.MAX_BAN_DURATION.getSeconds()) {
        throw new InvalidArgumentException(
            "duration",
            "must be less than "
                + Limits.MAX_BAN_DURATION.toDays()
                + " days (leave until and duration unset for a ban that lasts until Unban)");
      }
    }
  }

  /**
   * When a ban ends, in leader-stamped microseconds (0: never), as of {@code nowMicros}; refuses an
   * end that is not in the future. The API checks with its own clock first; the core checks again
   * with the entry's stamped time, so every replica decides alike.
   */
  public static long banEnd(BanRequest r, long nowMicros) {
    long until =
        r.hasUntil()
            ? Times.micros(r.getUntil())
            : r.hasDuration() ? nowMicros + Times.micros(r.getDuration()) : 0;
    if (until != 0 && until <= nowMicros) {
      throw new InvalidArgumentException(
          "until",
          "must be in the future, got "
              + r.getUntil().getSeconds()
              + "s after the epoch, now is "
              + nowMicros / 1_000_000
              + "s");
    }
    return until;
  }

  public static void unban(UnbanRequest r) {
    Validation.holder("holder", r.getHolder());
  }

  public static void listBans(ListBansRequest r) {
    Validation.printable("start_after", r.getStartAfter(), Limits.MAX_HOLDER_BYTES);
    if (r.getLimit() < 0 || r.getLimit() > Limits.MAX_LIST_LIMIT) {
      throw new InvalidArgumentException(
          "limit",
          "must be between 0 (server maximum) and "
              + Limits.MAX_LIST_LIMIT
              + ", got "
              + r.getLimit());
    }
  }

  public static void revoke(RevokeRequest r) {
    Validation.name("name", r.getName());
    Validation.printable("reason", r.getReason(), Limits.MAX_REASON_BYTES);
    if (r.getToken() < 0) {
      throw new InvalidArgumentException(
          "token",
          "must be a positive fencing token, or 0 for whatever lease holds the name; got "
              + r.getToken());
    }
  }

  public static void history(HistoryRequest r) {
    boolean byName = !r.getName().isEmpty();
    boolean byHolder = !r.getHolder().isEmpty();
    if (byName == byHolder) {
      throw new InvalidArgumentException("name", "give exactly one of name and holder");
    }
    if (byName) {
      Validation.name("name", r.getName());
    } else {
      Validation.holder("holder", r.getHolder());
    }
    if (r.getLimit() < 0 || r.getLimit() > Limits.MAX_HISTORY_LIMIT) {
      throw new InvalidArgumentException(
          "limit",
          "must be between 0 (all that is kept) and "
              + Limits.MAX_HISTORY_LIMIT
              + ", got "
              + r.getLimit());
    }
  }

  public static void liftBans(LiftBans c) {
    if (c.getItemsCount() == 0) {
      throw new InvalidArgumentException("items", "must name at least one ban");
    }
    for (int i = 0; i < c.getItemsCount(); i++) {
      Validation.holder("items[" + i + "].holder", c.getItems(i).getHolder());
    }
  }

  public static void liftLockDelays(LiftLockDelays c) {
    if (c.getItemsCount() == 0) {
      throw new InvalidArgumentException("items", "must name at least one lock-delay");
    }
    for (int i = 0; i < c.getItemsCount(); i++) {
      Validation.name("items[" + i + "].name", c.getItems(i).getName());
    }
  }

  private static void timestamp(String field, Timestamp t) {
    if (t.getNanos() < 0 || t.getNanos() > 999_999_999) {
      throw new InvalidArgumentException(
          field, "nanos must be between 0 and 999,999,999, got " + t.getNanos());
    }
    if (t.getSeconds() <= 0 || t.getSeconds() > MAX_TIMESTAMP_SECONDS) {
      throw new InvalidArgumentException(
          field,
          "must be a time after 1970 and before 10000, got "
              + t.getSeconds()
              + "s after the epoch");
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 64 ? s : s.substring(0, 61) + "...";
  }
}
