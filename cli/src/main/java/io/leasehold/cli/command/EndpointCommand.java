package io.leasehold.cli.command;

import io.grpc.StatusRuntimeException;
import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Human;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.EndpointView;
import io.leasehold.cli.view.EndpointView.Answer;
import io.leasehold.client.ClusterMember;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.NodeStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code leasehold endpoint health|status}: each node on its own, like {@code etcdctl endpoint
 * health --cluster}.
 */
@Command(
    name = "endpoint",
    mixinStandardHelpOptions = true,
    description = {
      "Each node on its own: its health or its status, one line per node.",
      "",
      "The nodes are every member of the cluster (its configuration, read from any node of --endpoints) and any",
      "--endpoints that are not members; with --only-endpoints, just --endpoints. Each is asked directly, once, in",
      "parallel (at most --timeout and 5s each), so one node down or slow does not hide the others.",
      ""
    })
public final class EndpointCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(EndpointCommand.Health.class, EndpointCommand.Status.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: health or status");
  }

  /** What both subcommands share: which nodes, and asking each. */
  abstract static class Probe extends ClientCommand {
    @Option(
        names = "--only-endpoints",
        description = "Ask only the nodes of --endpoints, not every member of the cluster.")
    boolean onlyEndpoints;

    @Option(
        names = "--cluster",
        description =
            "Every member of the cluster and the other --endpoints: the default (etcdctl's --cluster).")
    boolean cluster;

    /**
     * Every node's answer, members first (in the configuration's order), then the other
     * --endpoints.
     */
    List<Answer> probe(LeaseholdClient client) {
      if (cluster && onlyEndpoints) {
        throw usage("--cluster, --only-endpoints: choose one");
      }
      Map<String, Optional<String>> targets =
          new LinkedHashMap<>(); // address -> member id, if known
      List<Answer> unaddressed = new ArrayList<>();
      if (!onlyEndpoints) {
        try {
          NodeStatus any = Await.of(client.cluster().status());
          for (ClusterMember m : any.members()) {
            if (m.clientAddress().isPresent()) {
              targets.put(m.clientAddress().get(), Optional.of(m.id()));
            } else {
              unaddressed.add(
                  new Answer(
                      "-",
                      Optional.of(m.id()),
                      Optional.empty(),
                      Optional.of("client address unknown"),
                      Duration.ZERO));
            }
          }
        } catch (ClusterUnavailableException e) {
          // No node answered for the configuration: each of --endpoints is asked, and reported, on
          // its own.
        }
      }
      for (String e : globals().endpoints()) {
        targets.putIfAbsent(e.trim(), Optional.empty());
      }
      List<CompletableFuture<Answer>> asked = new ArrayList<>();
      targets.forEach((address, id) -> asked.add(ask(client, address, id)));
      List<Answer> answers = new ArrayList<>(asked.stream().map(CompletableFuture::join).toList());
      answers.addAll(unaddressed);
      return answers;
    }

    private static CompletableFuture<Answer> ask(
        LeaseholdClient client, String address, Optional<String> id) {
      long start = System.nanoTime();
      CompletableFuture<NodeStatus> call;
      try {
        call = client.cluster().status(address);
      } catch (RuntimeException e) {
        call = CompletableFuture.failedFuture(e);
      }
      return call.handle(
          (s, e) -> {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            return e == null
                ? new Answer(
                    address, Optional.of(s.nodeId()), Optional.of(s), Optional.empty(), took)
                : new Answer(address, id, Optional.empty(), Optional.of(describe(e)), took);
          });
    }

    /**
     * The gRPC status the node answered with ({@code UNAVAILABLE: io exception}), else the message.
     */
    static String describe(Throwable e) {
      Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (t.getCause() instanceof StatusRuntimeException s) {
        io.grpc.Status status = s.getStatus();
        return status.getCode()
            + (status.getDescription() == null ? "" : ": " + status.getDescription());
      }
      return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    /**
     * Exit code 3 with one line on stderr when no node answered at all (what was printed stays).
     */
    void unlessNoneAnswered(List<Answer> answers) {
      if (answers.stream().noneMatch(Answer::answered)) {
        throw new CliFailure(
            LeaseholdCommand.EXIT_UNREACHABLE,
            "no node answered (asked "
                + answers.stream().map(Answer::endpoint).collect(Collectors.joining(", "))
                + ", each once for at most "
                + Human.duration(attemptTimeout())
                + ")");
      }
    }

    private Duration attemptTimeout() {
      Duration t = globals().timeout();
      return t.compareTo(Duration.ofSeconds(5)) < 0 ? t : Duration.ofSeconds(5);
    }
  }

  @Command(
      name = "health",
      mixinStandardHelpOptions = true,
      description = {
        "Checks each node on its own: ENDPOINT ID HEALTHY TOOK ERROR, one line per node.",
        "",
        "A node is healthy if it answers, follows a leader, is in the term of the leader that answered, and has at most",
        ClusterStatus.HEALTHY_LAG
            + " committed entries yet to apply; ERROR says why not. Exits 0 if every node is healthy,",
        "1 if any is not, 3 if none answered.",
        ""
      })
  public static final class Health extends Probe {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      List<Answer> answers = probe(client);
      Optional<NodeStatus> leader = EndpointView.leader(answers);
      List<Map<String, Object>> json = new ArrayList<>();
      Table table = Table.of(EndpointView.HEALTH_COLUMNS);
      boolean allHealthy = true;
      for (Answer a : answers) {
        Optional<String> problem = EndpointView.problem(a, leader);
        allHealthy &= problem.isEmpty();
        json.add(EndpointView.healthJson(a, problem));
        EndpointView.healthRow(table, a, problem);
      }
      out.print(json, table);
      unlessNoneAnswered(answers);
      return allHealthy ? 0 : 1;
    }
  }

  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description = {
        "Asks each node on its own for its status: ENDPOINT ID ROLE TERM LEADER COMMIT APPLIED, one line per node",
        "(-o wide adds the leader's address, the members it knows, how long it took and the error).",
        "",
        "Exits 0 if every node answered, 1 if any did not, 3 if none did.",
        ""
      })
  public static final class Status extends Probe {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      List<Answer> answers = probe(client);
      Table table = EndpointView.statusTable(out.wide());
      answers.forEach(a -> EndpointView.statusRow(table, a, out.wide()));
      out.print(answers.stream().map(EndpointView::statusJson).toList(), table);
      unlessNoneAnswered(answers);
      return answers.stream().allMatch(Answer::answered) ? 0 : 1;
    }
  }
}
