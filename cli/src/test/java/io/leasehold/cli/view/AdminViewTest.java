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
}
