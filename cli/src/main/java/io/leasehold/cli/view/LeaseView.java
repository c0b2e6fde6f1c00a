package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.DeadlineExtension;
import io.leasehold.client.DeadlineSource;
import io.leasehold.client.EndReason;
import io.leasehold.client.EndedLease;
import io.leasehold.client.EventType;
import io.leasehold.client.LeaseAttributes;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.Renewal;
import io.leasehold.client.ServerLeaseState;
import io.leasehold.client.WatchEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Leases, ended leases and events as JSON and as table rows. Durations in JSON are milliseconds
 * ({@code …Ms}).
 */
public final class LeaseView {
  private LeaseView() {}

  public static final List<String> LIST_COLUMNS =
      List.of("NAME", "HOLDER", "TOKEN", "TTL", "EXPIRES IN", "STATE");
  public static final List<String> LIST_WIDE_COLUMNS =
      List.of("ADDRESS", "STATUS", "ACQUIRED", "RENEWED", "RENEWS", "METADATA", "EXTENDED");

  public static Map<String, Object> json(LeaseInfo l) {
    return json(l, state(l));
  }

  /** As {@link #json(LeaseInfo)}, in {@code state} (see {@link #detail(LeaseInfo, String)}). */
  public static Map<String, Object> json(LeaseInfo l, String state) {
    return Json.object(
        "name", l.name(),
        "holder", l.holder(),
        "token", l.token(),
        "ttlMs", l.ttl().toMillis(),
        "state", state,
        "acquiredAt", l.acquiredAt().toString(),
        "renewedAt", l.renewedAt().toString(),
        "expiresAt", l.expiresAt().toString(),
        "remainingMs", l.remaining().map(Duration::toMillis).orElse(null),
        "renewCount", l.renewCount(),
        "heartbeatMs", l.heartbeatInterval().map(Duration::toMillis).orElse(null),
        "graceMs", l.gracePeriod().map(Duration::toMillis).orElse(null),
        "address", l.attributes().address().orElse(null),
        "status", l.attributes().status().orElse(null),
        "metadata", new TreeMap<>(l.attributes().metadata()),
        "modRevision", l.modRevision(),
        "session", l.session() == 0 ? null : l.session(),
        "deadline", l.deadline().map(Object::toString).orElse(null),
        "deadlineRemainingMs", l.deadlineRemaining().map(Duration::toMillis).orElse(null),
        "deadlineSource", source(l.deadlineSource()),
        "extensions", l.extensions().stream().map(LeaseView::json).toList());
  }

  /**
   * {@code leader}, {@code estimate}, or null where there is no deadline (replies, events, older
   * servers).
   */
  public static String source(DeadlineSource s) {
    return switch (s) {
      case LEADER -> "leader";
      case ESTIMATE -> "estimate";
      default -> null;
    };
  }

  public static Map<String, Object> json(DeadlineExtension e) {
    return Json.object(
        "reason", reason(e.reason()),
        "at", e.at().toString(),
        "byMs", e.by().toMillis(),
        "term", e.term());
  }

  private static String reason(DeadlineExtension.Reason r) {
    return switch (r) {
      case LEADER_CHANGE -> "leader change";
      case STALL -> "stall";
      default -> "unrecognized";
    };
  }

  /**
   * Time left until the cluster expires the lease: the leader's deadline, or {@code ~} before an
   * estimate the serving node made without the leader (the leader may have extended it); the
   * stamped {@code expiresAt} only from servers that predate deadlines.
   */
  public static String expiresIn(LeaseInfo l) {
    return expiresIn(l.deadlineRemaining(), l.deadlineSource(), l.remaining());
  }

  /** As {@link #expiresIn(LeaseInfo)}, of any lease-like thing (sessions too). */
  public static String expiresIn(
      Optional<Duration> deadlineRemaining, DeadlineSource source, Optional<Duration> remaining) {
    if (deadlineRemaining.isPresent()) {
      return (source == DeadlineSource.ESTIMATE ? "~" : "")
          + Human.duration(deadlineRemaining.get());
    }
    return Human.duration(remaining);
  }

  /**
   * Why the deadline is later than the last renewal plus TTL (and grace): {@code +19.7s leader
   * change (term 5)}, several joined by {@code ", "}; {@code -} when it is not, {@code ?} when only
   * the leader could say and the serving node had no answer from it.
   */
  public static String extendedShort(LeaseInfo l) {
    if (l.deadlineSource() == DeadlineSource.ESTIMATE) {
      return "?";
    }
    if (!l.extended()) {
      return "-";
    }
    return l.extensions().stream()
        .map(
            e ->
                "+"
                    + Human.duration(e.by())
                    + " "
                    + reason(e.reason())
                    + (e.reason() == DeadlineExtension.Reason.LEADER_CHANGE
                        ? " (term " + e.term() + ")"
                        : ""))
        .collect(Collectors.joining(", "));
  }

