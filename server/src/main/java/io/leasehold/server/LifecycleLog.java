package io.leasehold.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One structured INFO line per lifecycle event, {@code event=<name> node=<id> key=value...}, on the
 * logger {@code io.leasehold.lifecycle}: leader changes, expiries, snapshots, membership changes.
 * Never per renewal or per request. Values are quoted when they hold spaces or quotes.
 */
public final class LifecycleLog {
  private static final Logger LOG = LoggerFactory.getLogger("io.leasehold.lifecycle");

  private final String node;

  public LifecycleLog(String node) {
    this.node = node;
  }

  /** {@code fields} alternate keys and values. */
  public void event(String event, Object... fields) {
    if (!LOG.isInfoEnabled()) {
      return;
    }
    StringBuilder b =
        new StringBuilder(64).append("event=").append(event).append(" node=").append(node);
    for (int i = 0; i + 1 < fields.length; i += 2) {
      b.append(' ').append(fields[i]).append('=').append(value(String.valueOf(fields[i + 1])));
    }
    LOG.info(b.toString());
  }

  static String value(String v) {
    boolean plain = !v.isEmpty();
    for (int i = 0; i < v.length() && plain; i++) {
      char c = v.charAt(i);
      plain = c > ' ' && c != '"' && c != '=' && c < 127;
    }
    if (plain) {
      return v;
    }
    StringBuilder b = new StringBuilder(v.length() + 2).append('"');
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < ' ') {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
