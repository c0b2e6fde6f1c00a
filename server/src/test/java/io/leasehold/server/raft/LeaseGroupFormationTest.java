package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.server.Peer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;

/** Which peers each lease group forms on, and which one its priority names. */
class LeaseGroupFormationTest {
  private static List<Peer> peers(int n) {
    List<Peer> peers = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      peers.add(new Peer("n" + i, "127.0.0.1", 7400 + 10 * i + 1, 7400 + 10 * i));
    }
    return peers;
  }

  /** The members' ids, the one with priority 1 marked with a star. */
  private static String shape(List<RaftPeer> members) {
    return members.stream()
        .map(p -> p.getId() + (p.getPriority() == 1 ? "*" : ""))
        .collect(Collectors.joining(","));
  }

  @Test
  void nineNodesAndThreeGroupsOfThreeMakeThreeDisjointGroupsEachLedByADifferentSlot() {
    List<Peer> nine = peers(9);
    assertEquals("n1*,n2,n3", shape(LeaseGroups.formation(nine, 1, 3)));
    assertEquals("n4,n5*,n6", shape(LeaseGroups.formation(nine, 2, 3)));
    assertEquals("n7,n8,n9*", shape(LeaseGroups.formation(nine, 3, 3)));
    // The meta group's priority goes to the first peer that leads no lease group.
    assertEquals(1, LeaseGroups.metaLeadSlot(nine, 3, 3));
  }

  @Test
  void groupsWrapAroundThePeersWhenTheyDoNotDivideThem() {
    List<Peer> five = peers(5);
    assertEquals("n1*,n2,n3", shape(LeaseGroups.formation(five, 1, 3)));
    assertEquals("n4,n5*,n1", shape(LeaseGroups.formation(five, 2, 3)));
    assertEquals(1, LeaseGroups.metaLeadSlot(five, 2, 3));
    // Three groups of three on three nodes: every node in every group, each leading one, as
    // without a size.
    List<Peer> three = peers(3);
    for (int k = 1; k <= 3; k++) {
      assertEquals(
          shape(LeaseGroups.formation(three, k, 0)),
          shape(LeaseGroups.formation(three, k, 3)),
          "group " + k);
    }
  }

  @Test
  void withoutASizeEveryGroupSitsOnEveryPeerAndTheMetaGroupTakesTheNextSlot() {
    List<Peer> three = peers(3);
    assertEquals("n1,n2*,n3", shape(LeaseGroups.formation(three, 2, 0)));
    assertEquals(3, LeaseGroups.metaLeadSlot(three, 3, 0));
  }
}
