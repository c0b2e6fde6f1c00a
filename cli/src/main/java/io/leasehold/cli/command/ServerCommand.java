package io.leasehold.cli.command;

import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code leasehold server}: runs one node until SIGINT/SIGTERM. */
@Command(
    name = "server",
    mixinStandardHelpOptions = true,
    description = {
      "Runs one Leasehold node until interrupted.",
      "",
      "Standalone (one node, for local work and tests):",
      "  leasehold server --standalone",
      "One node of a three-node cluster:",
      "  leasehold server --id n1 --peers n1=10.0.0.1:7401:7400,n2=10.0.0.2:7401:7400,n3=10.0.0.3:7401:7400",
      "A new node, to be added to a running cluster (Cluster/AddMember):",
      "  leasehold server --join --id n4 --peers n4=10.0.0.4:7401:7400",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      " 0:stopped by SIGINT or SIGTERM",
      " 2:usage error (bad option or configuration)",
      "75:Raft closed this node's division (it stood for election outside the configuration it has); restart it from its data dir"
    },
    sortOptions = false,
    defaultValueProvider = ServerDefaults.class)
public final class ServerCommand implements Callable<Integer> {
  /** EX_TEMPFAIL: the node stopped on its own and a restart from its data dir recovers it. */
  public static final int EXIT_RESTART = 75;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--standalone",
      description = "Run a one-node cluster on loopback (id n1 unless --id is given).")
  boolean standalone;

  @Option(names = "--id", description = "This node's id; must be one of --peers.")
  String id;

  @Option(
      names = "--peers",
      paramLabel = "ID=HOST:PEER_PORT:CLIENT_PORT,...",
      description = "Every member of the cluster, this node included. Also from LEASEHOLD_PEERS.",
      defaultValue = "${env:LEASEHOLD_PEERS}")
  String peers;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "Where the node keeps its Raft log and state (default: ./leasehold-data/<id>).")
  Path dataDir;

  @Option(
      names = "--client-port",
      description = "With --standalone: the gRPC API port (default: ${DEFAULT-VALUE}).")
  int clientPort;

  @Option(
      names = "--peer-port",
      description = "With --standalone: the Raft port (default: ${DEFAULT-VALUE}).")
  int peerPort;

  @Option(
      names = "--listen-host",
      description = "Address to bind both ports to (default: this node's host in --peers).")
  String listenHost;

  @Option(
      names = "--cluster-name",
      description = "Names the Raft group; every member must agree (default: ${DEFAULT-VALUE}).")
  String clusterName;

  @Option(
      names = "--election-timeout-min",
      converter = DurationConverter.class,
      description =
          "Shortest wait before a follower without a leader stands for election (default: ${DEFAULT-VALUE}).")
  Duration electionTimeoutMin;

  @Option(
      names = "--election-timeout-max",
      converter = DurationConverter.class,
      description =
          "Longest such wait; must be below the 2s minimum lease TTL (default: ${DEFAULT-VALUE}).")
  Duration electionTimeoutMax;

  @Option(
      names = "--tick-interval",
      converter = DurationConverter.class,
      description = "How often the leader looks for expired leases (default: ${DEFAULT-VALUE}).")
  Duration tickInterval;

  @Option(
      names = "--stall-threshold",
      converter = DurationConverter.class,
      description =
          "A ticker or apply-loop stall longer than this extends every lease by the stall (default: ${DEFAULT-VALUE}).")
  Duration stallThreshold;

  @Option(
      names = "--request-timeout",
      converter = DurationConverter.class,
      description =
          "How long a request waits for a leader before UNAVAILABLE (default: ${DEFAULT-VALUE}).")
  Duration requestTimeout;

  @Option(
      names = "--snapshot-threshold",
      paramLabel = "ENTRIES",
      description =
          "Take a snapshot and purge the log after this many entries (default: ${DEFAULT-VALUE}).")
  long snapshotThreshold;

  @Option(
      names = "--history-max-events",
      paramLabel = "EVENTS",
      description =
          "Watch history kept per node: at most this many events (default: ${DEFAULT-VALUE}).")
  long historyMaxEvents;

  @Option(
      names = "--history-max-age",
      converter = DurationConverter.class,
      description = "... and none older than this (default: ${DEFAULT-VALUE}).")
  Duration historyMaxAge;

  @Option(
      names = "--watch-queue-limit",
      paramLabel = "EVENTS",
      description =
          "A watcher this many events behind is cut off and told where to resume (default: ${DEFAULT-VALUE}).")
  int watchQueueLimit;

  @Option(
      names = "--watch-progress-interval",
      converter = DurationConverter.class,
      description =
          "An idle watcher is told the applied revision this often (default: ${DEFAULT-VALUE}).")
  Duration watchProgressInterval;

  @Option(
      names = "--watch-message-rate",
      paramLabel = "MESSAGES",
      description =
          "Watch messages per second this node aims to send to all its watchers together; with many watchers "
              + "each message carries the events of a longer interval (at most --watch-max-delay) (default: ${DEFAULT-VALUE}).")
  int watchMessageRate;

  @Option(
      names = "--watch-max-delay",
      converter = DurationConverter.class,
      description =
          "However many watchers share --watch-message-rate, none waits longer than this for its events; from 1ms "
              + "to --watch-progress-interval (default: ${DEFAULT-VALUE}).")
  Duration watchMaxDelay;

  @Option(
      names = "--watch-senders",
      paramLabel = "THREADS",
      description =
          "Threads that send watch messages (default: half the cores, at least 1). More let sending take cores from the "
              + "Raft pipeline in bursts; see docs/performance.md.")
  Integer watchSenders;

  @Option(
      names = "--max-pending-writes",
      paramLabel = "WRITES",
      description =
          "Writes this node lets wait for the leader at once; more get RESOURCE_EXHAUSTED (default: ${DEFAULT-VALUE}).")
  int maxPendingWrites;

  @Option(
      names = "--max-acquires-per-second",
      paramLabel = "CALLS",
      description =
          "Acquire and Register calls each identity (each remote address on a node without authentication) may "
              + "make to this node per second, in bursts of as many; more get RESOURCE_EXHAUSTED with a retry hint "
              + "(default: ${DEFAULT-VALUE}).")
  int maxAcquiresPerSecond;

  @Option(
      names = "--max-watches-per-connection",
      paramLabel = "WATCHES",
      description =
          "Watch streams one client connection may have open on this node; more get RESOURCE_EXHAUSTED "
              + "(default: ${DEFAULT-VALUE}).")
  int maxWatchesPerConnection;

  @Option(
      names = "--max-watches-per-identity",
      paramLabel = "WATCHES",
      description =
          "Watch streams one identity (one remote address on a node without authentication) may have open on "
              + "this node; more get RESOURCE_EXHAUSTED (default: ${DEFAULT-VALUE}).")
  int maxWatchesPerIdentity;

  @Option(
      names = "--max-renew-items",
      paramLabel = "NAMES",
      description =
          "Names in one Renew call, at most 10000; more get INVALID_ARGUMENT (default: ${DEFAULT-VALUE}).")
  int maxRenewItems;

  @Option(
      names = "--max-request-bytes",
      paramLabel = "BYTES",
      description =
          "The largest request message the node reads, at least 1 MiB; larger get RESOURCE_EXHAUSTED from gRPC. "
              + "The default fits a Renew of 10000 names of 512 bytes (default: ${DEFAULT-VALUE}).")
  int maxRequestBytes;

  @Option(
      names = "--max-metadata-bytes",
      paramLabel = "BYTES",
      description =
          "The largest request metadata (headers) the node reads, at least 1 KiB; gRPC refuses more "
              + "(default: ${DEFAULT-VALUE}).")
  int maxMetadataBytes;

  @Option(
      names = "--grpc-keepalive-interval",
      converter = DurationConverter.class,
      description =
          "A client connection silent this long gets an HTTP/2 PING; gRPC raises anything below 10s to 10s "
              + "(default: ${DEFAULT-VALUE}).")
  Duration grpcKeepaliveInterval;

  @Option(
      names = "--grpc-keepalive-timeout",
      converter = DurationConverter.class,
      description =
          "A PING not answered within this closes the connection and cancels its calls and watches "
              + "(default: ${DEFAULT-VALUE}).")
  Duration grpcKeepaliveTimeout;

  @Option(
      names = "--join",
      description =
          "Start without a group of its own and wait to be added to a running cluster; --peers need list only this node.")
  boolean join;

  @Option(
      names = "--lease-groups",
      paramLabel = "N",
      defaultValue = "" + NodeConfig.DEFAULT_LEASE_GROUPS,
      description =
          "Raft groups for leases when the cluster forms (default: ${DEFAULT-VALUE}; 1 is the"
              + " meta group alone, which takes every write). N above 1 adds lease groups 1..N"
              + " beside it, each with a leader of its own, over which namespaces spread. The"
              + " same N on every member; a node started with --join takes the cluster's N.")
  int leaseGroups;

  // From the environment too, so that the container image's HEALTHCHECK, which probes
  // $LEASEHOLD_METRICS_PORT, and the node agree on one port.
  @Option(
      names = "--metrics-port",
      paramLabel = "PORT|off",
      defaultValue = "${env:LEASEHOLD_METRICS_PORT}",
      description =
          "Prometheus metrics (/metrics) and an HTTP health check (/healthz) on this port. Also from "
              + "LEASEHOLD_METRICS_PORT (default: the client port + 2, if free).")
  String metricsPort;

  // etcd serves /metrics and /health over plain HTTP on --listen-metrics-urls http://… while its
  // client URLs require certificates: what health probes without a certificate use.
  @Option(
      names = "--metrics-plaintext",
      description =
          "Serve /metrics and /healthz over plain HTTP even when the client port speaks TLS, for health probes and "
              + "scrapers without a client certificate; the client port keeps TLS and --client-cert-auth.")
  boolean metricsPlaintext;

  @Option(
      names = "--ui",
      paramLabel = "on|off",
      description =
          "The read-only dashboard at /ui on the metrics port (same TLS and identities as the client port; "
              + "needs the reader role when authentication is on). Default: on.")
  OnOff ui = OnOff.on;

  /** A switch spelled on or off (picocli refuses anything else, listing both). */
  enum OnOff {
    on,
    off
  }

  /** Accepted so that an older start script still starts; replication is Ratis's own now. */
  @Option(
      names = "--commit-push-delay",
      converter = DurationConverter.class,
      hidden = true,
      description = "Removed: ignored, with a warning.")
  Duration commitPushDelay;

  @Option(
      names = "--lease-group-size",
      paramLabel = "R",
      defaultValue = "0",
      description =
          "How many of the peers each lease group sits on when the cluster forms (default:"
              + " ${DEFAULT-VALUE}; 0 is every peer, else an odd number from 3 up to the peers,"
              + " with --lease-groups above 1). R puts lease group k on R consecutive peers of"
              + " --peers; a node serves the groups it does not host through their members. The"
              + " same R on every member.")
  int leaseGroupSize;

  /** For the fault tests: small parts make namespace moves stage their state in parts. */
  @Option(
      names = "--move-part-bytes",
      paramLabel = "BYTES",
      hidden = true,
      description =
          "The most of a moving namespace's state one Raft entry carries; a larger state is staged"
              + " in parts (default 1 MiB, at most 3 MiB).")
  Integer movePartBytes;

  /** For the fault tests only: a file that names Raft traffic to hold (FaultControl). */
  @Option(
      names = "--fault-control",
      paramLabel = "FILE",
      hidden = true,
      description =
          "Fault tests only: hold this node's Raft traffic as FILE says. Never in production.")
  Path faultControl;

  @Option(
      names = "--trace-writes",
      paramLabel = "FILE",
      description =
          "Diagnostics: append one line per step of each log entry through this node (docs/performance.md).")
  Path traceWrites;

  // etcd's names. Every file is read again when it changes, without a restart.
  @Option(
      names = "--tls-cert-file",
      paramLabel = "FILE",
      description =
          "This node's certificate (PEM) on the client and metrics ports; with --tls-key-file it turns TLS on there.")
  Path tlsCertFile;

  @Option(
      names = "--tls-key-file",
      paramLabel = "FILE",
      description = "The private key of --tls-cert-file (PKCS#8 PEM).")
  Path tlsKeyFile;

  @Option(
      names = "--tls-ca-file",
      paramLabel = "FILE",
      description =
          "CA certificates (PEM) that verify client certificates on the client and metrics ports.")
  Path tlsCaFile;

  @Option(
      names = "--client-cert-auth",
      description =
          "Require a client certificate that --tls-ca-file verifies (mutual TLS; recommended in production).")
  boolean clientCertAuth;

  @Option(
      names = "--auth-token-file",
      paramLabel = "FILE",
      description =
          "Bearer tokens for clients without a certificate: one token,identity line each (read again when it changes); "
              + "turns authentication on.")
  Path authTokenFile;

  @Option(
      names = "--initial-admin",
      paramLabel = "IDENTITY",
      description =
          "The identity granted the admin role when none has it yet (default: the first --auth-token-file entry's). "
              + "Needs --client-cert-auth or --auth-token-file.")
  String initialAdmin;

  @Option(
      names = "--peer-tls-cert-file",
      paramLabel = "FILE",
      description =
          "This node's certificate (PEM) on the Raft port, for peers both as server and as client; "
              + "with --peer-tls-key-file and --peer-tls-ca-file it turns mutual TLS on between members.")
  Path peerTlsCertFile;

  @Option(
      names = "--peer-tls-key-file",
      paramLabel = "FILE",
      description = "The private key of --peer-tls-cert-file (PKCS#8 PEM).")
  Path peerTlsKeyFile;

  @Option(
      names = "--peer-tls-ca-file",
      paramLabel = "FILE",
      description = "CA certificates (PEM) that verify the other members' certificates.")
  Path peerTlsCaFile;

  /** Runs until shutdown; tests use {@link #build} and drive the node themselves. */
  @Override
  public Integer call() throws Exception {
    NodeConfig config = build();
    LeaseholdNode node = LeaseholdNode.start(config);
    CompletableFuture<Void> stopped = new CompletableFuture<>();
    Thread hook =
        new Thread(
            () -> {
              node.stop(); // hands its leaderships over first
              stopped.complete(null);
            },
            "leasehold-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    spec.commandLine()
        .getOut()
        .printf(
            "leasehold node %s: clients on %s, peers on %s, data in %s%s%s%n",
            config.id(),
            config.self().clientAddress(),
            config.self().peerAddress(),
            config.dataDir().toAbsolutePath(),
            node.metricsPort().isPresent()
                ? ", metrics on "
                    + (node.metricsTls() ? "https" : "http")
                    + "://"
                    + config.bindHost()
                    + ":"
                    + node.metricsPort().getAsInt()
                    + "/metrics"
                : "",
            config.join() ? " (joining: waiting to be added)" : "");
    spec.commandLine().getOut().flush();
    CompletableFuture<String> divisionClosed = node.divisionClosed();
    CompletableFuture.anyOf(stopped, divisionClosed).join();
    if (stopped.isDone()) {
      return LeaseholdCommand.EXIT_OK;
    }
    // A node whose division Ratis closed serves nothing until it starts again; the restart
    // (by systemd, Kubernetes or Docker's restart policy) recovers it from its data dir.
    spec.commandLine()
        .getErr()
        .println(
            "leasehold server: "
                + divisionClosed.join()
                + "; exiting with code "
                + EXIT_RESTART
                + " so that a supervisor restarts it from its data dir");
    spec.commandLine().getErr().flush();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException alreadyExiting) {
      // The hook is running and closes the node itself.
    }
    node.close();
    return EXIT_RESTART;
  }

  /**
   * The node configuration these options describe; IllegalArgumentException names the bad option.
   */
  public NodeConfig build() {
    NodeConfig.Builder b;
    if (standalone) {
      if (peers != null && !peers.isBlank()) {
        throw new IllegalArgumentException("--standalone and --peers are mutually exclusive");
      }
      if (join) {
        throw new IllegalArgumentException(
            "--standalone and --join are mutually exclusive (a standalone node is its own cluster)");
      }
      String nodeId = id == null ? "n1" : id;
      b =
          NodeConfig.builder()
              .id(nodeId)
              .peers(List.of(new Peer(nodeId, "127.0.0.1", peerPort, clientPort)));
    } else {
      if (peers == null || peers.isBlank()) {
        throw new IllegalArgumentException(
            "--peers is required (or use --standalone for a one-node cluster)");
      }
      if (id == null) {
        throw new IllegalArgumentException("--id is required with --peers");
      }
      b = NodeConfig.builder().id(id).peers(peers);
    }
    String nodeId = id == null ? "n1" : id;
    b.dataDir(dataDir != null ? dataDir : Path.of("leasehold-data", nodeId))
        .clusterName(clusterName)
        .electionTimeout(electionTimeoutMin, electionTimeoutMax)
        .tickInterval(tickInterval)
        .stallThreshold(stallThreshold)
        .requestTimeout(requestTimeout)
        .snapshotThreshold(snapshotThreshold)
        .history(historyMaxEvents, historyMaxAge)
        .watchQueueLimit(watchQueueLimit)
        .watchProgressInterval(watchProgressInterval)
        .maxPendingWrites(maxPendingWrites)
        .maxAcquiresPerSecond(maxAcquiresPerSecond)
        .maxWatchesPerConnection(maxWatchesPerConnection)
        .maxWatchesPerIdentity(maxWatchesPerIdentity)
        .maxRenewItems(maxRenewItems)
        .maxRequestBytes(maxRequestBytes)
        .maxMetadataBytes(maxMetadataBytes)
        .watchMessageRate(watchMessageRate)
        .watchMaxDelay(watchMaxDelay)
        .grpcKeepaliveInterval(grpcKeepaliveInterval)
        .grpcKeepaliveTimeout(grpcKeepaliveTimeout)
        .join(join)
        .leaseGroups(leaseGroups)
        .leaseGroupSize(leaseGroupSize);
    if (commitPushDelay != null) {
      spec.commandLine()
          .getErr()
          .println(
              "leasehold server: --commit-push-delay is ignored: followers hear of commits "
                  + "through Raft's own appends and heartbeats; remove the option");
    }
    if (movePartBytes != null) {
      b.movePartBytes(movePartBytes);
    }
    if (faultControl != null) {
      b.faultControl(faultControl);
    }
    if (traceWrites != null) {
      b.traceWrites(traceWrites);
    }
    b.tlsCertFile(tlsCertFile)
        .tlsKeyFile(tlsKeyFile)
        .tlsCaFile(tlsCaFile)
        .clientCertAuth(clientCertAuth)
        .peerTlsCertFile(peerTlsCertFile)
        .peerTlsKeyFile(peerTlsKeyFile)
        .peerTlsCaFile(peerTlsCaFile)
        .metricsPlaintext(metricsPlaintext)
        .ui(ui == OnOff.on)
        .authTokenFile(authTokenFile)
        .initialAdmin(initialAdmin);
    if (watchSenders != null) {
      b.watchSenders(watchSenders);
    }
    if (metricsPort == null
        || metricsPort.isBlank()) { // an empty LEASEHOLD_METRICS_PORT is no setting
      defaultMetricsPort(b);
    } else if (!metricsPort.equalsIgnoreCase("off")) {
      try {
        int port = Integer.parseInt(metricsPort.trim());
        if (port < 1) {
          throw new NumberFormatException();
        }
        b.metricsPort(port);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "metrics-port: expected a port (1-65535) or off, got \"" + metricsPort + "\"");
      }
    }
    if (listenHost != null) {
      b.listenHost(listenHost);
    }
    return b.build();
  }

  /**
   * The client port + 2 (7402 next to 7400/7401), if that port is free: a default must not stop a
   * node from starting, so a port already taken leaves metrics off with a warning. Ask for a port
   * explicitly to make a failure to bind it fatal.
   */
  private void defaultMetricsPort(NodeConfig.Builder b) {
    NodeConfig base = b.build();
    int port = base.self().clientPort() + 2;
    String why = null;
    if (port > 65535 || port == base.self().peerPort()) {
      why = "it is not a usable port here";
    } else {
      try (ServerSocket probe = new ServerSocket()) {
        probe.bind(new InetSocketAddress(base.bindHost(), port));
      } catch (IOException e) {
        why = "it is in use";
      }
    }
    if (why == null) {
      b.metricsPort(port);
    } else {
      spec.commandLine()
          .getErr()
          .printf(
              "leasehold server: metrics are off: the default metrics port %d (client port + 2) %s; set --metrics-port%n",
              port, why);
    }
  }
}
