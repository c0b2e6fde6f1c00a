package io.leasehold.statemachine.core;

import com.google.protobuf.Duration;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.leasehold.proto.v1.Policy;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The policy in force in one namespace, resolved from a stored {@link Policy} (unset fields take
 * the built-in values) and compiled once, when the policy is set or the core loads: the apply loop
 * only compares numbers and runs a compiled linear-time matcher.
 *
 * @param heartbeatMicros the suggested renewal interval; empty: a third of each lease's TTL
 * @param pattern what the rest of a name (after "namespace/") must match as a whole; empty:
 *     anything
 */
public record PolicyTerms(
    long minTtlMicros,
    long maxTtlMicros,
    long defaultTtlMicros,
    OptionalLong heartbeatMicros,
    Optional<Pattern> pattern,
    long graceMicros,
    long lockDelayMicros,
    OptionalLong maxLeasesPerHolder,
    OptionalLong maxLeasesPerNamespace,
    int historyLimit) {

  static final long FLOOR_MICROS = Times.micros(Limits.MIN_TTL);
  static final long BUILT_IN_MAX_MICROS = Times.micros(Limits.MAX_TTL);
  static final long BUILT_IN_DEFAULT_MICROS = Times.micros(Limits.DEFAULT_TTL);
  static final long MAX_DURATION_MICROS = Times.micros(Limits.MAX_POLICY_DURATION);

  /** Where no policy was set: 2 s – 24 h, 10 s by default, a third of the TTL, no limits. */
  public static final PolicyTerms BUILT_IN = resolve(Policy.getDefaultInstance());

  /** Whether {@code rest}, the name after its namespace and slash, is allowed. */
  public boolean allows(String rest) {
    return pattern.isEmpty() || pattern.get().matches(rest);
  }

  public String patternText() {
    return pattern.map(Pattern::pattern).orElse("");
  }

  /**
   * Checks a policy as SetPolicy receives it and resolves it. Every rule names its field under
   * {@code field} (e.g. "policy.min_ttl").
   */
  public static PolicyTerms validate(String field, Policy p) {
    if (p.hasMinTtl()) {
      duration(field + ".min_ttl", p.getMinTtl(), true);
      if (Times.micros(p.getMinTtl()) < FLOOR_MICROS) {
        throw new InvalidArgumentException(
            field + ".min_ttl",
            "must be at least "
                + Limits.MIN_TTL.toSeconds()
                + "s (a lease must outlast a leader election), got "
                + show(p.getMinTtl()));
      }
    }
    if (p.hasMaxTtl()) {
      duration(field + ".max_ttl", p.getMaxTtl(), true);
    }
    if (p.hasDefaultTtl()) {
      duration(field + ".default_ttl", p.getDefaultTtl(), true);
    }
    if (p.hasHeartbeatInterval()) {
      duration(field + ".heartbeat_interval", p.getHeartbeatInterval(), true);
    }
    if (p.hasGracePeriod()) {
      duration(field + ".grace_period", p.getGracePeriod(), false);
    }
    if (p.hasLockDelay()) {
      duration(field + ".lock_delay", p.getLockDelay(), false);
    }
    long min = p.hasMinTtl() ? Times.micros(p.getMinTtl()) : FLOOR_MICROS;
    long max = p.hasMaxTtl() ? Times.micros(p.getMaxTtl()) : BUILT_IN_MAX_MICROS;
    if (min > max) {
      String which = p.hasMinTtl() ? ".min_ttl" : ".max_ttl";
      throw new InvalidArgumentException(
          field + which,
          "min_ttl ("
              + show(Times.duration(min))
              + ") must not exceed max_ttl ("
              + show(Times.duration(max))
              + ")");
    }
    if (p.hasDefaultTtl()) {
      long d = Times.micros(p.getDefaultTtl());
      if (d < min || d > max) {
        throw new InvalidArgumentException(
            field + ".default_ttl",
            "must lie between min_ttl ("
                + show(Times.duration(min))
                + ") and max_ttl ("
                + show(Times.duration(max))
                + "), got "
                + show(p.getDefaultTtl()));
      }
    }
    if (p.hasHeartbeatInterval() && Times.micros(p.getHeartbeatInterval()) >= min) {
      throw new InvalidArgumentException(
          field + ".heartbeat_interval",
          "must be shorter than min_ttl ("
              + show(Times.duration(min))
              + "), or clients renewing at that pace lose their leases; got "
              + show(p.getHeartbeatInterval()));
    }
    if (p.hasMaxLeasesPerHolder() && p.getMaxLeasesPerHolder() <= 0) {
      throw new InvalidArgumentException(
          field + ".max_leases_per_holder",
          "must be positive (leave it unset for no limit), got " + p.getMaxLeasesPerHolder());
    }
    if (p.hasMaxLeasesPerNamespace() && p.getMaxLeasesPerNamespace() <= 0) {
      throw new InvalidArgumentException(
          field + ".max_leases_per_namespace",
          "must be positive (leave it unset for no limit), got " + p.getMaxLeasesPerNamespace());
    }
    if (p.hasHistoryLimit()
        && (p.getHistoryLimit() <= 0 || p.getHistoryLimit() > Limits.MAX_HISTORY_LIMIT)) {
      throw new InvalidArgumentException(
          field + ".history_limit",
          "must be between 1 and " + Limits.MAX_HISTORY_LIMIT + ", got " + p.getHistoryLimit());
    }
    checkPattern(field + ".name_pattern", p.getNamePattern());
    return resolve(p);
  }

  /** Resolves a stored (so already validated) policy: unset fields take the built-in values. */
  static PolicyTerms resolve(Policy p) {
    long min = p.hasMinTtl() ? Times.micros(p.getMinTtl()) : FLOOR_MICROS;
    long max = p.hasMaxTtl() ? Times.micros(p.getMaxTtl()) : BUILT_IN_MAX_MICROS;
    // Unset: 10 s, or the nearer bound when 10 s lies outside them.
    long def =
        p.hasDefaultTtl()
            ? Times.micros(p.getDefaultTtl())
            : Math.min(max, Math.max(min, BUILT_IN_DEFAULT_MICROS));
    return new PolicyTerms(
        min,
        max,
        def,
        p.hasHeartbeatInterval()
            ? OptionalLong.of(Times.micros(p.getHeartbeatInterval()))
            : OptionalLong.empty(),
        p.getNamePattern().isEmpty()
            ? Optional.empty()
            : Optional.of(Pattern.compile(p.getNamePattern())),
        p.hasGracePeriod() ? Times.micros(p.getGracePeriod()) : 0,
        p.hasLockDelay() ? Times.micros(p.getLockDelay()) : 0,
        p.hasMaxLeasesPerHolder()
            ? OptionalLong.of(p.getMaxLeasesPerHolder())
            : OptionalLong.empty(),
        p.hasMaxLeasesPerNamespace()
            ? OptionalLong.of(p.getMaxLeasesPerNamespace())
            : OptionalLong.empty(),
        p.hasHistoryLimit() ? p.getHistoryLimit() : Limits.DEFAULT_HISTORY_LIMIT);
  }

  /**
   * The policy in force, every field filled in (the heartbeat only if the policy fixes one: else it
   * is a third of each lease's TTL). Needs no compiled pattern, so reads can build it cheaply.
   */
  public static Policy effective(Policy p) {
    long min = p.hasMinTtl() ? Times.micros(p.getMinTtl()) : FLOOR_MICROS;
    long max = p.hasMaxTtl() ? Times.micros(p.getMaxTtl()) : BUILT_IN_MAX_MICROS;
    long def =
        p.hasDefaultTtl()
            ? Times.micros(p.getDefaultTtl())
            : Math.min(max, Math.max(min, BUILT_IN_DEFAULT_MICROS));
    Policy.Builder b =
        p.toBuilder()
            .setMinTtl(Times.duration(min))
            .setMaxTtl(Times.duration(max))
            .setDefaultTtl(Times.duration(def))
            .setGracePeriod(p.hasGracePeriod() ? p.getGracePeriod() : Times.duration(0))
            .setLockDelay(p.hasLockDelay() ? p.getLockDelay() : Times.duration(0))
            .setHistoryLimit(
                p.hasHistoryLimit() ? p.getHistoryLimit() : Limits.DEFAULT_HISTORY_LIMIT);
    return b.build();
  }

  private static void checkPattern(String field, String pattern) {
    if (pattern.isEmpty()) {
      return;
    }
    if (pattern.length() > Limits.MAX_PATTERN_CHARS) {
      throw new InvalidArgumentException(
          field,
          "must be at most " + Limits.MAX_PATTERN_CHARS + " characters, got " + pattern.length());
    }
    Validation.printable(field, pattern, Limits.MAX_PATTERN_CHARS * 4);
    long cost = PatternCost.of(pattern);
    if (cost > Limits.MAX_PATTERN_COST) {
      throw new InvalidArgumentException(
          field,
          "expands to about "
              + (cost >= 1L << 40 ? "more than 10^12" : Long.toString(cost))
              + " elements once its repetitions are counted out; at most "
              + Limits.MAX_PATTERN_COST
              + " are allowed");
    }
    try {
      Pattern.compile(pattern);
    } catch (PatternSyntaxException e) {
      throw new InvalidArgumentException(
          field, "is not a valid RE2 regular expression: " + e.getMessage());
    }
  }

  private static void duration(String field, Duration d, boolean positive) {
    if (positive) {
      Validation.positiveDuration(field, d);
    } else {
      Validation.nonNegativeDuration(field, d);
    }
    if (d.getSeconds() > Limits.MAX_POLICY_DURATION.getSeconds()
        || (d.getSeconds() == Limits.MAX_POLICY_DURATION.getSeconds() && d.getNanos() > 0)) {
      throw new InvalidArgumentException(
          field,
          "must be at most " + Limits.MAX_POLICY_DURATION.toDays() + " days, got " + show(d));
    }
  }

  static String show(Duration d) {
    return DurationText.exact(d);
  }
}
