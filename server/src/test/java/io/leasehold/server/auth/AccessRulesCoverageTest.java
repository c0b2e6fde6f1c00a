package io.leasehold.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No RPC ships unguarded: every service a node serves (health and reflection aside) is one the
 * rules cover, and every method of those services has a rule.
 */
class AccessRulesCoverageTest {
  @TempDir Path dir;

  @Test
  void everyMethodOfEveryCoveredServiceHasARule() {
    List<String> missing = new ArrayList<>();
    for (ServiceDescriptor s : AccessRules.services()) {
      for (MethodDescriptor<?, ?> m : s.getMethods()) {
        if (AccessRules.of(m.getFullMethodName()).isEmpty()) {
          missing.add(m.getFullMethodName());
        }
      }
    }
    assertEquals(List.of(), missing, "methods without an authorization rule");
  }

  @Test
  void everyServiceANodeServesIsCoveredOrExempt() throws IOException {
    try (TestCluster cluster = TestCluster.start(1, dir)) {
      TreeSet<String> covered = new TreeSet<>();
      AccessRules.services().forEach(s -> covered.add(s.getName()));
      TreeSet<String> served = new TreeSet<>(cluster.node("n1").servedServices());
      List<String> unguarded =
          served.stream().filter(s -> !covered.contains(s) && !Authorizer.exempt(s)).toList();
      assertEquals(List.of(), unguarded, "services served without authorization rules");
      assertTrue(served.containsAll(covered), "every covered service is served: " + served);
      assertTrue(served.contains("grpc.health.v1.Health"), served::toString);
    }
  }
}
