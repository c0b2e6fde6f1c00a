package io.leasehold.cli;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The CLI's JSON: objects keep their keys in insertion order, so the output of a command has a
 * stable shape (documented in docs/cli.md). Values are strings, numbers, booleans, null, maps and
 * collections.
 */
public final class Json {
  private Json() {}

  /** An ordered object: {@code Json.object("name", n, "token", t)}. */
  public static Map<String, Object> object(Object... keysAndValues) {
    if (keysAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("keys and values must pair up");
    }
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      m.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return m;
  }

  /** Compact, on one line (JSON Lines). */
  public static String compact(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value, -1, 0);
    return b.toString();
  }

  /** Indented by two spaces. */
  public static String pretty(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value, 2, 0);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v, int indent, int depth) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String s) {
      string(b, s);
    } else if (v instanceof Number || v instanceof Boolean) {
      b.append(v);
    } else if (v instanceof Enum<?> e) {
      string(b, e.name());
    } else if (v instanceof Map<?, ?> m) {
      if (m.isEmpty()) {
        b.append("{}");
        return;
      }
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.append(first ? "" : ",");
        first = false;
        newline(b, indent, depth + 1);
        string(b, String.valueOf(e.getKey()));
        b.append(indent < 0 ? ":" : ": ");
        write(b, e.getValue(), indent, depth + 1);
      }
      newline(b, indent, depth);
      b.append('}');
    } else if (v instanceof Collection<?> c) {
      if (c.isEmpty()) {
        b.append("[]");
        return;
      }
      b.append('[');
      boolean first = true;
      for (Object o : c) {
        b.append(first ? "" : ",");
        first = false;
        newline(b, indent, depth + 1);
        write(b, o, indent, depth + 1);
      }
      newline(b, indent, depth);
      b.append(']');
    } else {
      string(b, v.toString());
    }
  }

  private static void newline(StringBuilder b, int indent, int depth) {
    if (indent >= 0) {
      b.append('\n').append(" ".repeat(indent * depth));
    }
  }

  private static void string(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