  /** The {@code extended} row of {@link #detail}. */
  static String extendedDetail(LeaseInfo l) {
    return extendedDetail(l.deadlineSource(), l.extensions());
  }

  /** As {@link #extendedDetail(LeaseInfo)}, of any lease-like thing (sessions too). */
  public static String extendedDetail(DeadlineSource source, List<DeadlineExtension> extensions) {
    return switch (source) {
      case ESTIMATE ->
          "unknown: the node that answered could not ask the leader, which may have extended it";
      case LEADER ->
          extensions.isEmpty()
              ? "no"
              : extensions.stream()
                  .map(
                      e ->
                          "by "
                              + Human.duration(e.by())
                              + " at "
                              + Human.time(e.at())
                              + ": "
                              + (e.reason() == DeadlineExtension.Reason.LEADER_CHANGE
                                  ? "leader change (term " + e.term() + "), a full TTL from then"
                                  : e.reason() == DeadlineExtension.Reason.STALL
                                      ? "the leader stalled, every deadline moved out by the stall"
                                      : "unrecognized reason"))
                  .collect(Collectors.joining("; "));
      default -> "-";
    };
  }

  /**
   * ACTIVE, EXPIRING or STALE as the serving node judged it; UNKNOWN where no node judged (events).
   */
  public static String state(LeaseInfo l) {
    return state(l.serverState());
  }

  public static String state(ServerLeaseState s) {
    return switch (s) {
      case ACTIVE -> "ACTIVE";
      case STALE -> "STALE";
      case EXPIRING -> "EXPIRING";
      default -> "UNKNOWN";
    };
  }

  public static Table listTable(boolean wide) {
    return wide ? Table.of(concat(LIST_COLUMNS, LIST_WIDE_COLUMNS)) : Table.of(LIST_COLUMNS);
  }

  public static void row(Table t, LeaseInfo l, boolean wide) {
    List<String> cells =
        new ArrayList<>(
            List.of(
                l.name(),
                l.holder(),
                "" + l.token(),
                Human.duration(l.ttl()),
                expiresIn(l),
                state(l)));
    if (wide) {
      cells.addAll(
          List.of(
              Human.orDash(l.attributes().address()),
              Human.orDash(l.attributes().status()),
              Human.time(l.acquiredAt()),
              Human.time(l.renewedAt()),
              "" + l.renewCount(),
              Human.metadata(l.attributes().metadata()),
              extendedShort(l)));
    }
    t.row(cells);
  }

  /** One lease as FIELD/VALUE lines, as a read judged it. */
  public static Table detail(LeaseInfo l) {
    return detail(l, state(l));
  }

  /**
   * One lease as FIELD/VALUE lines, in {@code state}: what a command knows of a lease no node
   * judged (one it just revoked is REVOKED). {@code expires} is when the cluster expires the lease
   * ({@link #expiresIn}); {@code extended} says whether and why the leader moved that past the last
   * renewal plus TTL.
   */
  public static Table detail(LeaseInfo l, String state) {
    Table t =
        Table.of("FIELD", "VALUE")
            .row("name", l.name())
            .row("holder", l.holder())
            .row("token", l.token())
            .row("state", state)
            .row("ttl", Human.duration(l.ttl()));
    l.gracePeriod().ifPresent(g -> t.row("grace", Human.duration(g)));
    return t.row("acquired", Human.time(l.acquiredAt()))
        .row("last renewed", Human.time(l.renewedAt()))
        .row("expires", Human.time(l.deadline().orElse(l.expiresAt())))
        .row(
            "expires in",
            expiresIn(l) + (l.deadlineSource() == DeadlineSource.ESTIMATE ? " (estimate)" : ""))
        .row("extended", extendedDetail(l))
        .row("renew count", l.renewCount())
        .row("heartbeat", Human.duration(l.heartbeatInterval()))
        .row(
            "session",
            l.session() == 0 ? "-" : l.session() + " (its TTL and keep-alives are the session's)")
        .row("address", Human.orDash(l.attributes().address()))
        .row("status", Human.orDash(l.attributes().status()))
        .row("metadata", Human.metadata(l.attributes().metadata()));
  }

  /** A renewal by token ({@code lease renew}, each line of {@code lease keep-alive}). */
  public static Map<String, Object> json(Renewal r) {
    return Json.object(
        "name", r.name(),
        "token", r.token(),
        "ttlMs", r.ttl().toMillis(),
        "expiresAt", r.expiresAt().toString(),
        "deadline", r.deadline().toString(),
        "heartbeatMs", r.heartbeatInterval().map(Duration::toMillis).orElse(null));
  }

  public static Table detail(Renewal r) {
    return Table.of("FIELD", "VALUE")
        .row("name", r.name())
        .row("token", r.token())
        .row("ttl", Human.duration(r.ttl()))
        .row("expires", Human.time(r.deadline()))
        .row("heartbeat", Human.duration(r.heartbeatInterval()));
  }

