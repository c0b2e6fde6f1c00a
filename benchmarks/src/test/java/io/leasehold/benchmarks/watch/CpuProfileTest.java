package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The scheduler's line in a CPU report: read from this process's own threads. */
class CpuProfileTest {
  private static final Pattern WAKE_UPS =
      Pattern.compile("^\\s+(\\d+)/s  waited [\\d.]+ ms a wake-up  (.+)$");

  @Test
  void schedstatIsParsedAsRunWaitAndTimeslices() {
    CpuProfile.SchedStat s =
        CpuProfile.SchedStat.parse("leasehold-watch", "2708470130 8174503262 66872\n");
    assertEquals(
        new CpuProfile.SchedStat("leasehold-watch", 2_708_470_130L, 8_174_503_262L, 66_872L), s);
  }

  @Test
  void aThreadWokenAHundredTimesShowsAtLeastAHundredWakeUpsUnderItsName() throws Exception {
    assumeTrue(
        Files.isReadable(Path.of("/proc/self/task"))
            && Files.list(Path.of("/proc/self/task"))
                .findFirst()
                .map(t -> Files.isReadable(t.resolve("schedstat")))
                .orElse(false),
        "no /proc schedstat on this machine");
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch slept = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread sleeper =
        new Thread(
            () -> {
              try {
                started.await();
                for (int i = 0; i < 100; i++) {
                  TimeUnit.MILLISECONDS.sleep(1);
                }
                slept.countDown();
                // Alive until the second profile: the OS forgets an ended thread's counts.
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "wakeful-tester");
    sleeper.start();
    CpuProfile before = CpuProfile.take();
    started.countDown();
    assertTrue(slept.await(30, TimeUnit.SECONDS), "the sleeper slept a hundred times");
    CpuProfile after = CpuProfile.take();
    release.countDown();
    sleeper.join(30_000);

    List<String> lines = after.since(before, 50);
    String header =
        lines.stream()
            .filter(l -> l.contains("scheduler:"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no scheduler line in " + lines));
    assertTrue(
        header.matches(
            "\\s+scheduler: \\d+ wake-ups \\(timeslices\\) a second; on average [\\d.]+ threads were runnable "
                + "and waiting for a core, [\\d.]+ ms a wake-up; by wake-ups:"),
        header);
    long perSecond =
        lines.stream()
            .map(WAKE_UPS::matcher)
            .filter(Matcher::matches)
            .filter(m -> m.group(2).equals("wakeful-tester"))
            .mapToLong(m -> Long.parseLong(m.group(1)))
            .findFirst()
            .orElseThrow(
                () ->
                    new AssertionError(
                        "the sleeper is among the top groups by wake-ups: " + lines));
    // A hundred sleeps are a hundred wake-ups; the printed rate is rounded to a whole number a
    // second.
    double wall = after.wallSecondsSince(before);
    assertTrue((perSecond + 0.5) * wall >= 100, perSecond + "/s over " + wall + " s: " + lines);
  }
}
