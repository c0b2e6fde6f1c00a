package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.DeadlineSource;
import io.leasehold.client.SessionDetail;
import io.leasehold.client.SessionInfo;
import java.time.Duration;
import java.util.Map;

/** How sessions are shown: table rows, FIELD/VALUE details and JSON. */
public final class SessionView {
  private SessionView() {}

  public static Map<String, Object> json(SessionInfo s) {
    return Json.object(
        "id", s.id(),
        "holder", s.holder(),
        "ttlMs", s.ttl().toMillis(),
        "state", LeaseView.state(s.serverState()),
        "createdAt", s.createdAt().toString(),
        "renewedAt", s.renewedAt().toString(),
        "expiresAt", s.expiresAt().toString(),
        "remainingMs", s.remaining().map(Duration::toMillis).orElse(null),
        "renewCount", s.renewCount(),
        "heartbeatMs", s.heartbeatInterval().toMillis(),
        "deadline", s.deadline().map(Object::toString).orElse(null),
        "deadlineRemainingMs", s.deadlineRemaining().map(Duration::toMillis).orElse(null),
        "deadlineSource", LeaseView.source(s.deadlineSource()),
        "extensions", s.extensions().stream().map(LeaseView::json).toList());
  }

  public static Map<String, Object> json(SessionDetail d) {
    Map<String, Object> m = json(d.session());
    m.put("leaseCount", d.session().leases());
    m.put("leases", d.leases());
    m.put("more", d.more());
    return m;
  }

  public static Table listTable() {
    return Table.of("ID", "HOLDER", "TTL", "EXPIRES IN", "STATE", "KEEP-ALIVES");
  }

  public static void row(Table t, SessionInfo s) {
    t.row(
        s.id(),
        s.holder(),
        Human.duration(s.ttl()),
        LeaseView.expiresIn(s.deadlineRemaining(), s.deadlineSource(), s.remaining()),
        LeaseView.state(s.serverState()),
        s.renewCount());
  }

  public static Table detail(SessionDetail d) {
    SessionInfo s = d.session();
    return Table.of("FIELD", "VALUE")
        .row("id", s.id())
        .row("holder", s.holder())
        .row("state", LeaseView.state(s.serverState()))
        .row("ttl", Human.duration(s.ttl()))
        .row("created", Human.time(s.createdAt()))
        .row("last kept alive", Human.time(s.renewedAt()))
        .row("expires", Human.time(s.deadline().orElse(s.expiresAt())))
        .row(
            "expires in",
            LeaseView.expiresIn(s.deadlineRemaining(), s.deadlineSource(), s.remaining())
                + (s.deadlineSource() == DeadlineSource.ESTIMATE ? " (estimate)" : ""))
        .row("extended", LeaseView.extendedDetail(s.deadlineSource(), s.extensions()))
        .row("keep-alives", s.renewCount())
        .row("heartbeat", Human.duration(s.heartbeatInterval()))
        .row("leases", s.leases())
        .row(
            "attached",
            d.leases().isEmpty() ? "-" : String.join(", ", d.leases()) + (d.more() ? ", …" : ""));
  }
}
