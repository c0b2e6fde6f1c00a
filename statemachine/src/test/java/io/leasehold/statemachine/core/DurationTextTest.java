package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Duration;
import org.junit.jupiter.api.Test;

/** Durations in messages read like the CLI's: 1.5s, 2m30s, never 1.47173s or PT1M. */
class DurationTextTest {
  static Duration millis(long ms) {
    return Duration.newBuilder()
        .setSeconds(ms / 1000)
        .setNanos((int) (ms % 1000) * 1_000_000)
        .build();
  }

  @Test
  void exactValuesShowToTheMillisecondInTheLargestUnitsThatFit() {
    assertEquals("0ms", DurationText.exact(millis(0)));
    assertEquals("850ms", DurationText.exact(millis(850)));
    assertEquals("2s", DurationText.exact(millis(2000)));
    assertEquals("1.5s", DurationText.exact(millis(1500)));
    assertEquals(
        "1.472s",
        DurationText.exact(Duration.newBuilder().setSeconds(1).setNanos(471_730_000).build()));
    assertEquals("1.005s", DurationText.exact(millis(1005)));
    assertEquals("1m", DurationText.exact(millis(60_000)));
    assertEquals("2m30s", DurationText.exact(millis(150_000)));
    assertEquals("1h", DurationText.exact(millis(3_600_000)));
    assertEquals("1h30m", DurationText.exact(millis(5_400_000)));
    assertEquals("1h0.5s", DurationText.exact(millis(3_600_500)));
    assertEquals("24h", DurationText.exact(millis(86_400_000)));
    assertEquals("8784h", DurationText.exact(millis(366L * 86_400_000)));
  }

  @Test
  void estimatesAreRoundedToWhatAPersonCanUse() {
    assertEquals(
        "1.5s",
        DurationText.approxMicros(1_471_730),
        "the lock-delay that read 'about another 1.47173s'");
    assertEquals("2s", DurationText.approxMicros(1_960_000));
    assertEquals("850ms", DurationText.approxMicros(850_000));
    assertEquals("59.9s", DurationText.approxMicros(59_940_000));
    assertEquals("1m", DurationText.approxMicros(59_960_000));
    assertEquals("2m30s", DurationText.approxMicros(150_400_000));
    assertEquals("1h30m", DurationText.approxMicros(5_410_000_000L));
    assertEquals("2h", DurationText.approxMicros(7_200_000_000L));
  }
}
