package io.leasehold.jepsen.history;

import java.util.Objects;

/**
 * One event as one watcher received it. {@code token} is the lease's token (0 for events without a
 * lease); {@code group} the Raft group whose revision it carries, for a watch across namespaces on
 * a cluster with lease groups (0 otherwise).
 */
public record WatchedEvent(
    String watcher, long revision, String type, String name, long token, int group) {
  public WatchedEvent {
    Objects.requireNonNull(watcher, "watcher");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(name, "name");
  }

  /** An event of a watch within one group. */
  public WatchedEvent(String watcher, long revision, String type, String name, long token) {
    this(watcher, revision, type, name, token, 0);
  }

  /** The event itself, without who saw it: what two watchers must agree on. */
  public String identity() {
    return revision + " " + type + " " + name + " " + token;
  }
}
