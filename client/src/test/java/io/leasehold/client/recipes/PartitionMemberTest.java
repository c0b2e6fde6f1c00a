package io.leasehold.client.recipes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.EndReason;
import io.leasehold.client.EndedLease;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Policy;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partition groups on a three-node cluster: balance, handoff by transfer, and never two owners of a
 * partition.
 */
class PartitionMemberTest {
  private static final Duration CONVERGE = Duration.ofSeconds(30);
  @TempDir static Path dir;
  static TestCluster cluster;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(3, dir, TestCluster::steadyElections);
    try (LeaseholdClient admin = client("pm-admin", true)) {
      // Short TTLs so that a killed member's leases (attached or handed over) lapse within seconds.
      admin
          .admin()
          .setPolicy(
              "partitions",
              Policy.builder().defaultTtl(Duration.ofSeconds(3)).lockDelay(Duration.ZERO).build())
          .join();
    }
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  static LeaseholdClient client(String holder, boolean releaseOnClose) {
    List<String> endpoints = cluster.clientAddresses();
    return LeaseholdClient.builder()
        .endpoints(endpoints)
        .holder(holder)
        .sessionTtl(Duration.ofSeconds(3))
        .releaseOnClose(releaseOnClose)
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3))
        .build();
  }

  private LeaseholdClient newClient(String holder, boolean releaseOnClose) {
    LeaseholdClient c = client(holder, releaseOnClose);
    toClose.add(c);
    return c;
  }

  private PartitionMember join(
      LeaseholdClient client,
      String group,
      int n,
      PartitionListener listener,
      PartitionOptions options) {
    PartitionMember m =
        client
            .partitions(group, n, listener, options.withReconcileInterval(Duration.ofMillis(500)))
            .join();
    toClose.add(m);
    return m;
  }

  @Test
  void membersJoiningAndLeavingOneByOneEndBalancedWithHandoffsAndNeverTwoOwnersOfAPartition()
      throws Exception {
    int n = 12;
    String group = "orders";
    OwnershipLog log = new OwnershipLog();
    PartitionMember a =
        join(
            newClient("pm-a", true),
            group,
            n,
            log.listenerFor("pm-a"),
            PartitionOptions.defaults());
    awaitBalanced(n, List.of(a));

    LeaseholdClient clientB = newClient("pm-b", true);
    PartitionMember b =
        join(clientB, group, n, log.listenerFor("pm-b"), PartitionOptions.defaults());
    awaitBalanced(n, List.of(a, b));
    assertMovedByTransfer(clientB, group, log, b.owned().keySet(), "pm-a", "pm-b");

    LeaseholdClient clientC = newClient("pm-c", false);
    PartitionMember c =
        join(clientC, group, n, log.listenerFor("pm-c"), PartitionOptions.defaults());
    awaitBalanced(n, List.of(a, b, c));
    assertMovedByTransfer(clientC, group, log, c.owned().keySet(), null, "pm-c");

    // A member that leaves hands its partitions to the others while they are live.
    Set<Integer> ofB = Set.copyOf(b.owned().keySet());
    b.close();
    assertTrue(b.owned().isEmpty(), "a member that left owns nothing");
    awaitBalanced(n, List.of(a, c));
    assertMovedByTransfer(clientC, group, log, ofB, "pm-b", null);

    // A killed member's leases lapse with its session; the survivor then takes every partition.
    log.killed("pm-c");
    clientC.close();
    awaitBalanced(n, List.of(a));

    assertEquals(List.of(), log.violations(n));
  }

  @Test
  void aSecondMembershipOfAGroupFromOneClientIsRefusedAndTheFirstKeepsItsPartitions() {
    LeaseholdClient client = newClient("pm-twice", true);
    PartitionMember first =
        join(
            client,
            "twice",
            4,
            new OwnershipLog().listenerFor("pm-twice"),
            PartitionOptions.defaults());
    awaitBalanced(4, List.of(first));

    CompletionException e =
        assertThrows(
            CompletionException.class,
            () -> client.partitions("twice", 4, new OwnershipLog().listenerFor("x")).join());
    assertInstanceOf(IllegalStateException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains("already a member"), e.getCause().getMessage());
    assertEquals(List.of("pm-twice"), first.members());
    assertEquals(4, first.owned().size());
  }

  @Test
  void joiningAGroupWithAnotherPartitionCountIsRefusedAndNamesTheCounts() {
    PartitionMember eight =
        join(
            newClient("pm-eight", true),
            "counted",
            8,
            new OwnershipLog().listenerFor("e"),
            PartitionOptions.defaults());
    awaitBalanced(8, List.of(eight));
    LeaseholdClient other = newClient("pm-sixteen", true);

    CompletionException e =
        assertThrows(
            CompletionException.class,
            () ->
                PartitionMember.join(
                        other,
                        "counted",
                        16,
                        new OwnershipLog().listenerFor("s"),
                        PartitionOptions.defaults())
                    .join());
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    String message = e.getCause().getMessage();
    assertTrue(message.contains("16") && message.contains("pm-eight (8)"), message);
    assertTrue(
        other.blocking().get("partitions/counted/members/pm-sixteen").isEmpty(),
        "the refused member left no membership behind");
    assertEquals(8, eight.owned().size());
  }

  @Test
  void ownerOfRoutesAKeyToItsPartitionsOwnerWithTheOwnersAddressAndToken() {
    int n = 16;
    PartitionMember a =
        join(
            newClient("pm-route-a", true),
            "routed",
            n,
            new OwnershipLog().listenerFor("a"),
            PartitionOptions.defaults().withAddress("10.0.0.1:8980"));
    awaitBalanced(n, List.of(a));
    PartitionMember b =
        join(
            newClient("pm-route-b", true),
            "routed",
            n,
            new OwnershipLog().listenerFor("b"),
            PartitionOptions.defaults().withAddress("10.0.0.2:8980"));
    awaitBalanced(n, List.of(a, b));

    Map<String, String> addresses =
        Map.of("pm-route-a", "10.0.0.1:8980", "pm-route-b", "10.0.0.2:8980");
    List<String> keys = IntStream.range(0, 200).mapToObj(i -> "customer-" + i).toList();
    // B's partitions were handed over by A: B puts its own address on them once it takes them up.
    TestCluster.await(
        "every key routed to its owner, with the owner's address",
        CONVERGE,
        () ->
            keys.stream()
                .allMatch(
                    key -> {
                      int p = a.partitionOf(key);
                      PartitionMember owner = a.owned().containsKey(p) ? a : b;
                      return a.ownerOf(key)
                          .filter(
                              o ->
                                  o.holder().equals(owner.memberId())
                                      && o.partition() == p
                                      && o.address()
                                          .equals(
                                              java.util.Optional.of(
                                                  addresses.get(owner.memberId())))
                                      && Long.valueOf(o.token()).equals(owner.owned().get(p)))
                          .isPresent();
                    }));
    assertEquals(b.partitionOf("customer-7"), a.partitionOf("customer-7"));
  }

  /**
   * Waits until the members own every partition once, each exactly its contiguous range of ⌊n/m⌋ or
   * ⌈n/m⌉.
   */
  private static void awaitBalanced(int n, List<PartitionMember> members) {
    List<String> ids = members.stream().map(PartitionMember::memberId).sorted().toList();
    TestCluster.await(
        () ->
            "balanced over "
                + ids
                + ": "
                + members.stream()
                    .map(m -> m.memberId() + "=" + m.owned().keySet())
                    .collect(Collectors.joining(" ")),
        CONVERGE,
        () -> {
          Set<Integer> all = new HashSet<>();
          for (PartitionMember m : members) {
            int i = ids.indexOf(m.memberId());
            Set<Integer> range =
                IntStream.range(
                        PartitionRanges.first(i, ids.size(), n),
                        PartitionRanges.first(i + 1, ids.size(), n))
                    .boxed()
                    .collect(Collectors.toSet());
            int size = m.owned().size();
            if (!m.owned().keySet().equals(range)
                || size < n / ids.size()
                || size > (n + ids.size() - 1) / ids.size()
                || !m.members().equals(ids)) {
              return false;
            }
            all.addAll(range);
          }
          return all.size() == n;
        });
  }

  /**
   * Each partition in {@code partitions} last moved by a transfer (from {@code from}, if given, to
   * {@code to}, if given), to a larger token than the previous owner's.
   */
  private static void assertMovedByTransfer(
      LeaseholdClient client,
      String group,
      OwnershipLog log,
      Set<Integer> partitions,
      String from,
      String to) {
    assertTrue(!partitions.isEmpty(), "some partitions moved");
    for (int k : partitions) {
      List<OwnershipLog.Interval> in = log.of(k);
      assertTrue(in.size() >= 2, "partition " + k + " had an owner before: " + in);
      OwnershipLog.Interval before = in.get(in.size() - 2);
      OwnershipLog.Interval after = in.get(in.size() - 1);
      if (from != null) {
        assertEquals(from, before.member(), "partition " + k + ": " + in);
      }
      if (to != null) {
        assertEquals(to, after.member(), "partition " + k + ": " + in);
      }
      assertTrue(
          after.token() > before.token(), "partition " + k + " moved to a larger token: " + in);
      List<EndedLease> history =
          client.admin().history("partitions/" + group + "/p/" + k, 10).join();
      EndedLease handedOver =
          history.stream()
              .filter(h -> h.token() == before.token())
              .findFirst()
              .orElseThrow(
                  () ->
                      new AssertionError(
                          "partition "
                              + k
                              + ": no history of token "
                              + before.token()
                              + " in "
                              + history));
      assertEquals(
          EndReason.TRANSFERRED,
          handedOver.reason(),
          "partition " + k + " went by transfer: " + handedOver);
    }
  }
}
