package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseTransition;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.client.Watch;
import io.leasehold.client.recipes.Election;
import io.leasehold.client.recipes.Leader;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code leasehold elect NAME [VALUE] [--listen]}, like {@code etcdctl elect}, on the SDK's
 * election recipe.
 */
@Command(
    name = "elect",
    mixinStandardHelpOptions = true,
    description = {
      "Campaigns in the election NAME and prints the leader once this candidate leads; or, with --listen,",
      "prints the leader as of now and every change.",
      "",
      "Leadership is the lease NAME (its token is the leadership's fencing token; VALUE is stored as its address, where",
      "observers see it). While another candidate leads, stderr says who. Once leading, it stays leader until Ctrl-C,",
      "which resigns (the next candidate leads) and exits 0; exits 1 if the leadership is lost meanwhile.",
      "--listen runs until Ctrl-C (exit 0).",
      "",
      "  leasehold elect election/billing 10.0.0.7:8080",
      "  leasehold elect election/billing --listen -o json",
      ""
    })
public final class ElectCommand extends ClientCommand {
  @Parameters(
      index = "0",
      paramLabel = "NAME",
      description =
          "The election: the lease name that stands for the leadership, e.g. election/billing.")
  String name;

  @Parameters(
      index = "1",
      arity = "0..1",
      paramLabel = "VALUE",
      description = "What observers learn about this leader, e.g. its address.")
  String value;

  @Option(
      names = "--listen",
      description = "Observe: print the leader as of now and every change, campaigning not.")
  boolean listen;

  @Option(
      names = "--ttl",
      converter = DurationConverter.class,
      paramLabel = "DURATION",
      description =
          "The leadership lease's own TTL (default: it lives with the client's session, whose keep-alive renews it).")
  Duration ttl;

  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      description = "Who campaigns (default: the identity of --cert, else <host>/<pid>/<random>).")
  String holder;

  @Override
  protected LeaseholdClientBuilder configure(LeaseholdClientBuilder b) {
    if (holder != null) {
      b.holder(holder);
    }
    return b;
  }

  @Override
  protected int run(LeaseholdClient client, Output out) throws Exception {
    if (listen && value != null) {
      throw usage("--listen: observes only; it takes no VALUE (got '" + value + "')");
    }
    if (listen && (ttl != null || holder != null)) {
      throw usage("--listen: observes only; --ttl and --holder are for campaigning");
    }
    if (value != null && value.isEmpty()) {
      throw usage("VALUE: must not be empty");
    }
    if (ttl != null && ttl.isZero()) {
      throw usage("--ttl: must be positive");
    }
    Election election =
        ttl == null
            ? client.election(name)
            : Election.of(client, name, LeaseOptions.defaults().withTtl(ttl));
    try (UntilInterrupted ignored = UntilInterrupted.install(globals().timeout().plusSeconds(1))) {
      return listen ? listen(election, out) : campaign(election, client.holder(), out);
    }
  }

  private int listen(Election election, Output out) {
    BlockingQueue<Optional<Leader>> changes = new LinkedBlockingQueue<>();
    try (Watch ignored = Await.of(election.observe(changes::add))) {
      while (true) {
        print(out, changes.take());
      }
    } catch (InterruptedException stopped) {
      return 0;
    }
  }

  private int campaign(Election election, String me, Output out) throws Exception {
    // While another candidate leads, say who on stderr (as lock and acquire --wait do).
    Watch observing =
        Await.of(
            election.observe(
                leader ->
                    leader.ifPresent(
                        l -> {
                          if (!l.holder().equals(me)) {
                            err()
                                .printf(
                                    "waiting for %s: led by %s (token %d)%s%n",
                                    name,
                                    l.holder(),
                                    l.token(),
                                    l.value().map(v -> ", value " + v).orElse(""));
                            err().flush();
                          }
                        })));
    CompletableFuture<Lease> campaign =
        value == null ? election.campaign() : election.campaign(value);
    Lease lease;
    try {
      lease = campaign.get();
    } catch (InterruptedException stopped) {
      observing.close();
      campaign.cancel(false);
      resign(election);
      return 0;
    } catch (ExecutionException e) {
      observing.close();
      throw e.getCause() instanceof Exception c ? c : e;
    }
    observing.close();
    print(out, Optional.of(new Leader(lease.holder(), lease.token(), Optional.ofNullable(value))));
    err().printf("leading %s (token %d); Ctrl-C resigns%n", name, lease.token());
    err().flush();
    try {
      LeaseTransition end = lease.ended().get();
      throw CliFailure.failed(
          "lost the leadership of "
              + name
              + " (token "
              + lease.token()
              + "): "
              + lease.lossReason().map(Enum::name).orElse(end.to().name()));
    } catch (InterruptedException stopped) {
      resign(election);
      return 0;
    }
  }

  /**
   * Gives the leadership up, waiting (bounded) for the cluster; if that fails the lease ends at its
   * deadline.
   */
  private void resign(Election election) {
    try {
      election.resign().get(globals().timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException | ExecutionException | TimeoutException | RuntimeException e) {
      // the client's close releases what it holds; failing that, the lease expires
    }
  }

  private void print(Output out, Optional<Leader> leader) {
    out.line(json(name, leader), line(name, leader));
  }

  static Map<String, Object> json(String name, Optional<Leader> leader) {
    return Json.object(
        "name", name,
        "leader", leader.map(Leader::holder).orElse(null),
        "token", leader.map(Leader::token).orElse(null),
        "value", leader.flatMap(Leader::value).orElse(null));
  }

  /**
   * {@code election/billing leader=runner-1 token=12 value=10.0.0.7:8080}, or {@code
   * election/billing no leader}.
   */
  static String line(String name, Optional<Leader> leader) {
    return leader
        .map(
            l ->
                name
                    + " leader="
                    + l.holder()
                    + " token="
                    + l.token()
                    + l.value().map(v -> " value=" + v).orElse(""))
        .orElse(name + " no leader");
  }
}
