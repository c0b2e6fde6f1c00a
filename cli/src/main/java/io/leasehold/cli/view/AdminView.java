package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.BanInfo;
import io.leasehold.client.Policy;
import io.leasehold.client.PolicyInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Policies and bans as JSON and as tables. */
public final class AdminView {
  private AdminView() {}

  /**
   * Every policy field; null where the policy leaves it unset (the built-in value applies).
   * Durations are whole milliseconds, under names ending in {@code Ms}.
   */
  public static Map<String, Object> json(Policy p) {
    return Json.object(
        "minTtlMs", millis(p.minTtl()),
        "maxTtlMs", millis(p.maxTtl()),
        "defaultTtlMs", millis(p.defaultTtl()),
        "heartbeatMs", millis(p.heartbeatInterval()),
        "namePattern", p.namePattern().isEmpty() ? null : p.namePattern(),
        "graceMs", millis(p.gracePeriod()),
        "lockDelayMs", millis(p.lockDelay()),
        "maxLeasesPerHolder",
            p.maxLeasesPerHolder().isPresent() ? p.maxLeasesPerHolder().getAsLong() : null,
        "maxLeasesPerNamespace",
            p.maxLeasesPerNamespace().isPresent() ? p.maxLeasesPerNamespace().getAsLong() : null,
        "historyLimit", p.historyLimit().isPresent() ? p.historyLimit().getAsInt() : null);
  }

  /**
   * A policy; with lease groups ({@code policy get}), also the meta group's version of the global
   * state and each governing lease group's copy: {@code "globalVersion"} and {@code "copies"}, an
   * array of {@code {"group", "globalVersion", "current"}}.
   */
  public static Map<String, Object> json(PolicyInfo p) {
    Map<String, Object> json =
        new java.util.LinkedHashMap<>(
            Json.object(
                "namespace", p.namespace(),
                "inherited", p.inherited(),
                "revision", p.revision(),
                "updatedAt", p.updatedAt().map(Object::toString).orElse(null),
                "policy", p.own().map(AdminView::json).orElse(null),
                "effective", p.effective().map(AdminView::json).orElse(null)));
    if (p.globalVersion() > 0) {
      json.put("globalVersion", p.globalVersion());
      List<Map<String, Object>> copies = new ArrayList<>();
      new java.util.TreeMap<>(p.groupCopies())
          .forEach(
              (group, version) ->
                  copies.add(
                      Json.object(
                          "group", group,
                          "globalVersion", version,
                          "current", version >= p.globalVersion())));
      json.put("copies", copies);
    }
    return json;
  }

  /**
   * With lease groups, the line under {@code policy get}'s table that says which copy of the
   * policies each governing lease group holds: {@code in force in group 2 (copy 812, current)}.
   */
  public static Optional<String> copies(PolicyInfo p) {
    if (p.globalVersion() <= 0) {
      return Optional.empty();
    }
    if (p.groupCopies().isEmpty()) {
      return Optional.of("in force in the meta group (version " + p.globalVersion() + ")");
    }
    List<String> each = new ArrayList<>();
    new java.util.TreeMap<>(p.groupCopies())
        .forEach(
            (group, version) ->
                each.add(
                    "group "
                        + group
                        + " (copy "
                        + version
                        + (version >= p.globalVersion()
                            ? ", current)"
                            : ", behind " + p.globalVersion() + ")")));
    return Optional.of("in force in " + String.join(", ", each));
  }

  /**
   * FIELD / OWN / EFFECTIVE: what the namespace set and what is in force. Durations show as {@code
   * 5s}, so their fields drop the JSON's {@code Ms}: the name says what the value is.
   */
  public static Table detail(PolicyInfo p) {
    Map<String, Object> own = p.own().map(AdminView::json).orElse(Map.of());
    Map<String, Object> effective = p.effective().map(AdminView::json).orElse(Map.of());
    Table t = Table.of("FIELD", "OWN", "EFFECTIVE");
    for (String field : json(Policy.builtIn()).keySet()) {
      t.row(tableName(field), show(field, own.get(field)), show(field, effective.get(field)));
    }
    return t;
  }

  /**
   * The table's name of a JSON field: {@code minTtlMs} shows as {@code minTtl}, with a value like
   * {@code 5s}.
   */
  static String tableName(String jsonField) {
    return isMillis(jsonField)
        ? jsonField.substring(0, jsonField.length() - "Ms".length())
        : jsonField;
  }

  private static boolean isMillis(String jsonField) {
    return jsonField.endsWith("Ms");
  }

  public static Table listTable() {
    return Table.of(
        "NAMESPACE", "MIN TTL", "MAX TTL", "DEFAULT TTL", "LOCK DELAY", "PATTERN", "REVISION");
  }

  public static void row(Table t, PolicyInfo info) {
    Policy p = info.own().orElse(Policy.builtIn());
    t.row(
        info.namespace().isEmpty() ? "(default)" : info.namespace(),
        p.minTtl().map(Human::duration).orElse("-"),
        p.maxTtl().map(Human::duration).orElse("-"),
        p.defaultTtl().map(Human::duration).orElse("-"),
        p.lockDelay().map(Human::duration).orElse("-"),
        Human.orDash(p.namePattern()),
        info.revision());
  }

  private static String show(String field, Object v) {
    if (v == null) {
      return "-";
    }
    return isMillis(field) && v instanceof Long ms
        ? Human.duration(Duration.ofMillis(ms))
        : v.toString();
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
    t.row(
        b.holder(),
        Human.orDash(b.reason()),
        Human.time(b.bannedAt()),
        b.until().map(Human::time).orElse("unban"),
        b.leasesEnded());
  }

  public static List<Map<String, Object>> jsonBans(List<BanInfo> bans) {
    List<Map<String, Object>> out = new ArrayList<>();
    bans.forEach(b -> out.add(json(b)));
    return out;
  }

  private static Long millis(Optional<Duration> d) {
    return d.map(Duration::toMillis).orElse(null);
  }
}
