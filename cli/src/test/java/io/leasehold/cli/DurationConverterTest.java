package io.leasehold.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DurationConverterTest {
  @Test
  void acceptsTheUnitsOperatorsWrite() {
    assertEquals(Duration.ofMillis(500), DurationConverter.parse("500ms"));
    assertEquals(Duration.ofSeconds(30), DurationConverter.parse("30s"));
    assertEquals(Duration.ofMinutes(5), DurationConverter.parse("5m"));
    assertEquals(Duration.ofHours(1), DurationConverter.parse("1h"));
    assertEquals(Duration.ofSeconds(90), DurationConverter.parse("1m30s"));
  }

  @Test
  void aNegativeDurationBreaksTheOptionsRule() {
    assertEquals(
        "must not be negative, got -5s (e.g. 500ms, 30s, 5m, 1h)",
        assertThrows(
                CommandLine.TypeConversionException.class, () -> DurationConverter.parse("-5s"))
            .getMessage());
    DurationConverter positive = new DurationConverter.Positive();
    assertEquals(Duration.ofSeconds(5), positive.convert("5s"));
    assertEquals(
        "must be positive, got -5s (e.g. 500ms, 30s, 5m, 1h)",
        assertThrows(CommandLine.TypeConversionException.class, () -> positive.convert("-5s"))
            .getMessage());
    assertEquals(
        "must be positive, got 0s (e.g. 500ms, 30s, 5m, 1h)",
        assertThrows(CommandLine.TypeConversionException.class, () -> positive.convert("0s"))
            .getMessage());
    assertEquals(Duration.ZERO, DurationConverter.parse("0s"));
    assertTrue(
        assertThrows(
                CommandLine.TypeConversionException.class,
                () -> DurationConverter.parse("99999999999999999999s"))
            .getMessage()
            .contains("too long"));
  }

  @Test
  void rejectsAnythingElseWithAnExample() {
    for (String bad : new String[] {"", "30", "s", "1.5s", "-1s", "30 s", "1d", "5sm"}) {
      var e =
          assertThrows(
              CommandLine.TypeConversionException.class, () -> DurationConverter.parse(bad), bad);
      assertTrue(e.getMessage().contains("500ms, 30s, 5m, 1h"), e.getMessage());
    }
  }
}
