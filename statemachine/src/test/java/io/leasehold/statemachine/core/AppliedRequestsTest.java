package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which applied request ids an entry forgets: only past both the count floor and the age, or past
 * the cap.
 */
class AppliedRequestsTest {
  static final long T0 = 1_700_000_000_000_000L;

  static AppliedRequests filled(int n, long atMicros) {
    AppliedRequests r = new AppliedRequests();
    for (int i = 0; i < n; i++) {
      r.add("id-" + i, i + 1, atMicros);
    }
    return r;
  }

  @Test
  void recentIdsAreKeptWhateverTheirNumberUpToTheCap() {
    AppliedRequests r = filled(AppliedRequests.MIN_KEPT + 50, T0);
    assertEquals(
        List.of(), r.due(T0 + AppliedRequests.RETAIN_MICROS), "not older than the retention yet");
  }

  @Test
  void oldIdsGoOldestFirstButNeverBelowTheCountFloor() {
    AppliedRequests r = filled(AppliedRequests.MIN_KEPT + 2, T0);
    long later = T0 + AppliedRequests.RETAIN_MICROS + 1;
    assertEquals(
        List.of("id-0", "id-1"), r.due(later), "only down to the floor, even though all are old");
    r.remove("id-0");
    r.remove("id-1");
    assertEquals(
        List.of(),
        r.due(later + AppliedRequests.RETAIN_MICROS * 100),
        "a leader clock far ahead cannot empty it: the newest ids stay");
  }

  @Test
  void atMostAFewGoPerEntry() {
    AppliedRequests r = filled(AppliedRequests.MIN_KEPT + 100, T0);
    List<String> due = r.due(T0 + AppliedRequests.RETAIN_MICROS + 1);
    assertEquals(AppliedRequests.FORGET_PER_ADD, due.size());
    assertEquals("id-0", due.get(0));
  }

  @Test
  void pastTheCapTheOldestGoEvenIfRecent() {
    AppliedRequests r = filled(AppliedRequests.MAX_KEPT + 1, T0);
    assertEquals(List.of("id-0"), r.due(T0));
    assertTrue(r.contains("id-0"), "due is a proposal; the entry removes it once committed");
  }
}
