package io.leasehold.server.fuzz;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The node settings every fuzzed cluster runs with, and the variants: {@link #plaintext()}, run by
 * {@link ApiFuzzTest}, and {@link #mutualTls} for variants with client certificates.
 *
 * <p>A variant with authentication (mutual TLS identities and roles) is one more container:
 *
 * <pre>{@code
 * class AuthApiFuzzTest extends ApiFuzzing {
 *   @Override
 *   protected FuzzVariant variant() {
 *     List<String> clients = List.of("admin", "writer", "reader");   // the first is the observer
 *     return new FuzzVariant("mtls-roles",
 *         dir -> FuzzClusters.startMutualTls(dir, clients, (id, b) -> b.roles(...)),  // whatever grants the roles
 *         List.of(new FuzzVariant.Identity("admin", FuzzClusters.channelAs("admin"), method -> true),
 *                 new FuzzVariant.Identity("writer", FuzzClusters.channelAs("writer"), method -> !method.contains("/Admin/")),
 *                 new FuzzVariant.Identity("reader", FuzzClusters.channelAs("reader"), READS::contains)));
 *   }
 * }
 * }</pre>
 *
 * Each call then goes out as an identity the generator picks; a call an identity may not make must
 * be refused with PERMISSION_DENIED or UNAUTHENTICATED (and one it may make never is), and the
 * replay sends each accepted call again as the same identity, so the state comparison also shows
 * that a refused call changed nothing.
 */
public final class FuzzClusters {
  private FuzzClusters() {}

  /**
   * What a variant's cluster factory applies to every node, on top of its own settings.
   *
   * <p>The leader's expiry ticker runs once a day: no lease expires and no lock-delay or timed ban
   * is lifted during a run, so the state after it is a function of the accepted requests alone and
   * the replay can be compared with it exactly. (The valid requests the generator makes use long
   * TTLs anyway; this also covers the short ones that random and mutated requests produce.) Watch
   * progress every 100 ms lets a fuzzed Watch see its first message soon.
   */
  public static NodeConfig.Builder settings(NodeConfig.Builder b) {
    return b.tickInterval(Duration.ofDays(1)).watchProgressInterval(Duration.ofMillis(100));
  }

  /** Three plaintext nodes; one anonymous client allowed everything. */
  public static FuzzVariant plaintext() {
    return new FuzzVariant(
        "plaintext",
        dir -> TestCluster.start(3, dir, FuzzClusters::settings),
        List.of(
            FuzzVariant.Identity.unrestricted(
                "anonymous",
                (cluster, dir, node) ->
                    Grpc.newChannelBuilder(
                            cluster.node(node).clientAddress(), InsecureChannelCredentials.create())
                        .build())));
  }

  /**
   * Three nodes with mutual TLS on every port and client certificates required; each client an
   * identity allowed everything.
   */
  public static FuzzVariant mutualTls(List<String> clients) {
    return new FuzzVariant(
        "mutual-tls",
        dir -> startMutualTls(dir, clients, (id, b) -> b),
        clients.stream().map(c -> FuzzVariant.Identity.unrestricted(c, channelAs(c))).toList());
  }

  /**
   * Makes a CA, a certificate for each node and for each client under {@code dir/certs} ({@code
   * ca.pem}, {@code <name>.pem}, {@code <name>-key.pem}), and starts three nodes with mutual TLS on
   * the client and Raft ports and client certificates required, plus {@code more}.
   */
  public static TestCluster startMutualTls(
      Path dir,
      List<String> clients,
      BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> more)
      throws IOException {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    for (String id : List.of("n1", "n2", "n3")) {
      TestCerts.node(certs, ca, id);
    }
    for (String client : clients) {
      TestCerts.node(certs, ca, client);
    }
    return TestCluster.start(
        3,
        dir.resolve("data"),
        (id, b) ->
            more.apply(
                id,
                settings(b)
                    .tlsCertFile(certs.resolve(id + ".pem"))
                    .tlsKeyFile(certs.resolve(id + "-key.pem"))
                    .tlsCaFile(ca.pem())
                    .clientCertAuth(true)
                    .peerTlsCertFile(certs.resolve(id + ".pem"))
                    .peerTlsKeyFile(certs.resolve(id + "-key.pem"))
                    .peerTlsCaFile(ca.pem())));
  }

  /**
   * Channels that present {@code client}'s certificate from {@code dir/certs} ({@link
   * #startMutualTls}).
   */
  public static FuzzVariant.ChannelFactory channelAs(String client) {
    return (cluster, dir, node) -> {
      Path certs = dir.resolve("certs");
      try {
        return Grpc.newChannelBuilder(
                cluster.node(node).clientAddress(),
                TlsChannelCredentials.newBuilder()
                    .trustManager(certs.resolve("ca.pem").toFile())
                    .keyManager(
                        certs.resolve(client + ".pem").toFile(),
                        certs.resolve(client + "-key.pem").toFile())
                    .build())
            .build();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    };
  }
}
