package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.leasehold.client.recipes.Election;
import io.leasehold.client.recipes.Leader;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An election's observer that falls behind the cluster's history lists again and follows on. */
class ElectionObserverTest {
  @TempDir Path dir;

  @Test
  void anObserverCutOffPastTheHistoryListsAgainAndFollowsOn() throws Exception {
    try (TestCluster cluster = TestCluster.start(1, dir, b -> b.history(20, Duration.ofHours(1)))) {
      Partition cut = new Partition();
      try (LeaseholdClient observing =
              Fixtures.client(Fixtures.endpoints(cluster), b -> b.interceptor(cut));
          LeaseholdClient first = Fixtures.client(cluster);
          LeaseholdClient second = Fixtures.client(cluster)) {
        Election firstElection = first.election("election/observed");
        Lease firstTerm = firstElection.campaign("10.0.0.1:80").get(20, TimeUnit.SECONDS);
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        Watch watch =
            observing.election("election/observed").observe(seen::add).get(20, TimeUnit.SECONDS);
        assertEquals(
            List.of(
                Optional.of(
                    new Leader(first.holder(), firstTerm.token(), Optional.of("10.0.0.1:80")))),
            seen);

        cut.cut();
        long cutAt = watch.revision();
        firstElection.resign().get(20, TimeUnit.SECONDS);
        Election secondElection = second.election("election/observed");
        Lease secondTerm = secondElection.campaign("10.0.0.2:80").get(20, TimeUnit.SECONDS);
        for (int i = 0; i < 60; i++) {
          first.blocking().tryAcquire("noise/" + i, Fixtures.ttl(60));
        }
        Fixtures.await(
            "the history was compacted past the observer",
            Duration.ofSeconds(20),
            () ->
                cluster.running().get(0).stateMachine().core().history().getCompactRevision()
                    > cutAt + 1);
        cut.heal();

        Leader next = new Leader(second.holder(), secondTerm.token(), Optional.of("10.0.0.2:80"));
        Fixtures.await(
            () -> "the observer listed again and saw " + next + ", saw " + seen,
            Duration.ofSeconds(20),
            () -> seen.get(seen.size() - 1).equals(Optional.of(next)));
        // The resign and the second campaign happened out of its sight: it is told the leader as of
        // its listing.
        assertEquals(2, seen.size(), seen.toString());
        assertFalse(watch.isClosed());

        secondElection.resign().get(20, TimeUnit.SECONDS);
        Fixtures.await(
            () -> "the observer follows on after listing again, saw " + seen,
            Duration.ofSeconds(20),
            () -> seen.get(seen.size() - 1).isEmpty());
        watch.close();
        assertEquals(3, seen.size(), seen.toString());
      }
    }
  }
}
