package io.leasehold.server.fuzz;

import io.grpc.ManagedChannel;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;

/**
 * What one run of the API fuzz test talks to, and as whom: how to start a cluster (twice per run:
 * the fuzzed one and the fresh one the accepted requests are replayed on) and, for each client
 * identity, how to open a channel to one of its nodes.
 *
 * <p>Every call of a run is sent as one of {@link #identities()}, chosen by the generator; the
 * replay sends each accepted call again as the same identity to the same node. The first identity
 * is also the observer: the harness uses it to warm up, to check every node afterwards and to read
 * the state it compares, so it must be allowed every call.
 *
 * @param name shown in reports, e.g. "plaintext" or "mtls-roles"
 * @param clusterFactory starts a cluster in an empty directory of its own; whatever else the
 *     variant needs (certificates, say) it keeps under that directory too, where the channel
 *     factories find it again
 * @param identities at least one; the first is the observer
 * @param authenticated whether the cluster authenticates its callers: the holder of a lease is then
 *     its caller, and a call an identity may make may still be refused (PERMISSION_DENIED) for
 *     naming another holder or for a lease another identity holds; without authentication no call
 *     it may make ever is
 */
public record FuzzVariant(
    String name, ClusterFactory clusterFactory, List<Identity> identities, boolean authenticated) {
  /** A variant without authentication. */
  public FuzzVariant(String name, ClusterFactory clusterFactory, List<Identity> identities) {
    this(name, clusterFactory, identities, false);
  }

  public FuzzVariant {
    if (identities.isEmpty()) {
      throw new IllegalArgumentException(
          "a variant needs at least one identity (the first is the observer)");
    }
    identities = List.copyOf(identities);
  }

  /**
   * Starts the nodes of a cluster, with {@link FuzzClusters#settings} applied to each, and returns
   * once one leads.
   */
  @FunctionalInterface
  public interface ClusterFactory {
    TestCluster start(Path dir) throws IOException;
  }

  /**
   * Opens a channel to node {@code nodeId} of {@code cluster}, started by the factory in {@code
   * dir}, as one identity.
   */
  @FunctionalInterface
  public interface ChannelFactory {
    ManagedChannel open(TestCluster cluster, Path dir, String nodeId);
  }

  /**
   * A client identity.
   *
   * @param mayCall which calls (full method names, e.g. {@code leasehold.v1.Admin/Ban}) it is
   *     allowed: a call it may not make must be refused with PERMISSION_DENIED (or
   *     UNAUTHENTICATED), and one it may make must never be
   */
  public record Identity(String name, ChannelFactory channels, Predicate<String> mayCall) {
    /** An identity allowed every call. */
    public static Identity unrestricted(String name, ChannelFactory channels) {
      return new Identity(name, channels, method -> true);
    }
  }
}
