package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.EndReason;
import io.leasehold.client.EndedLease;
import io.leasehold.client.EventType;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.Renewal;
import io.leasehold.client.ServerLeaseState;
import io.leasehold.client.WatchEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Leases, ended leases and events as JSON and as table rows. Durations in JSON are milliseconds ({@code …Ms}). */
public final class LeaseView {
  private LeaseView() {}

  public static final List<String> LIST_COLUMNS = List.of("NAME", "HOLDER", "TOKEN", "TTL", "EXPIRES IN", "STATE");
  public static final List<String> LIST_WIDE_COLUMNS = List.of("ADDRESS", "STATUS", "ACQUIRED", "RENEWED", "RENEWS", "METADATA");

  public static Map<String, Object> json(LeaseInfo l) {
    return Json.object(
        "name", l.name(),
        "holder", l.holder(),
        "token", l.token(),
        "ttlMs", l.ttl().toMillis(),
        "state", state(l),
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
        "session", l.session() == 0 ? null : l.session());
  }

  /** ACTIVE, EXPIRING or STALE as the serving node judged it; UNKNOWN where no node judged (events). */
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
    List<String> cells = new ArrayList<>(List.of(l.name(), l.holder(), "" + l.token(), Human.duration(l.ttl()),
        Human.duration(l.remaining()), state(l)));
    if (wide) {
      cells.addAll(List.of(Human.orDash(l.attributes().address()), Human.orDash(l.attributes().status()),
          Human.time(l.acquiredAt()), Human.time(l.renewedAt()), "" + l.renewCount(), Human.metadata(l.attributes().metadata())));
    }
    t.row(cells);
  }

  /** One lease as FIELD/VALUE lines. */
  public static Table detail(LeaseInfo l) {
    return Table.of("FIELD", "VALUE")
        .row("name", l.name())
        .row("holder", l.holder())
        .row("token", l.token())
        .row("state", state(l))
        .row("ttl", Human.duration(l.ttl()))
        .row("acquired", Human.time(l.acquiredAt()))
        .row("last renewed", Human.time(l.renewedAt()))
        .row("expires", Human.time(l.expiresAt()))
        .row("expires in", Human.duration(l.remaining()))
        .row("renew count", l.renewCount())
        .row("heartbeat", Human.duration(l.heartbeatInterval()))
        .row("session", l.session() == 0 ? "-" : l.session() + " (its TTL and keep-alives are the session's)")
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
        "heartbeatMs", r.heartbeatInterval().map(Duration::toMillis).orElse(null));
  }

  public static Table detail(Renewal r) {
    return Table.of("FIELD", "VALUE")
        .row("name", r.name())
        .row("token", r.token())
        .row("ttl", Human.duration(r.ttl()))
        .row("expires", Human.time(r.expiresAt()))
        .row("heartbeat", Human.duration(r.heartbeatInterval()));
  }

  /** {@code renewed lock/x token=5 ttl=30s expires=2026-11-22T09:27:52Z}. */
  public static String line(Renewal r) {
    return "renewed " + r.name() + " token=" + r.token() + " ttl=" + Human.duration(r.ttl()) + " expires=" + Human.time(r.expiresAt());
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
    List<String> base = List.of("NAME", "HOLDER", "TOKEN", "ACQUIRED", "ENDED", "REASON", "MESSAGE");
    return wide ? Table.of(concat(base, List.of("TTL", "HELD", "RENEWS", "REVISION"))) : Table.of(base);
  }

  public static void row(Table t, EndedLease e, boolean wide) {
    List<String> cells = new ArrayList<>(List.of(e.name(), e.holder(), "" + e.token(), Human.time(e.acquiredAt()),
        Human.time(e.endedAt()), reason(e.reason()), Human.orDash(e.message())));
    if (wide) {
      cells.addAll(List.of(Human.duration(e.ttl()), Human.duration(Duration.between(e.acquiredAt(), e.endedAt())),
          "" + e.renewCount(), "" + e.revision()));
    }
    t.row(cells);
  }

  public static Map<String, Object> json(WatchEvent e) {
    return Json.object(
        "revision", e.revision(),
        "type", type(e.type()),
        "name", e.name(),
        "time", e.time().toString(),
        "reason", e.reason().map(LeaseView::reason).orElse(null),
        "message", e.message().orElse(null),
        "lease", e.lease().map(LeaseView::json).orElse(null));
  }

  /** The type's name; a type newer than the SDK shows as UNRECOGNIZED, as it always has. */
  public static String type(EventType t) {
    return t == EventType.UNKNOWN ? "UNRECOGNIZED" : t.name();
  }

  /** {@code 12 ACQUIRED lock/x holder=runner-1 token=12 ttl=30s}. */
  public static String line(WatchEvent e) {
    StringBuilder b = new StringBuilder().append(e.revision()).append(' ').append(type(e.type())).append(' ').append(e.name());
    e.lease().ifPresent(l -> {
      b.append(" holder=").append(l.holder()).append(" token=").append(l.token()).append(" ttl=").append(Human.duration(l.ttl()));
      l.attributes().address().ifPresent(a -> b.append(" address=").append(a));
    });
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
