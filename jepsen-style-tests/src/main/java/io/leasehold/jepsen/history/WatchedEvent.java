package io.leasehold.jepsen.history;

import java.util.Objects;

/**
 * One event as one watcher received it. {@code token} is the lease's token (0 for events without a
 * lease).
 */
public record WatchedEvent(String watcher, long revision, String type, String name, long token) {
  public WatchedEvent {
    Objects.requireNonNull(watcher, "watcher");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(name, "name");
  }

  /** The event itself, without who saw it: what two watchers must agree on. */
  public String identity() {
    return revision + " " + type + " " + name + " " + token;
  }
}
