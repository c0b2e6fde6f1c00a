package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.HistoryRecord;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.NameHistory;
import io.leasehold.proto.v1.NamespaceState;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.proto.v1.StoredSession;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A moving namespace's state in staged parts: their merge is the state, each part bounded. */
class NamespaceMoverSplitTest {
  private static NamespaceState state() {
    NamespaceState.Builder b = NamespaceState.newBuilder();
    for (int i = 0; i < 200; i++) {
      b.putLeases(
          "lock/" + i,
          LeaseRecord.newBuilder().setHolder("runner-" + i).setToken(1000 + i).build());
      b.putHistory(
          "lock/" + i,
          NameHistory.newBuilder()
              .addRecords(HistoryRecord.newBuilder().setName("lock/" + i).setToken(i))
              .build());
    }
    b.putLockDelays("lock/7", StoredLockDelay.getDefaultInstance());
    b.putSessions(42, StoredSession.newBuilder().setHolder("runner-1").build());
    return b.build();
  }

  @Test
  void thePartsMergeIntoTheStateAndEachStaysWithinItsBound() {
    NamespaceState state = state();
    List<NamespaceState> parts = NamespaceMover.split(state, 1024);
    assertTrue(
        parts.size() > 5, "a state of " + state.getSerializedSize() + " bytes: " + parts.size());
    NamespaceState.Builder merged = NamespaceState.newBuilder();
    for (NamespaceState p : parts) {
      assertTrue(p.getSerializedSize() <= 1024, "a part of " + p.getSerializedSize() + " bytes");
      merged.mergeFrom(p);
    }
    assertEquals(state, merged.build());
  }

  @Test
  void anEntryLargerThanAPartIsAPartOfItsOwnAndAnEmptyStateIsOnePart() {
    NamespaceState big =
        NamespaceState.newBuilder()
            .putLeases("lock/a", LeaseRecord.newBuilder().setHolder("x".repeat(5000)).build())
            .putLeases("lock/b", LeaseRecord.newBuilder().setHolder("b").build())
            .build();
    List<NamespaceState> parts = NamespaceMover.split(big, 1024);
    assertEquals(2, parts.size(), parts::toString);
    assertEquals(
        List.of(NamespaceState.getDefaultInstance()),
        NamespaceMover.split(NamespaceState.getDefaultInstance(), 1024));
  }

  @Test
  void theSameStateInAnotherOrderSplitsIntoTheSameParts() {
    NamespaceState state = state();
    NamespaceState.Builder reversed = NamespaceState.newBuilder();
    List<String> names = new java.util.ArrayList<>(state.getLeasesMap().keySet());
    java.util.Collections.reverse(names);
    for (String name : names) {
      reversed.putLeases(name, state.getLeasesOrThrow(name));
      reversed.putHistory(name, state.getHistoryOrThrow(name));
    }
    reversed.putAllLockDelays(state.getLockDelaysMap()).putAllSessions(state.getSessionsMap());
    assertEquals(NamespaceMover.split(state, 1024), NamespaceMover.split(reversed.build(), 1024));
  }
}
