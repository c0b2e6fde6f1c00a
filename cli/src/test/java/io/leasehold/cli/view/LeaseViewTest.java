package io.leasehold.cli.view;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.DeadlineExtension;
import io.leasehold.client.DeadlineSource;
import io.leasehold.client.LeaseAttributes;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.ServerLeaseState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What a person reads of a lease's end: the leader's deadline, marked when only estimated, and why
 * it moved.
 */
class LeaseViewTest {
  static final Instant RENEWED = Instant.parse("2026-11-22T09:27:22.535Z");
  static final Instant TOOK_OVER = Instant.parse("2026-11-22T09:27:43.735Z");

  static LeaseInfo lease(
      Optional<Instant> deadline,
      Optional<Duration> left,
      DeadlineSource source,
      List<DeadlineExtension> extensions) {
    return new LeaseInfo(
        "lock/billing-job",
        "runner-1",
        1280,
        Duration.ofSeconds(30),
        RENEWED,
        RENEWED,
        RENEWED.plusSeconds(30),
        LeaseAttributes.NONE,
        0,
        5,
        Optional.of(Duration.ZERO),
        ServerLeaseState.STALE,
        Optional.of(Duration.ofSeconds(10)),
        Optional.empty(),
        0,
        deadline,
        left,
        source,
        extensions);
  }

  static List<List<String>> rows(LeaseInfo l) {
    return LeaseView.detail(l).render().lines().map(r -> List.of(r.trim().split(" {3,}"))).toList();
  }

  @Test
  void aLeaseTheLeaderExtendedShowsItsDeadlineAndWhy() {
    DeadlineExtension change =
        new DeadlineExtension(
            DeadlineExtension.Reason.LEADER_CHANGE, TOOK_OVER, Duration.ofMillis(21_200), 2);
    LeaseInfo l =
        lease(
            Optional.of(TOOK_OVER.plusSeconds(30)),
            Optional.of(Duration.ofMillis(29_100)),
            DeadlineSource.LEADER,
            List.of(change));
    List<List<String>> rows = rows(l);
    assertTrue(rows.contains(List.of("expires", "2026-11-22T09:28:13Z")), rows.toString());
    assertTrue(
        rows.contains(List.of("expires in", "29.1s")),
        "counted to the leader's deadline, not the stamp: " + rows);
    assertTrue(
        rows.contains(
            List.of(
                "extended",
                "by 21.2s at 2026-11-22T09:27:43Z: leader change (term 2), a full TTL from then")),
        rows.toString());
    assertEquals("+21.2s leader change (term 2)", LeaseView.extendedShort(l));
    Map<String, Object> json = LeaseView.json(l);
    assertEquals("leader", json.get("deadlineSource"));
    assertEquals(29_100L, json.get("deadlineRemainingMs"));
    assertEquals(
        List.of(
            Map.of(
                "reason",
                "leader change",
                "at",
                "2026-11-22T09:27:43.735Z",
                "byMs",
                21_200L,
                "term",
                2L)),
        json.get("extensions"));
    assertEquals("2026-11-22T09:27:52.535Z", json.get("expiresAt"), "the stamp keeps its meaning");
  }

  @Test
  void aStallAndAnEstimateAndALeaseNotExtendedSayWhatTheyAre() {
    DeadlineExtension stall =
        new DeadlineExtension(
            DeadlineExtension.Reason.STALL, TOOK_OVER, Duration.ofMillis(2_100), 3);
    LeaseInfo stalled =
        lease(
            Optional.of(RENEWED.plusSeconds(32)),
            Optional.of(Duration.ofSeconds(5)),
            DeadlineSource.LEADER,
            List.of(stall));
    assertEquals("+2.1s stall", LeaseView.extendedShort(stalled));
    assertTrue(
        rows(stalled)
            .contains(
                List.of(
                    "extended",
                    "by 2.1s at 2026-11-22T09:27:43Z: the leader stalled, every deadline moved out by the stall")));

    LeaseInfo estimate =
        lease(
            Optional.of(RENEWED.plusSeconds(30)),
            Optional.of(Duration.ofMillis(12_000)),
            DeadlineSource.ESTIMATE,
            List.of());
    assertEquals("~12s", LeaseView.expiresIn(estimate));
    assertEquals("?", LeaseView.extendedShort(estimate));
    assertTrue(
        rows(estimate).contains(List.of("expires in", "~12s (estimate)")),
        rows(estimate).toString());

    LeaseInfo plain =
        lease(
            Optional.of(RENEWED.plusSeconds(30)),
            Optional.of(Duration.ofMillis(12_000)),
            DeadlineSource.LEADER,
            List.of());
    assertEquals("12s", LeaseView.expiresIn(plain));
    assertTrue(rows(plain).contains(List.of("extended", "no")));

    LeaseInfo reply =
        new LeaseInfo(
            "lock/x",
            "runner-1",
            7,
            Duration.ofSeconds(30),
            RENEWED,
            RENEWED,
            RENEWED.plusSeconds(30),
            LeaseAttributes.NONE,
            0,
            5,
            Optional.empty(),
            ServerLeaseState.UNKNOWN,
            Optional.empty(),
            Optional.empty(),
            0);
    assertTrue(rows(reply).contains(List.of("extended", "-")), "a reply's lease has no deadline");
    assertTrue(LeaseView.detail(reply, "REVOKED").render().contains("REVOKED"));
    assertEquals("REVOKED", LeaseView.json(reply, "REVOKED").get("state"));
  }
}
