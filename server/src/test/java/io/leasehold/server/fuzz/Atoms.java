package io.leasehold.server.fuzz;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Tuple;

/**
 * The values random requests are made of, as jqwik arbitraries: names and words the API knows, and
 * the strings and numbers that break rules (empty, huge, control characters, unpaired surrogates,
 * every boundary the server checks, and jqwik's own edge cases).
 */
final class Atoms {
  private Atoms() {}

  static final List<String> NAMESPACES = List.of("lock", "job", "cache", "team-a", "svc");
  static final List<String> NAMES =
      List.of(
          "lock/a",
          "lock/b",
          "lock/c",
          "lock/d",
          "job/nightly",
          "job/x/y",
          "cache/k1",
          "cache/k2",
          "team-a/r1",
          "team-a/r2",
          "svc/api",
          "svc/api-2");
  static final List<String> HOLDERS = List.of("h1", "h2", "h3", "h4", "worker-7", "web/i1");
  static final List<String> SERVICES = List.of("web", "db", "queue");
  static final List<String> INSTANCES = List.of("i1", "i2", "i3", "i4");
  static final List<String> ADDRESSES =
      List.of("10.0.0.1:80", "host-a:443", "[::1]:7000", "http://x.example/y");
  static final List<String> STATUSES = List.of("SERVING", "DRAINING", "STARTING");

  /**
   * Custom role names, and identities that are none of a variant's (the Auth service's targets).
   */
  static final List<String> ROLES = List.of("r1", "r2");

  static final List<String> BUILT_IN_ROLES = List.of("reader", "client", "admin");
  static final List<String> OUTSIDERS = List.of("i1", "i2");
  static final List<String> REQUEST_IDS =
      List.of("req-1", "req-2", "req-3", "req-4", "req-5", "req-6");

  /** Strings that break one rule or another, and some that only look as if they might. */
  static final List<String> NASTY =
      List.of(
          "",
          " ",
          "/",
          "//",
          "a/",
          "/a",
          "a//b",
          "lock/ ",
          " lock/a",
          "lock/a ",
          "\u0000",
          "lock/\u0000",
          "lock/a\nb",
          "\t",
          "\u007f",
          "\u0085",
          "\uD800",
          "lock/\uDC00x",
          "\uDBFF\uDFFF",
          "\uFFFF",
          "\uFEFF",
          "\u202Elock/a",
          "lock/\u0301",
          "lock/é",
          "lock/\uD83D\uDD25",
          "%00",
          "lock/%2F",
          "../../etc/passwd",
          "lock/..",
          "*",
          ".*",
          "(a+)+$",
          "[",
          "\\",
          "'",
          "\"",
          "SERVING ",
          "serving",
          "0",
          "-1",
          "9223372036854775808",
          "n1",
          "n2",
          "n3",
          " n1",
          "n1 ",
          "a=b",
          "n1=127.0.0.1:1:2",
          "127.0.0.1:0",
          "127.0.0.1:65536",
          ":1",
          "host:",
          "host:-1",
          "host:+80",
          "[::1",
          "::1:80",
          "address",
          "metadata",
          "status",
          "address,status",
          "x".repeat(64),
          "x".repeat(65),
          "x".repeat(129),
          "x".repeat(257),
          "x".repeat(513),
          "lock/" + "x".repeat(507),
          "lock/" + "x".repeat(508),
          "é".repeat(257));

  static final List<Long> BOUNDARIES =
      List.of(
          0L,
          1L,
          -1L,
          2L,
          255L,
          256L,
          257L,
          Long.MAX_VALUE,
          Long.MIN_VALUE,
          (long) Integer.MAX_VALUE,
          (long) Integer.MIN_VALUE,
          Integer.MAX_VALUE + 1L,
          Integer.MIN_VALUE - 1L,
          999_999_999L,
          1_000_000_000L,
          -999_999_999L,
          -1_000_000_000L,
          315_576_000_000L,
          315_576_000_001L,
          253_402_300_799L,
          253_402_300_800L,
          3600L,
          3601L,
          86_400L,
          31_622_400L,
          31_622_401L,
          316_224_000L,
          10_000L,
          10_001L,
          65_535L,
          65_536L);

  static Arbitrary<String> strings() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.of(NAMES)),
        Tuple.of(2, Arbitraries.of(words())),
        Tuple.of(3, Arbitraries.of(NASTY)),
        Tuple.of(2, Arbitraries.strings().all().ofMaxLength(24)),
        Tuple.of(2, Arbitraries.strings().withChars("abc/:._-= 0123456789").ofMaxLength(16)),
        Tuple.of(
            1,
            Arbitraries.strings().withCharRange('\u0000', '\u001f').ofMinLength(1).ofMaxLength(4)),
        // Past every byte bound, in one- and two-byte characters.
        Tuple.of(1, Arbitraries.integers().between(500, 70_000).map(n -> "lock/" + "x".repeat(n))),
        Tuple.of(1, Arbitraries.integers().between(100, 3_000).map("é"::repeat)));
  }

  static Arbitrary<Long> numbers() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.longs()),
        Tuple.of(3, Arbitraries.longs().between(-3, 400)),
        Tuple.of(2, Arbitraries.of(BOUNDARIES)),
        Tuple.of(1, Arbitraries.integers().map(i -> (long) i)));
  }

  private static List<String> words() {
    List<String> all = new java.util.ArrayList<>();
    all.addAll(NAMESPACES);
    all.addAll(HOLDERS);
    all.addAll(SERVICES);
    all.addAll(INSTANCES);
    all.addAll(ADDRESSES);
    all.addAll(STATUSES);
    all.addAll(REQUEST_IDS);
    all.addAll(ROLES);
    all.addAll(BUILT_IN_ROLES);
    all.addAll(OUTSIDERS);
    return List.copyOf(all);
  }
}
