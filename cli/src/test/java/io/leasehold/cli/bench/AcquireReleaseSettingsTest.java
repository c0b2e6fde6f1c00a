package io.leasehold.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class AcquireReleaseSettingsTest {
  private static AcquireRelease.Settings settings(String prefix, int namespaces) {
    return new AcquireRelease.Settings(
        16,
        Duration.ZERO,
        Duration.ofSeconds(1),
        OptionalDouble.empty(),
        prefix,
        false,
        namespaces);
  }

  @Test
  void oneNamespaceKeepsThePrefix() {
    assertEquals("bench/", settings("bench/", 1).prefixOf(7));
  }

  @Test
  void workersSpreadOverNumberedNamespacesKeepingWhatFollowsTheFirstSlash() {
    AcquireRelease.Settings s = settings("bench/run/", 3);
    assertEquals("bench0/run/", s.prefixOf(0));
    assertEquals("bench1/run/", s.prefixOf(4));
    assertEquals("bench2/run/", s.prefixOf(5));
    assertEquals("jobs1/", settings("jobs", 2).prefixOf(1));
  }
}
