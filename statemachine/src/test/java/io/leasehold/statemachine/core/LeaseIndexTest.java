package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.leasehold.proto.v1.LeaseRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link LeaseIndex} against a plain model (a tree per group, as the index used to be), through
 * random grants, releases and re-grants to another holder, including runs where most leases end and
 * where leases arrive out of token order (a store loaded unsorted).
 */
class LeaseIndexTest {
  private static final String[] HOLDERS = {"runner-a", "runner-b", "runner-c", "solo"};
  private static final String[] NAMESPACES = {"locks", "service", "jobs"};

  /** The model: live leases by name. */
  private final Map<String, LeaseRecord> live = new HashMap<>();

  private final LeaseIndex index = new LeaseIndex();

  @Test
  void agreesWithATreeModelThroughRandomGrantsAndEndings() {
    for (long seed = 1; seed <= 20; seed++) {
      live.clear();
      index.clear();
      Random random = new Random(seed);
      long token = 0;
      for (int step = 0; step < 4_000; step++) {
        // Phases: mostly grants, then mostly endings, so groups fill, empty and refill.
        boolean growing = (step / 500) % 2 == 0;
        if (live.isEmpty() || random.nextInt(10) < (growing ? 7 : 2)) {
          String name = NAMESPACES[random.nextInt(NAMESPACES.length)] + "/" + random.nextInt(400);
          LeaseRecord old = live.get(name);
          LeaseRecord now =
              LeaseRecord.newBuilder()
                  .setHolder(HOLDERS[random.nextInt(HOLDERS.length)])
                  .setToken(++token)
                  .build();
          if (old != null) {
            index.remove(name, old); // re-granted: a new token (as Tx.publish does)
          }
          live.put(name, now);
          index.add(name, now);
        } else {
          List<String> names = new ArrayList<>(live.keySet());
          String name = names.get(random.nextInt(names.size()));
          index.remove(name, live.remove(name));
        }
        if (step % 97 == 0) {
          check(random, "seed " + seed + " step " + step);
        }
      }
      check(random, "seed " + seed + " end");
    }
  }

  @Test
  void leasesAddedOutOfTokenOrderAreKeptInTokenOrder() {
    Random random = new Random(7);
    List<Long> tokens = new ArrayList<>();
    for (long t = 1; t <= 300; t++) {
      tokens.add(t * 3);
    }
    java.util.Collections.shuffle(tokens, random);
    for (long t : tokens) {
      LeaseRecord lease =
          LeaseRecord.newBuilder()
              .setHolder(HOLDERS[(int) (t % HOLDERS.length)])
              .setToken(t)
              .build();
      String name = "locks/" + t;
      live.put(name, lease);
      index.add(name, lease);
    }
    check(random, "shuffled");
    // Then ordinary grants after them, and endings among them.
    for (long t = 1_000; t < 1_100; t++) {
      LeaseRecord lease = LeaseRecord.newBuilder().setHolder("runner-a").setToken(t).build();
      live.put("locks/n" + t, lease);
      index.add("locks/n" + t, lease);
      String victim = "locks/" + tokens.get((int) (t - 1_000));
      index.remove(victim, live.remove(victim));
    }
    check(random, "after");
  }

  @Test
  void aTokenIndexedTwiceKeepsTheLatestNameAsTheTreeDid() {
    // Tokens are unique, so this is not expected; it must not fail the apply thread after a commit.
    LeaseRecord five = LeaseRecord.newBuilder().setHolder("h").setToken(5).build();
    LeaseRecord nine = LeaseRecord.newBuilder().setHolder("h").setToken(9).build();
    index.add("locks/a", five);
    index.add("locks/b", nine);
    index.add("locks/c", five); // below the last token
    index.add("locks/d", nine); // equal to the last token
    assertEquals(List.of("locks/c", "locks/d"), index.namesHeldBy("h"));
    assertEquals(2, index.inNamespace("locks"));
    assertEquals(2, index.heldBy("h", "locks"));
  }

  @Test
  void aHolderWithLeasesHasOneSharedString() {
    String first = new String("runner-a".toCharArray());
    index.add("locks/a", LeaseRecord.newBuilder().setHolder(first).setToken(1).build());
    String fresh = new String("runner-a".toCharArray());
    assertSame(first, index.holder(fresh));
    String other = new String("runner-b".toCharArray());
    assertSame(other, index.holder(other)); // no lease yet: its own string
  }

  private void check(Random random, String where) {
    Map<String, Map<String, TreeMap<Long, String>>> byHolder = new HashMap<>();
    Map<String, TreeMap<Long, String>> byNamespace = new HashMap<>();
    live.forEach(
        (name, lease) -> {
          String ns = LeaseIndex.namespace(name);
          byHolder
              .computeIfAbsent(lease.getHolder(), h -> new HashMap<>())
              .computeIfAbsent(ns, n -> new TreeMap<>())
              .put(lease.getToken(), name);
          byNamespace.computeIfAbsent(ns, n -> new TreeMap<>()).put(lease.getToken(), name);
        });
    Map<String, Long> counts = new TreeMap<>();
    byNamespace.forEach((ns, group) -> counts.put(ns, (long) group.size()));
    assertEquals(
        counts, index.countsByNamespace(), where + ": counts by namespace (no empty namespace)");
    for (String ns : NAMESPACES) {
      TreeMap<Long, String> inNs = byNamespace.getOrDefault(ns, new TreeMap<>());
      assertEquals(inNs.size(), index.inNamespace(ns), where + ": count in " + ns);
      for (int quota = 0; quota <= 3; quota++) {
        for (Long token : sample(inNs, random)) {
          assertEquals(
              inNs.headMap(token, false).size() < quota || inNs.size() <= quota,
              index.namespaceWithin(ns, token, quota),
              where + ": " + ns + " token " + token + " within " + quota);
        }
      }
      for (String holder : HOLDERS) {
        TreeMap<Long, String> held =
            byHolder.getOrDefault(holder, Map.of()).getOrDefault(ns, new TreeMap<>());
        assertEquals(held.size(), index.heldBy(holder, ns), where + ": " + holder + " in " + ns);
        long quota = Math.max(0, held.size() - 2);
        for (Long token : sample(held, random)) {
          assertEquals(
              held.headMap(token, false).size() < quota || held.size() <= quota,
              index.holderWithin(holder, ns, token, quota),
              where + ": " + holder + " token " + token);
        }
      }
    }
    for (String holder : HOLDERS) {
      TreeMap<Long, String> all = new TreeMap<>();
      byHolder.getOrDefault(holder, Map.of()).values().forEach(all::putAll);
      assertEquals(
          new ArrayList<>(all.values()),
          index.namesHeldBy(holder),
          where + ": names held by " + holder);
    }
  }

  private static List<Long> sample(TreeMap<Long, String> group, Random random) {
    List<Long> tokens = new ArrayList<>(group.keySet());
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < Math.min(5, tokens.size()); i++) {
      out.add(tokens.get(random.nextInt(tokens.size())));
    }
    return out;
  }
}
