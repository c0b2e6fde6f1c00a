package io.leasehold.client.recipes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.Partitions;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The arithmetic of ranges and keys, against brute force and the routing table's formula. */
class PartitionRangesTest {
  @Test
  void everyPartitionBelongsToTheOneMemberWhoseContiguousRangeHoldsItAndSharesDifferByAtMostOne() {
    for (int n = 1; n <= 40; n++) {
      for (int m = 1; m <= 45; m++) {
        int[] share = new int[m];
        for (int k = 0; k < n; k++) {
          int i = PartitionRanges.memberIndex(k, m, n);
          assertTrue(
              PartitionRanges.first(i, m, n) <= k && k < PartitionRanges.first(i + 1, m, n),
              "n=" + n + " m=" + m + " k=" + k);
          share[i]++;
        }
        for (int s : share) {
          assertTrue(s == n / m || s == (n + m - 1) / m, "n=" + n + " m=" + m + " share " + s);
        }
      }
    }
  }

  @Test
  void theTargetOfAPartitionIsTheMemberAtItsIndexInTheSortedList() {
    List<String> members = List.of("a", "b", "c");
    assertEquals("a", PartitionRanges.targetOf(0, members, 7).orElseThrow());
    assertEquals("b", PartitionRanges.targetOf(2, members, 7).orElseThrow());
    assertEquals("c", PartitionRanges.targetOf(6, members, 7).orElseThrow());
    assertTrue(PartitionRanges.targetOf(3, List.of(), 7).isEmpty());
  }

  @Test
  void aKeysPartitionForTwoHundredFiftySixIsTheRoutingTables() {
    for (String key :
        List.of("", "customer-42", "$admin@proxy-01", "ключ", "audit-logs@proxy-02")) {
      assertEquals(Partitions.of(key), PartitionRanges.partitionOf(key, 256), key);
    }
  }
}
