package io.leasehold.cli.command;

import io.grpc.ChannelCredentials;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.ClientTls;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.client.internal.ConnectionDiagnosis;
import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.server.backup.NodeBackup;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code leasehold backup DIR}: a node takes a snapshot that includes every write acknowledged
 * before it, and streams it here; the backup is checked (size, MD5) before it is kept.
 */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    description = {
      "Takes a consistent backup of the cluster's state from one node into DIR (created; must hold no backup).",
      "On a cluster with lease groups it holds a snapshot of every group.",
      "Restore it with: leasehold restore --from DIR --data-dir NEW_DIR (and --peers, for lease groups)",
      ""
    },
    sortOptions = false)
public final class BackupCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "DIR", description = "Directory to write the backup into.")
  Path dir;

  @Option(
      names = {"-e", "--endpoint"},
      paramLabel = "HOST:PORT",
      description =
          "The node to back up from. Default: the first node that answers of --endpoints if given, else of "
              + "$LEASEHOLD_ENDPOINT, else of $LEASEHOLD_ENDPOINTS (or "
              + LeaseholdCommand.DEFAULT_ENDPOINTS
              + "); "
              + "any member's backup holds every acknowledged write.")
  String endpoint;

  // Not --timeout: that is every command's per-request timeout (10s); a backup streams the whole
  // state.
  @Option(
      names = "--backup-timeout",
      converter = DurationConverter.Positive.class,
      defaultValue = "5m",
      paramLabel = "DURATION",
      description = "How long the whole backup may take (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  /** How long a node may take to answer a status call before the next node is tried. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

  @Override
  public Integer call() {
    if (given("--timeout")) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--timeout: backup does not use it; --backup-timeout (default "
              + spec.findOption("--backup-timeout").defaultValue()
              + ") bounds the whole backup");
    }
    Source source = source();
    List<String> nodes = source.nodes();
    for (String node : nodes) {
      if (!ClientCommand.isHostPort(node)) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), source.name() + ": '" + node + "' is not host:port");
      }
    }
    ClientTls tls =
        spec.root().userObject() instanceof LeaseholdCommand g ? g.tls() : ClientTls.PLAINTEXT;
    ChannelCredentials credentials = tls.credentials();
    ConnectionDiagnosis diagnosis = new ConnectionDiagnosis(credentials, tls.caCert(), tls.cert());
    Map<String, ConnectionDiagnosis.Diagnosis> cannotConnect = new LinkedHashMap<>();
    Deadline deadline = Deadline.after(timeout.toMillis(), TimeUnit.MILLISECONDS);
    StatusRuntimeException unavailable = null;
    for (String node : nodes) {
      ManagedChannel channel = Grpc.newChannelBuilder(node.trim(), credentials).build();
      try {
        StatusRuntimeException silent = probe(channel, deadline);
        if (silent != null) {
          unavailable = silent;
          diagnosis
              .diagnose(node.trim(), silent.getStatus())
              .ifPresent(d -> cannotConnect.put(node.trim(), d));
          continue;
        }
        StatusResponse status =
            ClusterGrpc.newBlockingStub(channel)
                .withDeadline(deadline)
                .status(StatusRequest.getDefaultInstance());
        NodeBackup.Manifest m =
            status.getLeaseGroupSize() > 0
                ? backupOfSubsets(channel, status, credentials, deadline)
                : NodeBackup.receive(
                    ClusterGrpc.newBlockingStub(channel)
                        .withDeadline(deadline)
                        .backup(
                            BackupRequest.newBuilder()
                                .setEveryGroup(true)
                                .setTimeout(
                                    com.google.protobuf.Duration.newBuilder()
                                        .setSeconds(
                                            Math.max(1, deadline.timeRemaining(TimeUnit.SECONDS))))
                                .build()),
                    dir);
        spec.commandLine()
            .getOut()
            .printf(
                "backup of node %s at term %d, index %d (%d bytes, md5 %s) written to %s%n",
                m.nodeId(), m.term(), m.index(), m.sizeBytes(), m.md5(), dir.toAbsolutePath());
        for (NodeBackup.GroupFile g : m.leaseGroups()) {
          spec.commandLine()
              .getOut()
              .printf(
                  "  lease group %d at term %d, index %d (%d bytes, md5 %s)%n",
                  g.number(), g.term(), g.index(), g.sizeBytes(), g.md5());
        }
        return LeaseholdCommand.EXIT_OK;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
          return fail(node + ": " + describe(e), LeaseholdCommand.EXIT_FAILED);
        }
        // Not reached (or not serving): any other member's backup is as good.
        unavailable = e;
      } catch (IOException e) {
        return fail(e.getMessage(), LeaseholdCommand.EXIT_FAILED);
      } finally {
        channel.shutdownNow();
      }
    }
    if (unavailable != null && cannotConnect.size() == nodes.size()) {
      // Every node failed to connect for a reason the client can name (TLS settings, a name): say
      // which.
      throw diagnosis.exception("Backup", cannotConnect, unavailable.getStatus());
    }
    return fail(
        "no node answered at "
            + String.join(",", nodes)
            + " (last error "
            + describe(unavailable)
            + ")",
        LeaseholdCommand.EXIT_UNREACHABLE);
  }

  /**
   * A node that accepts connections but never answers (hung, or behind a firewall that drops its
   * replies) would hold the backup until its deadline, minutes away: it is asked something cheap
   * first. Returns why it is passed over (unreachable, or silent for {@link #PROBE_TIMEOUT}), or
   * null when it answered.
   */
  private static StatusRuntimeException probe(ManagedChannel channel, Deadline deadline) {
    long millis = Math.min(PROBE_TIMEOUT.toMillis(), deadline.timeRemaining(TimeUnit.MILLISECONDS));
    try {
      ClusterGrpc.newBlockingStub(channel)
          .withDeadlineAfter(millis, TimeUnit.MILLISECONDS)
          .status(StatusRequest.getDefaultInstance());
      return null;
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
        return e;
      }
      throw e;
    }
  }

  /**
   * Where lease groups sit on subsets of the nodes no node hosts every group: each lease group's
   * snapshot is asked of one of its members (its leader first), then the meta group's of {@code
   * home}, last. Each request carries the placement version the backup began at: a namespace placed
   * or moved meanwhile fails the backup (take it again) rather than leave it in two snapshots or in
   * none.
   */
  private NodeBackup.Manifest backupOfSubsets(
      ManagedChannel home, StatusResponse status, ChannelCredentials credentials, Deadline deadline)
      throws IOException {
    Map<String, String> addresses = new LinkedHashMap<>();
    status.getMembersList().forEach(m -> addresses.put(m.getId(), m.getClientAddress()));
    Map<Integer, List<String>> groups = new java.util.TreeMap<>();
    for (io.leasehold.proto.v1.GroupStatus g : status.getGroupsList()) {
      if (g.getNumber() > 0) {
        groups.put(
            g.getNumber(),
            leaderFirst(
                g.getLeaderId(),
                g.getMembersList().stream()
                    .map(io.leasehold.proto.v1.GroupMember::getId)
                    .toList()));
      }
    }
    for (io.leasehold.proto.v1.GroupRoute r : status.getReachedGroupsList()) {
      groups.put(r.getNumber(), leaderFirst(r.getLeaderId(), r.getMemberIdsList()));
    }
    long placementVersion = status.getPlacementVersion();
    List<ManagedChannel> opened = new ArrayList<>();
    try {
      List<java.util.function.Supplier<Iterator<BackupChunk>>> parts = new ArrayList<>();
      groups.forEach(
          (group, members) ->
              parts.add(
                  () -> {
                    StatusRuntimeException last = null;
                    for (String member : members) {
                      String address = addresses.get(member);
                      if (address == null || address.isEmpty()) {
                        continue;
                      }
                      ManagedChannel c = Grpc.newChannelBuilder(address, credentials).build();
                      opened.add(c);
                      try {
                        Iterator<BackupChunk> it =
                            backupOf(c, deadline, List.of(group), placementVersion);
                        if (!it.hasNext()) {
                          return it; // a group that has applied no write has no state
                        }
                        return prepend(it.next(), it);
                      } catch (StatusRuntimeException e) {
                        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
                          throw e;
                        }
                        last = e; // the next member
                      }
                    }
                    throw Status.UNAVAILABLE
                        .withDescription(
                            "no member of lease group "
                                + group
                                + " "
                                + members
                                + " answered"
                                + (last == null ? "" : " (last error " + describe(last) + ")"))
                        .asRuntimeException();
                  }));
      parts.add(() -> backupOf(home, deadline, List.of(0), placementVersion));
      return NodeBackup.receive(concat(parts), dir);
    } finally {
      opened.forEach(ManagedChannel::shutdownNow);
    }
  }

  private Iterator<BackupChunk> backupOf(
      ManagedChannel channel, Deadline deadline, List<Integer> groups, long placementVersion) {
    return ClusterGrpc.newBlockingStub(channel)
        .withDeadline(deadline)
        .backup(
            BackupRequest.newBuilder()
                .setEveryGroup(true)
                .addAllGroups(groups)
                .setPlacementVersion(placementVersion)
                .setTimeout(
                    com.google.protobuf.Duration.newBuilder()
                        .setSeconds(Math.max(1, deadline.timeRemaining(TimeUnit.SECONDS))))
                .build());
  }

  private static List<String> leaderFirst(String leader, List<String> members) {
    List<String> out = new ArrayList<>();
    if (!leader.isEmpty()) {
      out.add(leader);
    }
    members.stream().filter(m -> !m.equals(leader)).forEach(out::add);
    return out;
  }

  private static Iterator<BackupChunk> prepend(BackupChunk first, Iterator<BackupChunk> rest) {
    return new Iterator<>() {
      private BackupChunk head = first;

      @Override
      public boolean hasNext() {
        return head != null || rest.hasNext();
      }

      @Override
      public BackupChunk next() {
        if (head != null) {
          BackupChunk h = head;
          head = null;
          return h;
        }
        return rest.next();
      }
    };
  }

  /** The streams one after another, each opened once the one before has ended. */
  private static Iterator<BackupChunk> concat(
      List<java.util.function.Supplier<Iterator<BackupChunk>>> parts) {
    Iterator<java.util.function.Supplier<Iterator<BackupChunk>>> next = parts.iterator();
    return new Iterator<>() {
      private Iterator<BackupChunk> current = java.util.Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext() && next.hasNext()) {
          current = next.next().get();
        }
        return current.hasNext();
      }

      @Override
      public BackupChunk next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        return current.next();
      }
    };
  }

  /** The nodes to try in turn, and the option or variable that named them. */
  private record Source(String name, List<String> nodes) {}

  /**
   * --endpoint, --endpoints, $LEASEHOLD_ENDPOINT, then $LEASEHOLD_ENDPOINTS or the default: the
   * command line before the environment, the one node before the list. Every command inherits
   * --endpoints, so whoever set it or exported LEASEHOLD_ENDPOINTS expects backup to find the
   * cluster there too.
   */
  private Source source() {
    if (endpoint != null) {
      return new Source("--endpoint", List.of(endpoint));
    }
    List<String> global =
        spec.root().userObject() instanceof LeaseholdCommand g ? g.endpoints() : List.of();
    if (given("--endpoints") && !global.isEmpty()) {
      return new Source("--endpoints", global);
    }
    String env = System.getenv("LEASEHOLD_ENDPOINT");
    if (env != null && !env.isBlank()) {
      return new Source("LEASEHOLD_ENDPOINT", List.of(env));
    }
    return new Source(
        "--endpoints", global.isEmpty() ? List.of(LeaseholdCommand.DEFAULT_ENDPOINTS) : global);
  }

  /** Given on the command line, before or after {@code backup}. */
  private boolean given(String option) {
    for (CommandLine.Model.CommandSpec s = spec; s != null; s = s.parent()) {
      CommandLine.ParseResult parsed = s.commandLine().getParseResult();
      if (parsed != null && parsed.hasMatchedOption(option)) {
        return true;
      }
    }
    return false;
  }

  private static String describe(StatusRuntimeException e) {
    return e.getStatus().getCode()
        + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription());
  }

  private int fail(String message, int code) {
    spec.commandLine().getErr().println("leasehold backup: " + message);
    spec.commandLine().getErr().flush();
    return code;
  }
}
