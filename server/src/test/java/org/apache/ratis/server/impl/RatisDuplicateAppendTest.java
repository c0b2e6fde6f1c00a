package org.apache.ratis.server.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.server.impl.ServerImplUtils.NavigableIndices;
import org.junit.jupiter.api.Test;

/**
 * A minimal reproduction of a Ratis 3.3.0 follower bug, on the class that has it. With {@code
 * raft.server.log.append-entries.compose.enabled} (the default), a follower queues each append's
 * entries for its log ({@code NavigableIndices}) and checks later appends against the queue. An
 * append whose first index matches one still queued counts as "already exists" and is skipped —
 * without comparing terms or lengths — and its future is the queue's, so it completes normally once
 * the earlier append is written. {@code RaftServerImpl} then answers SUCCESS with the skipped
 * append's last index as the match index, and takes its commit index up to there.
 *
 * <p>The entries past the queued append's end were never written: the follower's log still holds
 * whatever it had there (a deposed leader's own uncommitted tail), the leader counts the follower
 * as holding its entries, and the follower commits and applies its stale ones. A leader sends two
 * appends with the same first index whenever it resends after a timeout or a reset, which a slow or
 * briefly cut-off follower provokes. Leasehold turns compose off ({@code RaftSettings}); {@code
 * DuplicateAppendDivergenceTest} drives the whole divergence on a cluster.
 *
 * <p>This test asserts Ratis's behaviour as it is: if it fails after a Ratis upgrade, the bug may
 * be fixed there, and compose may be turned back on once the cluster test passes with it.
 */
class RatisDuplicateAppendTest {
  private static List<LogEntryProto> entries(long first, long last, long term) {
    List<LogEntryProto> list = new ArrayList<>();
    for (long i = first; i <= last; i++) {
      list.add(
          LogEntryProto.newBuilder()
              .setTerm(term)
              .setIndex(i)
              .setStateMachineLogEntry(StateMachineLogEntryProto.getDefaultInstance())
              .build());
    }
    return list;
  }

  @Test
  void aLongerAppendOfANewerTermWithTheSameFirstIndexIsSkippedWhileTheFirstIsQueued()
      throws Exception {
    NavigableIndices queue = new NavigableIndices();
    List<List<LogEntryProto>> written = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> firstWrite = new CompletableFuture<>();
    // The first append: three entries of term 3, queued; the log has not written them yet.
    CompletableFuture<Void> first =
        queue.append(
            entries(754, 756, 3),
            e -> {
              written.add(e);
              return firstWrite;
            });
    // The second: eighteen entries of term 4 from the same index, as a new leader resends them.
    CompletableFuture<Void> second =
        queue.append(
            entries(754, 771, 4),
            e -> {
              written.add(e);
              return CompletableFuture.completedFuture(null);
            });
    firstWrite.complete(null);
    first.get(10, TimeUnit.SECONDS);
    second.get(
        10,
        TimeUnit.SECONDS); // completes normally: the follower would answer SUCCESS, match index 771

    assertEquals(1, written.size(), "appends handed to the log: " + written.size());
    assertEquals(
        3, written.get(0).get(0).getTerm(), "only the queued term-3 append reached the log");
    assertEquals(
        756,
        written.get(0).get(written.get(0).size() - 1).getIndex(),
        "nothing past 756 was written");
  }
}
