package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.LeaseRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link LeaseTable} against a {@link HashMap} through random puts, replacements and removals (many
 * names share probe runs, so removal's backward shift is exercised), growth and clearing, with
 * leases that fit the compact form and leases that keep their record.
 */
class LeaseTableTest {
  @Test
  void agreesWithAHashMapThroughRandomPutsAndRemovals() {
    for (long seed = 1; seed <= 10; seed++) {
      Random random = new Random(seed);
      LeaseTable table = new LeaseTable();
      Map<String, LeaseRecord> model = new HashMap<>();
      // Few enough names that puts and removals keep hitting each other; enough to grow twice.
      int names = 3_000;
      for (int step = 0; step < 40_000; step++) {
        String name = "ns/" + random.nextInt(names);
        int op = random.nextInt(10);
        if (op < 6) {
          LeaseRecord lease = lease(random, step);
          assertEquals(
              model.put(name, lease),
              table.put(name, lease),
              "seed " + seed + " step " + step + ": put " + name);
        } else if (op < 9) {
          assertEquals(
              model.remove(name),
              table.remove(name),
              "seed " + seed + " step " + step + ": remove " + name);
        } else {
          assertEquals(
              model.get(name), table.get(name), "seed " + seed + " step " + step + ": get " + name);
        }
        assertEquals(model.size(), table.size());
      }
      Map<String, LeaseRecord> seen = new HashMap<>();
      table.forEach(
          (name, lease) -> assertNull(seen.put(name, lease), "forEach visits " + name + " once"));
      assertEquals(model, seen, "seed " + seed);
      for (String name : model.keySet()) {
        assertEquals(model.get(name), table.get(name));
      }
    }
  }

  @Test
  void aCompactLeaseComesBackEqualWithTheSameHolderString() {
    LeaseTable table = new LeaseTable();
    String holder = new String("runner-1");
    LeaseRecord lease =
        LeaseRecord.newBuilder()
            .setHolder(holder)
            .setToken(7)
            .setTtlMicros(30_000_000)
            .setAcquiredAtMicros(1_700_000_000_000_000L)
            .setRenewedAtMicros(1_700_000_001_000_000L)
            .setLastRenewRevision(9)
            .setRenewCount(3)
            .setModRevision(9)
            .setSession(4)
            .build();
    assertTrue(LeaseTable.fitsCompact(lease));
    table.put("locks/a", lease);
    LeaseRecord back = table.get("locks/a");
    assertEquals(lease, back);
    assertSame(holder, back.getHolder(), "the holder string is shared, not copied");
  }

  @Test
  void aReplacedLeaseKeepsTheNameStringTheTableAlreadyHeld() {
    LeaseTable table = new LeaseTable();
    String first = new String("locks/a");
    table.put(first, LeaseRecord.newBuilder().setHolder("h").setToken(1).build());
    // A renewal's entry is parsed afresh: an equal name in another string.
    table.put(
        new String("locks/a"),
        LeaseRecord.newBuilder().setHolder("h").setToken(1).setRenewCount(1).build());
    List<String> names = new ArrayList<>();
    table.forEach((name, lease) -> names.add(name));
    assertEquals(1, names.size());
    assertSame(first, names.get(0), "one name string a lease, however often it is renewed");
    assertEquals(1, table.get("locks/a").getRenewCount());
  }

  @Test
  void aRenewedCompactLeaseIsUpdatedInPlaceAndTheReplacedRecordKeepsItsValues() {
    LeaseTable table = new LeaseTable();
    LeaseRecord acquired =
        LeaseRecord.newBuilder()
            .setHolder("h")
            .setToken(5)
            .setTtlMicros(10_000_000)
            .setRenewCount(0)
            .build();
    table.put("locks/a", acquired);
    LeaseRecord before = table.get("locks/a");
    LeaseRecord renewed =
        acquired.toBuilder()
            .setRenewCount(1)
            .setRenewedAtMicros(42)
            .setLastRenewRevision(8)
            .build();
    assertEquals(acquired, table.put("locks/a", renewed), "put answers the lease as it was");
    assertEquals(acquired, before, "a record handed out earlier does not change with the entry");
    assertEquals(renewed, table.get("locks/a"));
    // And out of the compact form and back.
    LeaseRecord withAttributes = renewed.toBuilder().setHeartbeatMicros(1_000_000).build();
    assertEquals(renewed, table.put("locks/a", withAttributes));
    assertEquals(withAttributes, table.put("locks/a", renewed));
    assertEquals(renewed, table.get("locks/a"));
    assertEquals(1, table.size());
  }

  @Test
  void aLeaseWithAttributesOrPolicyTermsKeepsItsRecord() {
    LeaseRecord withAttributes =
        LeaseRecord.newBuilder()
            .setHolder("h")
            .setToken(1)
            .setAttributes(Attributes.newBuilder().setAddress("10.0.0.1:80"))
            .build();
    LeaseRecord withTerms =
        LeaseRecord.newBuilder()
            .setHolder("h")
            .setToken(2)
            .setHeartbeatMicros(1_000_000)
            .setGraceMicros(500_000)
            .build();
    assertFalse(LeaseTable.fitsCompact(withAttributes));
    assertFalse(LeaseTable.fitsCompact(withTerms));
    LeaseTable table = new LeaseTable();
    table.put("service/a", withAttributes);
    table.put("locks/b", withTerms);
    assertSame(withAttributes, table.get("service/a"));
    assertSame(withTerms, table.get("locks/b"));
  }

  @Test
  void clearEmptiesAndTheTableFillsAgain() {
    LeaseTable table = new LeaseTable();
    Random random = new Random(3);
    for (int i = 0; i < 5_000; i++) {
      table.put("ns/" + i, lease(random, i));
    }
    table.clear();
    assertEquals(0, table.size());
    assertNull(table.get("ns/1"));
    table.forEach(
        (name, lease) -> {
          throw new AssertionError("cleared, yet visited " + name);
        });
    LeaseRecord again = lease(random, 1);
    table.put("ns/1", again);
    assertEquals(again, table.get("ns/1"));
    assertEquals(1, table.size());
  }

  private static LeaseRecord lease(Random random, int step) {
    LeaseRecord.Builder b =
        LeaseRecord.newBuilder()
            .setHolder("holder-" + random.nextInt(5))
            .setToken(step + 1)
            .setTtlMicros(random.nextInt(60) * 1_000_000L)
            .setAcquiredAtMicros(random.nextLong())
            .setRenewedAtMicros(random.nextLong())
            .setLastRenewRevision(random.nextInt(1000))
            .setRenewCount(random.nextInt(50))
            .setModRevision(step)
            .setSession(random.nextInt(3));
    switch (random.nextInt(4)) {
      case 0 ->
          b.setAttributes(
              Attributes.newBuilder().setAddress("10.0.0." + random.nextInt(255) + ":80"));
      case 1 -> b.setHeartbeatMicros(1_000_000).setGraceMicros(random.nextInt(2) * 250_000L);
      default -> {}
    }
    return b.build();
  }
}
