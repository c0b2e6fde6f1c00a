package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.RocksDbStore;
import io.leasehold.statemachine.store.StoreKind;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ReplicaDeterminismTest}'s random log, switched to log format 2 part way and then with its
 * client commands grouped into batches of random size: every replica (and one that joins from a
 * snapshot) still gives the same replies and events and ends with the same bytes, and tokens
 * strictly increase over every grant, each the entry's index × 256 + its position after the switch.
 */
class BatchDeterminismTest {
  private static final int STEPS = 3_000;
  private static final int SWITCH_AT = 300;

  @TempDir Path tempDir;

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void replicasApplyingBatchedEntriesEndIdentical(long seed) throws IOException {
    List<KvStore> stores = new ArrayList<>();
    try {
      stores.add(new InMemoryStore());
      stores.add(RocksDbStore.open(tempDir.resolve("rocks")));
      stores.add(new InMemoryStore());
      List<LeaseCore> replicas = new ArrayList<>();
      stores.forEach(s -> replicas.add(new LeaseCore(s)));
      RandomWorkload workload = new RandomWorkload(seed);
      Random grouping = new Random(seed * 7919);
      List<RandomWorkload.Step> pending = new ArrayList<>();
      int target = 1;
      long applied = 0;
      long lastToken = 0;
      int batches = 0;
      int batchedGrants = 0;
      for (int step = 1; step <= STEPS; step++) {
        RandomWorkload.Step s = workload.next();
        boolean formatTwo = replicas.get(0).logFormat() >= LogFormat.BATCHES;
        if (step == SWITCH_AT) {
          s =
              new RandomWorkload.Step(
                  s.term(),
                  s.index(),
                  LogCommand.newBuilder()
                      .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.BATCHES))
                      .setLeaderTimeMicros(s.command().getLeaderTimeMicros())
                      .build());
        }
        boolean replay = s.index() <= applied;
        if (formatTwo && !replay && LogFormat.batchable(s.command())) {
          pending.add(s);
          if (pending.size() < target) {
            continue;
          }
        }
        if (!pending.isEmpty()) {
          RandomWorkload.Step last = pending.get(pending.size() - 1);
          CommandBatch.Builder b = CommandBatch.newBuilder();
          pending.forEach(p -> b.addCommands(p.command()));
          RandomWorkload.Step entry =
              new RandomWorkload.Step(
                  last.term(),
                  last.index(),
                  LogCommand.newBuilder()
                      .setBatch(b)
                      .setLeaderTimeMicros(last.command().getLeaderTimeMicros())
                      .build());
          ApplyResult r = applyEverywhere(replicas, entry, workload);
          lastToken = checkTokens(entry, r, lastToken, replicas.get(0).logFormat());
          batches++;
          batchedGrants +=
              (int) r.events().stream().filter(e -> e.type() == LeaseEvent.Type.ACQUIRED).count();
          applied = Math.max(applied, entry.index());
          pending.clear();
          target = 1 + grouping.nextInt(8);
          if (pending.isEmpty() && LogFormat.batchable(s.command()) && !replay && formatTwo) {
            continue; // s was the last of that batch
          }
        }
        ApplyResult r = applyEverywhere(replicas, s, workload);
        if (!replay) {
          lastToken =
              checkTokens(
                  s,
                  r,
                  lastToken,
                  step == SWITCH_AT ? LogFormat.FIRST : replicas.get(0).logFormat());
          applied = Math.max(applied, s.index());
        }
        if (step == STEPS / 2) {
          KvStore joiner = new InMemoryStore();
          StoreKind.load(joiner, StoreKind.dump(stores.get(1)));
          stores.add(joiner);
          replicas.add(new LeaseCore(joiner));
        }
      }
      ReplicaDeterminismTest.assertSameState(seed, STEPS, stores);
      ReplicaDeterminismTest.assertSameReads(replicas);
      assertEquals(
          replicas.get(0).logFormat(),
          replicas.get(replicas.size() - 1).logFormat(),
          "the joiner took the format from the snapshot");
      assertTrue(replicas.get(0).logFormat() >= LogFormat.BATCHES);
      assertTrue(
          batches >= 200 && batchedGrants >= 100,
          "seed " + seed + ": " + batches + " batches, " + batchedGrants + " grants in them");
    } finally {
      stores.forEach(KvStore::close);
    }
  }

  private static ApplyResult applyEverywhere(
      List<LeaseCore> replicas, RandomWorkload.Step s, RandomWorkload workload) throws IOException {
    ApplyResult first = null;
    for (LeaseCore replica : replicas) {
      ApplyResult r = replica.apply(s.term(), s.index(), s.command());
      if (first == null) {
        first = r;
      } else {
        assertEquals(first.reply(), r.reply(), () -> "reply at index " + s.index());
        assertEquals(first.events(), r.events(), () -> "events at index " + s.index());
      }
    }
    workload.observe(first);
    return first;
  }

  /**
   * Every new grant's token is above every earlier one, and derives from the entry's index: the
   * index itself under format 1, else index × 2^k + position, below the next index's first token.
   */
  private static long checkTokens(
      RandomWorkload.Step s, ApplyResult r, long lastToken, int format) {
    for (LeaseEvent e : r.events()) {
      if (e.type() != LeaseEvent.Type.ACQUIRED) {
        continue;
      }
      long token = e.lease().getToken();
      assertTrue(
          token > lastToken, "token " + token + " at index " + s.index() + " after " + lastToken);
      assertTrue(
          token >= LogFormat.token(format, s.index(), 0)
              && token < LogFormat.token(format, s.index() + 1, 0),
          "the token " + token + " derives from the entry's index " + s.index());
      lastToken = token;
    }
    return lastToken;
  }
}
