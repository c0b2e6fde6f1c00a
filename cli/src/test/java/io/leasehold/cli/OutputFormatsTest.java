package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON writer, the table renderer and the durations people read. */
class OutputFormatsTest {
  @Test
  void jsonKeepsKeyOrderWritesNullsAndEscapes() {
    Map<String, Object> o = Json.object("b", 1L, "a", null, "s", "quote \" slash \\ line\n tab\t bell\u0007", "list", List.of(true, 2.5),
        "empty", Map.of());
    assertEquals("{\"b\":1,\"a\":null,\"s\":\"quote \\\" slash \\\\ line\\n tab\\t bell\\u0007\",\"list\":[true,2.5],\"empty\":{}}",
        Json.compact(o));
    assertEquals("{\n  \"x\": [\n    1\n  ],\n  \"y\": []\n}", Json.pretty(Json.object("x", List.of(1), "y", List.of())));
    assertThrows(IllegalArgumentException.class, () -> Json.object("odd"));
  }

  @Test
  void tablesPadColumnsToTheWidestCellAndRefuseRaggedRows() {
    String t = Table.of("NAME", "N").row("a-long-name", 1).row("b", 22).render();
    assertEquals("NAME          N\na-long-name   1\nb             22\n", t);
    assertThrows(IllegalArgumentException.class, () -> Table.of("A", "B").row("only one"));
  }

  @Test
  void durationsReadShort() {
    assertEquals("850ms", Human.duration(Duration.ofMillis(850)));
    assertEquals("30s", Human.duration(Duration.ofSeconds(30)));
    assertEquals("29.8s", Human.duration(Duration.ofMillis(29_800)));
    assertEquals("4m59s", Human.duration(Duration.ofSeconds(299)));
    assertEquals("5m", Human.duration(Duration.ofMinutes(5)));
    assertEquals("2h05m", Human.duration(Duration.ofMinutes(125)));
    assertEquals("-1.5s", Human.duration(Duration.ofMillis(-1500)));
  }
}
