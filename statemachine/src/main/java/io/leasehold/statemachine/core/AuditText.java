package io.leasehold.statemachine.core;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.Policy;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The audit history as reads show it: every action in snake_case (as the API names it, {@code
 * set_policy}), every detail as {@code key=value} pairs (durations like {@code 1.5s}, text with
 * spaces in double quotes).
 *
 * <p>Records are stored as they were applied, which older versions did in other shapes (a refused
 * call named by its RPC, {@code SetPolicy}; a policy as protobuf text, {@code max_ttl { seconds: 60
 * }}). Changing what apply stores would make replicas of different versions store different records
 * for the same entry, so the shape is made here, when a record is read: old records and new ones
 * read alike.
 */
final class AuditText {
  private AuditText() {}

  private static final Pattern KEY_VALUE = Pattern.compile("^[a-z][a-z0-9_]*=");
  private static final Pattern CAMEL = Pattern.compile("(?<=[a-z0-9])(?=[A-Z])");
  private static final Pattern TEXT_DURATION =
      Pattern.compile("(\\w+)\\s*\\{\\s*(?:seconds:\\s*(-?\\d+))?\\s*(?:nanos:\\s*(-?\\d+))?\\s*}");
  private static final Pattern REVOKE_TOKEN =
      Pattern.compile("token (\\d+);\\s*(.*)", Pattern.DOTALL);
  private static final Pattern TEXT_SCALAR = Pattern.compile("(\\w+):\\s*");

  /** The record as a read shows it. */
  static AuditEntry forReading(AuditEntry e) {
    String action = action(e.getAction());
    String detail = detail(action, e.getOutcome(), e.getDetail());
    if (action.equals(e.getAction()) && detail.equals(e.getDetail())) {
      return e;
    }
    return e.toBuilder().setAction(action).setDetail(detail).build();
  }

  /** {@code SetPolicy} as {@code set_policy}; a name in snake_case stays as it is. */
  static String action(String stored) {
    return CAMEL.matcher(stored).replaceAll("_").toLowerCase(Locale.ROOT);
  }

  /**
   * The detail of a record. Apply wrote those of the admin and auth commands (always in the old
   * shapes, below); the node that carried out an action wrote the others (membership, snapshots,
   * refusals), which are left alone once they are key=value pairs.
   */
  static String detail(String action, String outcome, String stored) {
    if (stored.isEmpty()) {
      return stored;
    }
    boolean keyValue = KEY_VALUE.matcher(stored).find();
    if (outcome.startsWith("denied:")) {
      return keyValue ? stored : "method=" + value(stored); // the refused RPC's full name
    }
    return switch (action) {
      case "set_policy" -> policy(stored);
      case "ban" -> "reason=" + value(stored);
      case "revoke" -> revoke(stored);
      case "add_role" -> role(stored);
      case "grant_role", "revoke_role", "bootstrap_admin" ->
          stored.startsWith("role ")
              ? "role=" + value(stored.substring(5))
              : "detail=" + value(stored);
      case "add_member" -> keyValue ? stored : member(stored);
      default -> keyValue ? stored : "detail=" + value(stored);
    };
  }

  /**
   * A policy as it was set: its fields in order, {@code min_ttl=5s max_ttl=1m
   * name_pattern="[a-z]+"}.
   */
  static String policy(String text) {
    try {
      Policy.Builder b = Policy.newBuilder();
      TextFormat.merge(text, b);
      return fields(b.build());
    } catch (TextFormat.ParseException e) {
      // Cut short (records keep 300 characters): rewrite what is there.
      Matcher m = TEXT_DURATION.matcher(text);
      StringBuilder out = new StringBuilder();
      while (m.find()) {
        long seconds = m.group(2) == null ? 0 : Long.parseLong(m.group(2));
        int nanos = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
        m.appendReplacement(
            out,
            Matcher.quoteReplacement(
                m.group(1)
                    + "="
                    + DurationText.exact(
                        Duration.newBuilder().setSeconds(seconds).setNanos(nanos).build())));
      }
      m.appendTail(out);
      return TEXT_SCALAR.matcher(out.toString()).replaceAll("$1=").replaceAll("\\s+", " ").trim();
    }
  }

  private static String fields(Message m) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<FieldDescriptor, Object> f : m.getAllFields().entrySet()) {
      if (b.length() > 0) {
        b.append(' ');
      }
      Object v = f.getValue();
      String shown =
          v instanceof Duration d
              ? DurationText.exact(d)
              : v instanceof String s ? value(s) : String.valueOf(v);
      b.append(f.getKey().getName()).append('=').append(shown);
    }
    return b.toString();
  }

  /** {@code token 5; rotating keys} as {@code token=5 reason="rotating keys"}. */
  private static String revoke(String stored) {
    Matcher m = REVOKE_TOKEN.matcher(stored);
    if (m.matches()) {
      return "token=" + m.group(1) + (m.group(2).isEmpty() ? "" : " reason=" + value(m.group(2)));
    }
    return "reason=" + value(stored);
  }

  /**
   * {@code CLIENT on lock/, svc/} as {@code permission=CLIENT prefixes=lock/,svc/}; every name: no
   * prefixes.
   */
  private static String role(String stored) {
    int on = stored.indexOf(" on ");
    if (on < 0) {
      return "detail=" + value(stored);
    }
    String permission = stored.substring(0, on);
    String names = stored.substring(on + 4);
    return "permission="
        + value(permission)
        + (names.equals("every name") ? "" : " prefixes=" + value(names.replace(", ", ",")));
  }

  /** {@code peer h:1, client h:2} as {@code peer=h:1 client=h:2}. */
  private static String member(String stored) {
    StringBuilder b = new StringBuilder();
    for (String part : stored.split(", ")) {
      int space = part.indexOf(' ');
      if (space <= 0) {
        return "detail=" + value(stored);
      }
      b.append(b.length() == 0 ? "" : " ")
          .append(part, 0, space)
          .append('=')
          .append(value(part.substring(space + 1)));
    }
    return b.toString();
  }

  /**
   * A value as it stands, or in double quotes (with {@code \"} and {@code \\}) when it is empty or
   * holds a space, a quote or {@code =}.
   */
  static String value(String v) {
    boolean plain = !v.isEmpty();
    for (int i = 0; i < v.length() && plain; i++) {
      char c = v.charAt(i);
      plain = c > ' ' && c != '"' && c != '=' && c != '\\';
    }
    return plain ? v : '"' + v.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
