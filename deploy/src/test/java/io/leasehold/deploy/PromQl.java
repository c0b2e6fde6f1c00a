package io.leasehold.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The series selectors of a PromQL expression, for checking that a dashboard or a rule names only
 * series a node exports. A small lexer, not a parser: an identifier is a metric name unless it is
 * followed by '(' (a function or an aggregation written {@code sum(...)}), is a keyword or an
 * aggregation operator (written {@code sum by (l) (...)}; both are case-insensitive), or sits in
 * the label list of by/without/on/ignoring/group_left/group_right. Strings, {@code [...]} ranges
 * (with Grafana's $__rate_interval), numbers and durations (after {@code offset}) are skipped; a
 * selector's {@code {...}} matchers are kept, the equality ones by label.
 */
final class PromQl {
  /** A metric name as written, with the labels its {@code =} matchers require. */
  record Selector(String metric, Map<String, String> equals) {}

  static final Set<String> AGGREGATIONS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "group",
          "stddev",
          "stdvar",
          "count",
          "count_values",
          "bottomk",
          "topk",
          "quantile",
          "limitk",
          "limit_ratio");
  static final Set<String> KEYWORDS =
      Set.of(
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "offset",
          "bool",
          "and",
          "or",
          "unless",
          "atan2",
          "inf",
          "nan",
          "start",
          "end");

  /** Keywords followed by a parenthesized list of label names. */
  static final Set<String> LABEL_LISTS =
      Set.of("by", "without", "on", "ignoring", "group_left", "group_right");

  private PromQl() {}

  static List<Selector> selectors(String expr) {
    List<Selector> found = new ArrayList<>();
    int i = 0;
    int n = expr.length();
    while (i < n) {
      char c = expr.charAt(i);
      if (c == '"' || c == '\'' || c == '`') {
        i = skipString(expr, i);
      } else if (c == '[') {
        i = skipTo(expr, i, ']');
      } else if (c == '#') {
        i = skipTo(expr, i, '\n');
      } else if (c == '{') {
        // Matchers without a metric name ({__name__=~"..."}) would select by regex: not used here.
        throw new IllegalArgumentException("a selector without a metric name in: " + expr);
      } else if (Character.isDigit(c)
          || (c == '.' && i + 1 < n && Character.isDigit(expr.charAt(i + 1)))) {
        i = skipNumber(expr, i);
      } else if (c == '$') {
        // A Grafana variable outside a string or a range ($__interval as a number): its name is no
        // metric.
        i++;
        while (i < n && isIdentifierPart(expr.charAt(i))) {
          i++;
        }
      } else if (isIdentifierStart(c)) {
        int start = i;
        while (i < n && isIdentifierPart(expr.charAt(i))) {
          i++;
        }
        String word = expr.substring(start, i);
        int next = skipSpace(expr, i);
        char after = next < n ? expr.charAt(next) : 0;
        if (LABEL_LISTS.contains(word.toLowerCase(Locale.ROOT))) {
          if (after == '(') {
            i = skipTo(expr, next, ')');
          }
        } else if (KEYWORDS.contains(word.toLowerCase(Locale.ROOT))
            || AGGREGATIONS.contains(word.toLowerCase(Locale.ROOT))
            || after == '(') {
          // a keyword, an operator or a function: not a series
        } else {
          Map<String, String> equals = new LinkedHashMap<>();
          if (after == '{') {
            int close = matchers(expr, next, equals);
            i = close + 1;
          }
          found.add(new Selector(word, equals));
        }
      } else {
        i++;
      }
    }
    return found;
  }

  /**
   * Reads the matchers of {@code {...}} at {@code open} into {@code equals} (the {@code =} ones);
   * returns the index of '}'.
   */
  private static int matchers(String expr, int open, Map<String, String> equals) {
    int i = open + 1;
    while (true) {
      i = skipSpace(expr, i);
      if (expr.charAt(i) == '}') {
        return i;
      }
      if (expr.charAt(i) == ',') {
        i++;
        continue;
      }
      int start = i;
      while (isIdentifierPart(expr.charAt(i))) {
        i++;
      }
      String label = expr.substring(start, i);
      i = skipSpace(expr, i);
      int opStart = i;
      while ("=!~".indexOf(expr.charAt(i)) >= 0) {
        i++;
      }
      String op = expr.substring(opStart, i);
      i = skipSpace(expr, i);
      int end = skipString(expr, i);
      String value = expr.substring(i + 1, end - 1);
      if (label.isEmpty() || op.isEmpty()) {
        throw new IllegalArgumentException("cannot read the matchers at " + open + " of: " + expr);
      }
      if (op.equals("=")) {
        equals.put(label, value);
      }
      i = end;
    }
  }

  private static int skipString(String expr, int i) {
    char quote = expr.charAt(i);
    int j = i + 1;
    while (j < expr.length() && expr.charAt(j) != quote) {
      j += expr.charAt(j) == '\\' && quote != '`' ? 2 : 1;
    }
    if (j >= expr.length()) {
      throw new IllegalArgumentException("an unterminated string in: " + expr);
    }
    return j + 1;
  }

  private static int skipTo(String expr, int i, char close) {
    int j = expr.indexOf(close, i);
    if (j < 0) {
      if (close == '\n') {
        return expr.length();
      }
      throw new IllegalArgumentException("no '" + close + "' after " + i + " in: " + expr);
    }
    return j + 1;
  }

  /** A number (1, 0.25, 1e3, 0x1f) or a duration (5m, 1h30m). */
  private static int skipNumber(String expr, int i) {
    int j = i;
    while (j < expr.length()) {
      char c = expr.charAt(j);
      boolean exponentSign =
          (c == '+' || c == '-')
              && j > i
              && "eE".indexOf(expr.charAt(j - 1)) >= 0
              && !expr.substring(i, j).startsWith("0x");
      if (Character.isLetterOrDigit(c) || c == '.' || exponentSign) {
        j++;
      } else {
        break;
      }
    }
    return j;
  }

  private static int skipSpace(String expr, int i) {
    while (i < expr.length() && Character.isWhitespace(expr.charAt(i))) {
      i++;
    }
    return i;
  }

  private static boolean isIdentifierStart(char c) {
    return Character.isLetter(c) && c < 128 || c == '_' || c == ':';
  }

  private static boolean isIdentifierPart(char c) {
    return isIdentifierStart(c) || Character.isDigit(c);
  }
}
