package io.leasehold.server.ui;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A request's query parameters, each read with its rule; an unknown or repeated parameter is
 * refused.
 */
final class Params {
  static final int MAX_VALUE_LENGTH = 1024;
  private final Map<String, String> values;

  private Params(Map<String, String> values) {
    this.values = values;
  }

  static Params of(URI uri, Set<String> allowed) throws UiException {
    Map<String, String> values = new HashMap<>();
    String query = uri.getRawQuery();
    if (query != null && !query.isEmpty()) {
      for (String pair : query.split("&")) {
        if (pair.isEmpty()) {
          continue;
        }
        int eq = pair.indexOf('=');
        String name = decode(eq < 0 ? pair : pair.substring(0, eq));
        String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
        if (!allowed.contains(name)) {
          throw UiException.badParameter(
              name,
              "not a parameter of this endpoint (it takes "
                  + String.join(", ", allowed.stream().sorted().toList())
                  + ")");
        }
        if (values.put(name, value) != null) {
          throw UiException.badParameter(name, "given more than once");
        }
        if (value.length() > MAX_VALUE_LENGTH) {
          throw UiException.badParameter(name, "at most " + MAX_VALUE_LENGTH + " characters");
        }
      }
    }
    return new Params(values);
  }

  private static String decode(String s) throws UiException {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw UiException.badParameter(s, "not valid URL encoding");
    }
  }

  String text(String name) {
    return values.getOrDefault(name, "");
  }

  String required(String name) throws UiException {
    String v = text(name);
    if (v.isEmpty()) {
      throw UiException.badParameter(name, "required");
    }
    return v;
  }

  int integer(String name, int fallback, int min, int max) throws UiException {
    Optional<String> v = Optional.ofNullable(values.get(name)).filter(s -> !s.isEmpty());
    if (v.isEmpty()) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v.get());
      if (n < min || n > max) {
        throw UiException.badParameter(name, "must be from " + min + " to " + max + ", got " + n);
      }
      return n;
    } catch (NumberFormatException e) {
      throw UiException.badParameter(
          name, "must be a whole number from " + min + " to " + max + ", got '" + v.get() + "'");
    }
  }

  boolean flag(String name) throws UiException {
    String v = text(name);
    return switch (v) {
      case "", "false" -> false;
      case "true" -> true;
      default -> throw UiException.badParameter(name, "must be true or false, got '" + v + "'");
    };
  }
}
