package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON writer, the table renderer and the durations people read. */
class OutputFormatsTest {
  @Test
  void jsonKeepsKeyOrderWritesNullsAndEscapes() {
    Map<String, Object> o =
        Json.object(
            "b",
            1L,
            "a",
            null,
            "s",
            "quote \" slash \\ line\n tab\t bell\u0007",
            "list",
            List.of(true, 2.5),
            "empty",
            Map.of());
    assertEquals(
        "{\"b\":1,\"a\":null,\"s\":\"quote \\\" slash \\\\ line\\n tab\\t bell\\u0007\",\"list\":[true,2.5],\"empty\":{}}",
        Json.compact(o));
    assertEquals(
        "{\n  \"x\": [\n    1\n  ],\n  \"y\": []\n}",
        Json.pretty(Json.object("x", List.of(1), "y", List.of())));
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

  @Test
  void aLiveViewPrintsAFrameOnlyWhenItChangedUnlessOnATerminal() {
    StringWriter table = new StringWriter();
    LiveView people = new LiveView(new PrintWriter(table), OutputFormat.TABLE, false, "title");
    people.show(List.of(), "A\n", 1);
    people.show(List.of(), "A, other indexes\n", 1);
    people.show(List.of(), "B\n", 2);
    assertEquals(
        "A\n\nB\n",
        table.toString(),
        "frames parted by a blank line, a frame with the same key not again");

    StringWriter json = new StringWriter();
    LiveView scripts = new LiveView(new PrintWriter(json), OutputFormat.JSON, true, "title");
    scripts.show(Map.of("n", 1), "A\n", 1);
    scripts.show(Map.of("n", 1), "A\n", 1);
    scripts.show(Map.of("n", 2), "B\n", 2);
    assertEquals(
        "{\"n\":1}\n{\"n\":2}\n",
        json.toString().replace(System.lineSeparator(), "\n"),
        "JSON Lines, never escape codes");

    StringWriter terminal = new StringWriter();
    LiveView live =
        new LiveView(new PrintWriter(terminal), OutputFormat.TABLE, true, "leasehold x --watch");
    live.show(List.of(), "A\n", 1);
    live.show(List.of(), "A again\n", 1);
    String[] frames = terminal.toString().split("\033\\[H\033\\[2J", -1);
    assertEquals(3, frames.length, "each frame clears the screen: " + terminal);
    assertTrue(
        frames[1].startsWith("leasehold x --watch   ") && frames[1].endsWith("\n\nA\n"), frames[1]);
    assertTrue(
        frames[2].endsWith("\n\nA again\n"),
        "on a terminal the same key is redrawn, with fresh values: " + frames[2]);
  }
}
