package io.leasehold.spring.boot;

import io.leasehold.client.ClusterStatus;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.MemberStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The cluster as the client sees it, under the health contributor {@code leasehold}: UP when a
 * member answers as leader, DOWN when none does or the cluster cannot be reached within the
 * client's request timeout. The details name the leader, its term, and every member's role and
 * whether it keeps up ({@link ClusterStatus#healthy}).
 */
public class LeaseholdHealthIndicator extends AbstractHealthIndicator {
  private final LeaseholdClient client;

  /**
   * An indicator asking through {@code client}.
   *
   * @param client the client whose cluster is checked
   */
  public LeaseholdHealthIndicator(LeaseholdClient client) {
    super("Leasehold health check failed");
    this.client = Objects.requireNonNull(client, "client");
  }

  /**
   * Asks every member for its status.
   *
   * @param builder the health being built
   * @throws Exception if the cluster could not be asked (the health is then DOWN with it)
   */
  @Override
  protected void doHealthCheck(Health.Builder builder) throws Exception {
    ClusterStatus status = client.clusterStatus().join();
    Map<String, Object> members = new LinkedHashMap<>();
    for (MemberStatus m : status.members()) {
      Map<String, Object> member = new LinkedHashMap<>();
      member.put("role", m.role().toString());
      member.put("healthy", status.healthy(m));
      m.error().ifPresent(e -> member.put("error", e));
      members.put(m.id(), member);
    }
    builder.withDetail("group", status.groupId()).withDetail("members", members);
    status
        .leader()
        .ifPresentOrElse(
            leader ->
                builder.up().withDetail("leader", leader.id()).withDetail("term", leader.term()),
            () -> builder.down().withDetail("leader", "none answered"));
  }
}