  /**
   * {@code renewed lock/x token=5 ttl=30s expires=2026-11-22T09:27:52Z}. As for a read, {@code
   * expires} is the deadline the leader acts on (the renewal's end plus any grace).
   */
  public static String line(Renewal r) {
    return "renewed "
        + r.name()
        + " token="
        + r.token()
        + " ttl="
        + Human.duration(r.ttl())
        + " expires="
        + Human.time(r.deadline());
  }

  /** The reason's name; a reason newer than the SDK shows as UNRECOGNIZED, as it always has. */
  public static String reason(EndReason r) {
    return r == EndReason.UNKNOWN ? "UNRECOGNIZED" : r.name();
  }

  public static Map<String, Object> json(EndedLease e) {
    return Json.object(
        "name", e.name(),
        "holder", e.holder(),
        "token", e.token(),
        "ttlMs", e.ttl().toMillis(),
        "acquiredAt", e.acquiredAt().toString(),
        "endedAt", e.endedAt().toString(),
        "heldMs", Duration.between(e.acquiredAt(), e.endedAt()).toMillis(),
        "renewCount", e.renewCount(),
        "reason", reason(e.reason()),
        "message", e.message().orElse(null),
        "revision", e.revision(),
        "session", e.session() == 0 ? null : e.session());
  }

  public static Table historyTable(boolean wide) {
    List<String> base =
        List.of("NAME", "HOLDER", "TOKEN", "ACQUIRED", "ENDED", "REASON", "MESSAGE");
    return wide
        ? Table.of(concat(base, List.of("TTL", "HELD", "RENEWS", "REVISION")))
        : Table.of(base);
  }

  public static void row(Table t, EndedLease e, boolean wide) {
    List<String> cells =
        new ArrayList<>(
            List.of(
                e.name(),
                e.holder(),
                "" + e.token(),
                Human.time(e.acquiredAt()),
                Human.time(e.endedAt()),
                reason(e.reason()),
                Human.orDash(e.message())));
    if (wide) {
      cells.addAll(
          List.of(
              Human.duration(e.ttl()),
              Human.duration(Duration.between(e.acquiredAt(), e.endedAt())),
              "" + e.renewCount(),
              "" + e.revision()));
    }
    t.row(cells);
  }

  public static Map<String, Object> json(WatchEvent e) {
    Map<String, Object> json = watchEvent(e);
    if (e.group() != 0) {
      // On a cluster with lease groups: whose revision it is (a watch's --from-group).
      json.put("group", e.group());
    }
    return json;
  }

  private static Map<String, Object> watchEvent(WatchEvent e) {
    return Json.object(
        "revision", e.revision(),
        "type", type(e.type()),
        "name", e.name(),
        "time", e.time().toString(),
        "reason", e.reason().map(LeaseView::reason).orElse(null),
        "message", e.message().orElse(null),
        "lease", e.lease().map(LeaseView::json).orElse(null),
        "previous", e.previousAttributes().map(LeaseView::attributes).orElse(null));
  }

  /** An update's attributes before it, as a lease's JSON has them. */
  private static Map<String, Object> attributes(LeaseAttributes a) {
    return Json.object(
        "address", a.address().orElse(null),
        "status", a.status().orElse(null),
        "metadata", new TreeMap<>(a.metadata()));
  }

  /** The type's name; a type newer than the SDK shows as UNRECOGNIZED, as it always has. */
  public static String type(EventType t) {
    return t == EventType.UNKNOWN ? "UNRECOGNIZED" : t.name();
  }

  /** {@code 12 ACQUIRED lock/x holder=runner-1 token=12 ttl=30s}. */
  public static String line(WatchEvent e) {
    StringBuilder b =
        new StringBuilder()
            .append(e.revision())
            .append(' ')
            .append(type(e.type()))
            .append(' ')
            .append(e.name());
    e.lease()
        .ifPresent(
            l -> {
              b.append(" holder=")
                  .append(l.holder())
                  .append(" token=")
                  .append(l.token())
                  .append(" ttl=")
                  .append(Human.duration(l.ttl()));
              l.attributes().address().ifPresent(a -> b.append(" address=").append(a));
              l.attributes().status().ifPresent(st -> b.append(" status=").append(st));
            });
    e.previousAttributes()
        .flatMap(LeaseAttributes::status)
        .filter(was -> !e.lease().flatMap(l -> l.attributes().status()).equals(Optional.of(was)))
        .ifPresent(was -> b.append(" was=").append(was));
    e.reason().ifPresent(r -> b.append(" reason=").append(reason(r)));
    e.message().ifPresent(m -> b.append(" message=\"").append(m).append('"'));
    return b.toString();
  }

  static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
