package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.statemachine.core.InvalidArgumentException;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;

/**
 * AddMember's arguments: a member is added only under an id a node can have and at addresses it can
 * be reached at. An id with '=' or surrounding spaces, a host with a space or a port with a sign
 * used to pass (found by the API fuzz test), and the cluster then waited for a member that could
 * never answer.
 */
class ValidMemberTest {
  @Test
  void aMemberIsAddedUnderTheIdAndAddressesGiven() {
    RaftPeer p = ClusterAdmin.validMember("n4", "10.0.0.4:7401", "10.0.0.4:7400");
    assertEquals("n4", p.getId().toString());
    assertEquals("10.0.0.4:7401", p.getAddress());
    assertEquals(
        "n4",
        ClusterAdmin.validMember("n4", "node-4.example.com:7401", "node-4.example.com:7400")
            .getId()
            .toString());
    assertEquals(
        "n4", ClusterAdmin.validMember("n4", "[::1]:7401", "[::1]:7400").getId().toString());
    assertEquals(
        "n_4",
        ClusterAdmin.validMember("n_4", "leasehold_n4:7401", "leasehold_n4:7400")
            .getId()
            .toString());
  }

  @Test
  void anIdANodeCannotHaveIsRefused() {
    for (String id :
        new String[] {"a=b", " n9", "n9 ", "n 9", "-n9", "", "x".repeat(65), "n9=127.0.0.1:1:2"}) {
      assertRefused("member.id", id, "127.0.0.1:7401", "127.0.0.1:7400");
    }
  }

  @Test
  void anAddressNoNodeCanHaveIsRefused() {
    for (String address :
        new String[] {
          "bad host:7401",
          "127.0.0.1:+7401",
          "127.0.0.1: 7401",
          "127.0.0.1:07401x",
          "a/b:7401",
          "::1:7401",
          "[::1:7401",
          "host..name:7401",
          "127.0.0.1:0",
          "127.0.0.1:65536",
          ":7401",
          "host:"
        }) {
      assertRefused("member.peer_address", "n9", address, "127.0.0.1:7400");
      assertRefused("member.client_address", "n9", "127.0.0.1:7401", address);
    }
  }

  @Test
  void thePortsMustDiffer() {
    assertRefused("member", "n9", "127.0.0.1:7400", "127.0.0.1:7400");
  }

  private static void assertRefused(String field, String id, String peer, String client) {
    InvalidArgumentException e =
        assertThrows(
            InvalidArgumentException.class,
            () -> ClusterAdmin.validMember(id, peer, client),
            "[" + id + "] " + peer + " " + client);
    assertTrue(
        e.getMessage().startsWith(field + ":"),
        "[" + id + "] " + peer + " " + client + ": " + e.getMessage());
  }
}
