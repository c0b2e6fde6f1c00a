package io.leasehold.jepsen.run;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which schedules have a node that is a member of every lease group, as the cluster forms. */
class FormationTest {
  @Test
  void aNodeHostsEveryGroupUnlessThreeGroupsOfThreeSitOnFiveNodes() {
    assertTrue(JepsenRun.someNodeHostsEveryGroup(3, 3, 0), "groups on every node");
    assertTrue(JepsenRun.someNodeHostsEveryGroup(5, 2, 3), "subsets: n1 is in both groups");
    assertFalse(JepsenRun.someNodeHostsEveryGroup(5, 3, 3), "spread: n1-n3, n4 n5 n1, n2-n4");
    assertFalse(JepsenRun.someNodeHostsEveryGroup(9, 3, 3), "n1-n3, n4-n6, n7-n9");
    assertTrue(JepsenRun.someNodeHostsEveryGroup(3, 3, 3), "three groups of three on three");
  }
}
