package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.BanInfo;
import io.leasehold.client.PolicyInfo;
import io.leasehold.proto.v1.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Policies and bans as JSON and as tables. */
public final class AdminView {
  private AdminView() {}

  /** Every policy field; null where the policy leaves it unset (the built-in value applies). */
  public static Map<String, Object> json(Policy p) {
    return Json.object(
        "minTtlMs", p.hasMinTtl() ? millis(p.getMinTtl()) : null,
        "maxTtlMs", p.hasMaxTtl() ? millis(p.getMaxTtl()) : null,
        "defaultTtlMs", p.hasDefaultTtl() ? millis(p.getDefaultTtl()) : null,
        "heartbeatMs", p.hasHeartbeatInterval() ? millis(p.getHeartbeatInterval()) : null,
        "namePattern", p.getNamePattern().isEmpty() ? null : p.getNamePattern(),
        "graceMs", p.hasGracePeriod() ? millis(p.getGracePeriod()) : null,
        "lockDelayMs", p.hasLockDelay() ? millis(p.getLockDelay()) : null,
        "maxLeasesPerHolder", p.hasMaxLeasesPerHolder() ? p.getMaxLeasesPerHolder() : null,
        "maxLeasesPerNamespace", p.hasMaxLeasesPerNamespace() ? p.getMaxLeasesPerNamespace() : null,
        "historyLimit", p.hasHistoryLimit() ? p.getHistoryLimit() : null);
  }

  public static Map<String, Object> json(PolicyInfo p) {
    return Json.object(
        "namespace", p.namespace(),
        "inherited", p.inherited(),
        "revision", p.revision(),
        "updatedAt", p.updatedAt().map(Object::toString).orElse(null),
        "policy", p.own().map(AdminView::json).orElse(null),
        "effective", p.effective().map(AdminView::json).orElse(null));
  }

  /** FIELD / OWN / EFFECTIVE: what the namespace set and what is in force. */
  public static Table detail(PolicyInfo p) {
    Map<String, Object> own = p.own().map(AdminView::json).orElse(Map.of());
    Map<String, Object> effective = p.effective().map(AdminView::json).orElse(Map.of());
    Table t = Table.of("FIELD", "OWN", "EFFECTIVE");
    for (String field : json(Policy.getDefaultInstance()).keySet()) {
      t.row(field, show(field, own.get(field)), show(field, effective.get(field)));
    }
    return t;
  }

  public static Table listTable() {
    return Table.of("NAMESPACE", "MIN TTL", "MAX TTL", "DEFAULT TTL", "LOCK DELAY", "PATTERN", "REVISION");
  }

  public static void row(Table t, PolicyInfo info) {
    Policy p = info.own().orElse(Policy.getDefaultInstance());
    t.row(info.namespace().isEmpty() ? "(default)" : info.namespace(),
        p.hasMinTtl() ? Human.duration(duration(p.getMinTtl())) : "-",
        p.hasMaxTtl() ? Human.duration(duration(p.getMaxTtl())) : "-",
        p.hasDefaultTtl() ? Human.duration(duration(p.getDefaultTtl())) : "-",
        p.hasLockDelay() ? Human.duration(duration(p.getLockDelay())) : "-",
        Human.orDash(p.getNamePattern()), info.revision());
  }

  private static String show(String field, Object v) {
    if (v == null) {
      return "-";
    }
    return field.endsWith("Ms") && v instanceof Long ms ? Human.duration(Duration.ofMillis(ms)) : v.toString();
  }

  public static Map<String, Object> json(BanInfo b) {
    return Json.object(
        "holder", b.holder(),
        "reason", b.reason(),
        "bannedAt", b.bannedAt().toString(),
        "until", b.until().map(Object::toString).orElse(null),
        "leasesEnded", b.leasesEnded(),
        "revision", b.revision());
  }

  public static Table banTable() {
    return Table.of("HOLDER", "REASON", "BANNED", "UNTIL", "LEASES ENDED");
  }

  public static void row(Table t, BanInfo b) {
    t.row(b.holder(), Human.orDash(b.reason()), Human.time(b.bannedAt()), b.until().map(Human::time).orElse("unban"), b.leasesEnded());
  }

  public static List<Map<String, Object>> jsonBans(List<BanInfo> bans) {
    List<Map<String, Object>> out = new ArrayList<>();
    bans.forEach(b -> out.add(json(b)));
    return out;
  }

  static long millis(com.google.protobuf.Duration d) {
    return duration(d).toMillis();
  }

  static Duration duration(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }
}
