package io.leasehold.jepsen.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.run.Schedules;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ScheduleTest {
  final List<Nemesis> all =
      List.of(
          new KillNemesis(true),
          new PauseNemesis(false),
          new PartitionNemesis(PartitionNemesis.Mode.BRIDGE, Optional.of("no namespaces here")),
          new MembershipNemesis(),
          new PeerDelayNemesis());

  @Test
  void aRandomScheduleFillsItsDurationWithSupportedNemesesOnly() {
    Schedule s = Schedule.random(all, Duration.ofMinutes(5), Duration.ofSeconds(5), new Random(7));
    long total =
        s.steps().stream().mapToLong(st -> st.fault().toMillis() + st.quiet().toMillis()).sum();
    assertTrue(total >= Duration.ofMinutes(5).toMillis(), "covers the duration: " + total);
    assertFalse(
        s.steps().stream().anyMatch(st -> st.nemesis().unsupportedReason().isPresent()),
        "no unsupported nemesis is scheduled");
    assertTrue(
        s.steps().stream()
            .filter(st -> st.nemesis().kind().equals("pause"))
            .allMatch(st -> st.fault().compareTo(Duration.ofSeconds(5)) >= 0),
        "pauses outlast the election timeout and the TTL");
  }

  @Test
  void theShortScheduleTakesOneVariantOfEachKindAndLeavesSkippingToTheRun() {
    Schedule s = Schedules.shortSchedule(all);
    assertEquals(
        List.of("kill-leader", "partition-bridge", "membership", "peer-delay-leader-follower"),
        s.steps().stream().map(st -> st.nemesis().name()).toList());
    assertTrue(
        s.steps().stream()
            .filter(st -> st.nemesis().kind().equals("peer-delay"))
            .allMatch(st -> st.fault().compareTo(Duration.ofSeconds(6)) >= 0),
        "held appends have time to time out and be resent");
  }

  @Test
  void theMutualTlsScheduleKillsIsolatesAndPausesTheLeaderOnce() {
    List<Nemesis> every =
        List.of(
            new KillNemesis(true),
            new KillNemesis(false),
            new PauseNemesis(true),
            new PauseNemesis(false),
            new PartitionNemesis(PartitionNemesis.Mode.ISOLATE_LEADER, Optional.empty()),
            new PartitionNemesis(PartitionNemesis.Mode.MAJORITY_MINORITY, Optional.empty()),
            new MembershipNemesis());
    Schedule s = Schedules.mutualTlsSchedule(every);
    assertEquals(
        List.of("kill-leader", "pause-leader", "partition-isolate-leader"),
        s.steps().stream().map(st -> st.nemesis().name()).toList());
    long total =
        s.steps().stream().mapToLong(st -> st.fault().toMillis() + st.quiet().toMillis()).sum();
    assertTrue(
        total <= Duration.ofSeconds(30).toMillis(),
        "short enough for every verify: " + total + " ms of faults and quiet");
  }

  @Test
  void durationsParse() {
    assertEquals(Duration.ofMinutes(30), Schedules.parse("30m"));
    assertEquals(Duration.ofSeconds(90), Schedules.parse("90s"));
    assertEquals(Duration.ofHours(2), Schedules.parse("2h"));
    assertEquals(Duration.ofMinutes(5), Schedules.parse("PT5M"));
  }
}
