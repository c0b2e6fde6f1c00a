package io.leasehold.jepsen.workload;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.jepsen.cluster.Certificates;
import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.nemesis.ClientFaults;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

/** What workloads share: the cluster, the recorder, and the client-side fault switch. */
public record WorkloadContext(Cluster cluster, Recorder recorder, ClientFaults clientFaults) {
  /**
   * An SDK client of every node; leases are not released on close (closing is how a client
   * "crashes"). With TLS it presents the certificate whose CN is {@code holder}, an identity the
   * operator granted the client role.
   */
  public LeaseholdClient client(String holder) {
    return client(holder, cluster.endpoints(), true);
  }

  /**
   * As {@link #client(String)}, with the builder changed by {@code tweak} (a session's TTL, say).
   */
  public LeaseholdClient client(String holder, UnaryOperator<LeaseholdClientBuilder> tweak) {
    return client(holder, cluster.endpoints(), true, tweak);
  }

  public LeaseholdClient client(String holder, List<String> endpoints, boolean discoverMembers) {
    return client(holder, endpoints, discoverMembers, UnaryOperator.identity());
  }

  private LeaseholdClient client(
      String holder,
      List<String> endpoints,
      boolean discoverMembers,
      UnaryOperator<LeaseholdClientBuilder> tweak) {
    LeaseholdClientBuilder b =
        LeaseholdClient.builder()
            .endpoints(endpoints)
            .holder(holder)
            .discoverMembers(discoverMembers)
            .requestTimeout(Duration.ofSeconds(5))
            .attemptTimeout(Duration.ofSeconds(2))
            .interceptor(clientFaults)
            .releaseOnClose(false);
    cluster
        .tls()
        .ifPresent(
            tls -> {
              cluster.authorize(holder);
              Certificates.Pair own = tls.client(holder);
              b.tls(tls.ca(), own.cert(), own.key());
            });
    return tweak.apply(b).build();
  }
}
