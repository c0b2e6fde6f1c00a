package io.leasehold.cli.view;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Policy;
import io.leasehold.client.PolicyInfo;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A policy's field names agree with their values, in the table and in JSON. */
class AdminViewTest {
  private static final Policy OWN =
      Policy.builder()
          .minTtl(Duration.ofSeconds(5))
          .gracePeriod(Duration.ofMillis(500))
          .lockDelay(Duration.ofSeconds(15))
          .historyLimit(50)
          .build();
  private static final PolicyInfo INFO =
      new PolicyInfo("jobs", Optional.of(OWN), Optional.of(OWN), 7, Optional.empty());

  private static List<List<String>> rows() {
    return AdminView.detail(INFO)
        .render()
        .lines()
        .map(l -> List.of(l.trim().split(" {2,}")))
        .toList();
  }

  @Test
  void theTableNamesDurationsWithoutMsAndShowsThemAsDurations() {
    List<List<String>> rows = rows();
    assertEquals(List.of("FIELD", "OWN", "EFFECTIVE"), rows.get(0));
    assertTrue(rows.contains(List.of("minTtl", "5s", "5s")), rows.toString());
    assertTrue(rows.contains(List.of("grace", "500ms", "500ms")), rows.toString());
    assertTrue(rows.contains(List.of("lockDelay", "15s", "15s")), rows.toString());
    assertTrue(rows.contains(List.of("historyLimit", "50", "50")), rows.toString());
    assertFalse(
        rows.stream().anyMatch(r -> r.get(0).endsWith("Ms")),
        "no field named in ms shows a duration: " + rows);
  }

  @Test
  void theJsonNamesDurationsInMsAndGivesMilliseconds() {
    Map<String, Object> json = AdminView.json(OWN);
    assertEquals(5_000L, json.get("minTtlMs"));
    assertEquals(500L, json.get("graceMs"));
    assertEquals(15_000L, json.get("lockDelayMs"));
    assertEquals(null, json.get("maxTtlMs"));
    assertFalse(json.containsKey("minTtl"), json.toString());
  }

  @Test
  void withLeaseGroupsEachGoverningGroupsCopyShowsWhetherItIsCurrent() {
    PolicyInfo copies =
        new PolicyInfo(
            "",
            Optional.empty(),
            Optional.of(OWN),
            0,
            Optional.empty(),
            812,
            Map.of(2, 812L, 1, 790L));
    assertEquals(
        Optional.of("in force in group 1 (copy 790, behind 812), group 2 (copy 812, current)"),
        AdminView.copies(copies));
    assertFalse(copies.copiesCurrent());
    Map<String, Object> json = AdminView.json(copies);
    assertEquals(812L, json.get("globalVersion"));
    assertEquals(
        List.of(
            Map.of("group", 1, "globalVersion", 790L, "current", false),
            Map.of("group", 2, "globalVersion", 812L, "current", true)),
        json.get("copies"));

    PolicyInfo inMeta =
        new PolicyInfo(
            "jobs", Optional.empty(), Optional.of(OWN), 0, Optional.empty(), 812, Map.of());
    assertEquals(Optional.of("in force in the meta group (version 812)"), AdminView.copies(inMeta));
    assertTrue(inMeta.copiesCurrent());

    assertEquals(Optional.empty(), AdminView.copies(INFO), "no line without lease groups");
    assertFalse(AdminView.json(INFO).containsKey("copies"));
  }
}
