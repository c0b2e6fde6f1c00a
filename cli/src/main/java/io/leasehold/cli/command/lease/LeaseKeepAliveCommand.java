package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Human;
import io.leasehold.cli.Output;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Renewal;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease keep-alive NAME --token T}, like {@code etcdctl lease keep-alive}. */
@Command(
    name = "keep-alive",
    mixinStandardHelpOptions = true,
    description = {
      "Keeps a lease renewed until interrupted (Ctrl-C), printing each renewal's new deadline.",
      "",
      "For a lease taken with a plain 'lease acquire' (by this or any process). It renews at the lease's heartbeat",
      "interval (or --interval); a renewal that fails for want of a node is retried until the lease's deadline.",
      "Ctrl-C stops renewing and exits 0: the lease then ends at its deadline unless released ('lease release').",
      "Exits 1 when the lease is lost (no longer held, refused by policy, or no renewal got through in time).",
      ""
    })
public final class LeaseKeepAliveCommand extends ClientCommand {
  /**
   * The pause before trying again after a renewal found no node (at most; the interval if shorter).
   */
  private static final Duration RETRY = Duration.ofSeconds(1);

  @Parameters(paramLabel = "NAME", description = "The leased name.")
  String name;

  @Option(
      names = "--token",
      required = true,
      paramLabel = "TOKEN",
      description = "The lease's fencing token.")
  long token;

  @Option(
      names = "--interval",
      converter = DurationConverter.class,
      paramLabel = "DURATION",
      description =
          "Time between renewals; shorter than the lease's TTL (default: the heartbeat interval the cluster asks for, "
              + "a third of the TTL unless the namespace's policy says otherwise).")
  Duration interval;

  @Override
  protected int run(LeaseholdClient client, Output out) throws Exception {
    if (token <= 0) {
      throw usage("--token: must be positive, got " + token);
    }
    if (interval != null && interval.isZero()) {
      throw usage("--interval: must be positive");
    }
    try (UntilInterrupted ignored = UntilInterrupted.install(Duration.ofSeconds(5))) {
      long sent = System.nanoTime();
      Renewal first = LeaseRenewCommand.renew(client, name, token);
      if (interval != null && interval.compareTo(first.ttl()) >= 0) {
        throw usage(
            "--interval: must be shorter than the lease's TTL ("
                + Human.duration(first.ttl())
                + "), got "
                + Human.duration(interval));
      }
      out.line(LeaseView.json(first), LeaseView.line(first));
      Duration every =
          interval != null ? interval : first.heartbeatInterval().orElse(first.ttl().dividedBy(3));
      err()
          .printf(
              "keeping %s (token %d) alive every %s; Ctrl-C stops (the lease then ends at its deadline)%n",
              name, token, Human.duration(every));
      err().flush();
      return keepAlive(client, out, every, sent + first.ttl().toNanos());
    } catch (InterruptedException stopped) {
      return 0;
    }
  }

  /**
   * Renews every {@code every} until interrupted; a renewal that finds no node is tried again
   * (after at most {@link #RETRY}) until {@code deadline} (System.nanoTime), the first send of the
   * last renewal that got through plus its TTL.
   */
  private int keepAlive(LeaseholdClient client, Output out, Duration every, long deadline)
      throws InterruptedException {
    Duration retry = every.compareTo(RETRY) < 0 ? every : RETRY;
    boolean failed = false;
    String failing = null;
    while (true) {
      TimeUnit.NANOSECONDS.sleep((failed ? retry : every).toNanos());
      long sent = System.nanoTime();
      try {
        Optional<Renewal> r = client.renew(name, token).get();
        if (r.isEmpty()) {
          throw CliFailure.failed(
              "lost the lease on "
                  + name
                  + " (token "
                  + token
                  + "): no longer held "
                  + "(expired, released, revoked or superseded)");
        }
        out.line(LeaseView.json(r.get()), LeaseView.line(r.get()));
        deadline = sent + r.get().ttl().toNanos();
        failed = false;
        failing = null;
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof AcquireRejectedException rejected) {
          throw CliFailure.failed(
              "lost the lease on "
                  + name
                  + " (token "
                  + token
                  + "): "
                  + LeaseRenewCommand.refused(name, rejected).getMessage());
        }
        if (!(cause instanceof ClusterUnavailableException)) {
          throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
        }
        if (System.nanoTime() - deadline >= 0) {
          throw CliFailure.failed(
              "lost the lease on "
                  + name
                  + " (token "
                  + token
                  + "): no renewal got through before its deadline ("
                  + cause.getMessage()
                  + ")");
        }
        if (!cause.getMessage().equals(failing)) {
          failing = cause.getMessage();
          err()
              .printf("renewal of %s failed, trying again until its deadline: %s%n", name, failing);
          err().flush();
        }
        failed = true;
      }
    }
  }
}
