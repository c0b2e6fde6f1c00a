package io.leasehold.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireManyResult;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.statemachine.core.Limits;
import io.leasehold.statemachine.core.LogFormat;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * AcquireMany through the API of a three-node cluster: a thousand names in one entry through a
 * follower, each with the token of its place, on every replica; mixed outcomes; all or nothing; bad
 * input named by field.
 */
class AcquireManyTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(3, dir);
    cluster.awaitLeader();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static AcquireManyRequest.Builder many(String holder, List<String> names) {
    AcquireManyRequest.Builder b =
        AcquireManyRequest.newBuilder().setHolder(holder).setTtl(Requests.seconds(60));
    names.forEach(n -> b.addItems(AcquireManyItem.newBuilder().setName(n)));
    return b;
  }

  @Test
  void aThousandNamesThroughAFollowerAreOneEntryOnEveryReplica() throws Exception {
    String follower = cluster.followers().get(0).id();
    List<String> names =
        java.util.stream.IntStream.range(0, Limits.MAX_ACQUIRE_MANY)
            .mapToObj(i -> String.format("mailbox/m%04d", i))
            .toList();
    AcquireManyResponse r = cluster.leases(follower).acquireMany(many("proxy-1", names).build());

    assertEquals(Limits.MAX_ACQUIRE_MANY, r.getGranted());
    for (int i = 0; i < names.size(); i++) {
      AcquireManyResult item = r.getResults(i);
      assertEquals(names.get(i), item.getName());
      assertEquals(Outcome.GRANTED, item.getOutcome());
      assertEquals(
          LogFormat.token(LogFormat.NEWEST, r.getRevision(), i), item.getLease().getToken());
    }
    assertTrue(r.getHeartbeatInterval().getSeconds() > 0);
    for (LeaseholdNode node : cluster.running()) {
      TestCluster.await(
          node.id() + " applied the entry",
          Duration.ofSeconds(30),
          () -> node.stateMachine().core().applied().index() >= r.getRevision());
      ListResponse list =
          cluster
              .leases(node.id())
              .list(
                  ListRequest.newBuilder()
                      .setPrefix("mailbox/")
                      .setLimit(2000)
                      .setStale(true)
                      .build());
      assertEquals(Limits.MAX_ACQUIRE_MANY, list.getLeasesCount(), node.id());
      assertEquals(
          r.getResults(999).getLease().getToken(),
          list.getLeases(999).getToken(),
          node.id() + " holds the same token");
    }
  }

  @Test
  void eachNameIsDecidedOnItsOwnUnlessAllOrNothing() {
    String leader = cluster.awaitLeader().id();
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(leader).acquire(Requests.acquire("part/1", "bob", 60)).getOutcome());

    AcquireManyResponse all =
        cluster
            .leases(leader)
            .acquireMany(
                many("alice", List.of("part/0", "part/1", "part/2")).setAllOrNothing(true).build());
    assertEquals(
        List.of(Outcome.SKIPPED, Outcome.CONFLICT, Outcome.SKIPPED),
        all.getResultsList().stream().map(AcquireManyResult::getOutcome).toList());
    assertEquals("bob", all.getResults(1).getConflict().getHolder());

    AcquireManyResponse each =
        cluster
            .leases(leader)
            .acquireMany(
                many("alice", List.of("part/0", "part/1", "part/2"))
                    .setTtl(Requests.seconds(1))
                    .build());
    assertEquals(
        List.of(Outcome.REJECTED, Outcome.REJECTED, Outcome.REJECTED),
        each.getResultsList().stream().map(AcquireManyResult::getOutcome).toList(),
        "policy comes first: a TTL below the floor is refused for each name, held or not");
    assertEquals(RejectReason.TTL_OUT_OF_RANGE, each.getResults(0).getRejection().getReason());

    AcquireManyResponse granted =
        cluster.leases(leader).acquireMany(many("alice", List.of("part/0", "part/2")).build());
    assertEquals(2, granted.getGranted());
  }

  @Test
  void badInputIsRefusedNamingTheField() {
    String leader = cluster.awaitLeader().id();
    StatusRuntimeException duplicate =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .leases(leader)
                    .acquireMany(many("alice", List.of("dup/a", "dup/b", "dup/a")).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, duplicate.getStatus().getCode());
    assertTrue(
        duplicate.getStatus().getDescription().startsWith("items[2].name"),
        duplicate.getStatus().getDescription());

    AcquireManyRequest.Builder tooMany = many("alice", List.of());
    for (int i = 0; i <= Limits.MAX_ACQUIRE_MANY; i++) {
      tooMany.addItems(AcquireManyItem.newBuilder().setName("big/" + i));
    }
    StatusRuntimeException large =
        assertThrows(
            StatusRuntimeException.class,
            () -> cluster.leases(leader).acquireMany(tooMany.build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, large.getStatus().getCode());
    assertTrue(
        large.getStatus().getDescription().contains("at most 1000"),
        large.getStatus().getDescription());
  }
}
