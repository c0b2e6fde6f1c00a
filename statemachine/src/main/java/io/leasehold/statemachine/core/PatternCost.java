package io.leasehold.statemachine.core;

/**
 * An upper estimate of how large a name pattern becomes once compiled. RE2/J matches in linear time
 * but expands counted repetitions when it compiles, so {@code ((a{1000}){1000}){1000}} —
 * twenty-three characters — would exhaust the heap of every replica applying it. This walks the
 * pattern's syntax (groups, alternation, classes, escapes, repetitions) and multiplies counted
 * repetitions out, saturating instead of overflowing; the policy refuses a pattern above {@link
 * Limits#MAX_PATTERN_COST} before RE2/J ever sees it.
 */
final class PatternCost {
  private static final long SATURATED = 1L << 40;

  private final String p;
  private int i;

  private PatternCost(String pattern) {
    this.p = pattern;
  }

  static long of(String pattern) {
    PatternCost c = new PatternCost(pattern);
    long total = 0;
    // A stray ')' is a syntax error RE2/J reports; the estimate just carries on.
    while (c.i < c.p.length()) {
      total = add(total, c.alternation());
      if (c.i < c.p.length()) {
        c.i++;
      }
    }
    return total;
  }

  private long alternation() {
    long total = sequence();
    while (i < p.length() && p.charAt(i) == '|') {
      i++;
      total = add(total, sequence());
    }
    return total;
  }

  private long sequence() {
    long total = 0;
    while (i < p.length() && p.charAt(i) != '|' && p.charAt(i) != ')') {
      total = add(total, repeats(atom()));
    }
    return total;
  }

  private long atom() {
    char c = p.charAt(i++);
    switch (c) {
      case '(' -> {
        if (i < p.length() && p.charAt(i) == '?') {
          // Flags "(?i)" cost nothing; "(?i:…)", "(?:…)" and "(?P<name>…)" are groups.
          while (i < p.length() && p.charAt(i) != ':' && p.charAt(i) != ')' && p.charAt(i) != '>') {
            i++;
          }
          if (i < p.length() && p.charAt(i) == ')') {
            i++;
            return 0;
          }
          i = Math.min(p.length(), i + 1);
        }
        long inner = alternation();
        if (i < p.length() && p.charAt(i) == ')') {
          i++;
        }
        return add(inner, 1);
      }
      case '[' -> {
        skipClass();
        return 1;
      }
      case '\\' -> {
        skipEscape();
        return 1;
      }
      default -> {
        return 1;
      }
    }
  }

  /** After '[': to the matching ']', which may come first ("[]a]", "[^]a]") and may be escaped. */
  private void skipClass() {
    if (i < p.length() && p.charAt(i) == '^') {
      i++;
    }
    if (i < p.length() && p.charAt(i) == ']') {
      i++;
    }
    while (i < p.length() && p.charAt(i) != ']') {
      if (p.charAt(i) == '\\') {
        i++;
        skipEscape();
      } else if (p.startsWith("[:", i)) {
        int end = p.indexOf(":]", i + 2);
        i = end < 0 ? i + 1 : end + 2;
      } else {
        i++;
      }
    }
    i = Math.min(p.length(), i + 1);
  }

  /** After '\\': one character, or a quoted run \Q…\E, or a class name \p{…}. */
  private void skipEscape() {
    if (i >= p.length()) {
      return;
    }
    char c = p.charAt(i++);
    if (c == 'Q') {
      int end = p.indexOf("\\E", i);
      i = end < 0 ? p.length() : end + 2;
    } else if ((c == 'p' || c == 'P' || c == 'x') && i < p.length() && p.charAt(i) == '{') {
      int end = p.indexOf('}', i);
      i = end < 0 ? p.length() : end + 1;
    }
  }

  /**
   * Applies the repetition operators after an atom: *, +, ? (and lazy forms) and {n}, {n,}, {n,m}.
   */
  private long repeats(long atom) {
    long cost = atom;
    while (i < p.length()) {
      char c = p.charAt(i);
      if (c == '*' || c == '+' || c == '?') {
        i++;
        cost = add(cost, 1);
      } else if (c == '{') {
        long count = countedRepeat();
        if (count < 0) {
          return cost; // a literal '{': the next atom
        }
        cost = add(multiply(cost, Math.max(1, count)), 1);
      } else {
        return cost;
      }
    }
    return cost;
  }

  /**
   * At '{': consumes {n}, {n,} or {n,m} and returns the largest count it expands to; -1 if it is
   * not one.
   */
  private long countedRepeat() {
    int j = i + 1;
    long n = 0;
    int digits = 0;
    while (j < p.length() && Character.isDigit(p.charAt(j)) && digits < 9) {
      n = n * 10 + (p.charAt(j++) - '0');
      digits++;
    }
    if (digits == 0 || j >= p.length()) {
      return -1;
    }
    long max = n;
    if (p.charAt(j) == ',') {
      j++;
      long m = 0;
      int mDigits = 0;
      while (j < p.length() && Character.isDigit(p.charAt(j)) && mDigits < 9) {
        m = m * 10 + (p.charAt(j++) - '0');
        mDigits++;
      }
      // {n,} compiles to n copies and a star.
      max = mDigits == 0 ? n + 1 : Math.max(n, m);
    }
    if (j >= p.length() || p.charAt(j) != '}') {
      return -1;
    }
    i = j + 1;
    if (i < p.length() && p.charAt(i) == '?') {
      i++;
    }
    return max;
  }

  private static long add(long a, long b) {
    return Math.min(SATURATED, a + b);
  }

  private static long multiply(long a, long b) {
    return a > SATURATED / b ? SATURATED : Math.min(SATURATED, a * b);
  }
}
