package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Human;
import io.leasehold.cli.Output;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.cli.command.WaitProgress;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseTransition;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.client.Rejected;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease acquire NAME --ttl 30s [--hold]}. */
@Command(
    name = "acquire",
    mixinStandardHelpOptions = true,
    description = {
      "Acquires a lease and prints it (with its fencing token).",
      "",
      "Without --hold the lease is left to expire after its TTL (keep it alive with 'lease keep-alive NAME --token T',",
      "release it with 'lease release NAME --token T'; acquiring again with the same --holder renews it). With --hold it",
      "is renewed until Ctrl-C, then released.",
      "Exits 1 if another holder has the name (unless --wait) or the policy refuses.",
      ""
    })
public final class LeaseAcquireCommand extends ClientCommand {
  @Parameters(
      paramLabel = "NAME",
      description = "The name to lease, namespace/rest (e.g. lock/billing-job).")
  String name;

  @Option(
      names = "--ttl",
      required = true,
      converter = DurationConverter.Positive.class,
      paramLabel = "DURATION",
      description = "The lease's time to live, e.g. 30s.")
  Duration ttl;

  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      description =
          "Who holds it (default: the identity of --cert, else <host>/<pid>/<random>; "
              + "nodes with authentication on require the caller's identity).")
  String holder;

  @Option(
      names = "--address",
      paramLabel = "ADDRESS",
      description = "An endpoint address, which makes the lease a route.")
  String address;

  @Option(names = "--meta", paramLabel = "KEY=VALUE", description = "Metadata; repeatable.")
  Map<String, String> metadata = new LinkedHashMap<>();

  @Option(names = "--status", paramLabel = "STATUS", description = "A status, e.g. SERVING.")
  String status;

  @Option(
      names = "--wait",
      converter = DurationConverter.class,
      paramLabel = "DURATION",
      description =
          "If another holder has the name, wait up to this long for it, showing on stderr who holds it "
              + "and for how long (default: one attempt).")
  Duration wait;

  @Option(
      names = "--hold",
      description = "Keep the lease renewed until interrupted (Ctrl-C), then release it.")
  boolean hold;

  @Override
  protected LeaseholdClientBuilder configure(LeaseholdClientBuilder b) {
    if (holder != null) {
      b.holder(holder);
    }
    // Without --hold the lease outlives this process: closing the client must not release it.
    return b.releaseOnClose(hold);
  }

  @Override
  protected int run(LeaseholdClient client, Output out) throws Exception {
    LeaseOptions options = LeaseOptions.defaults().withTtl(ttl);
    if (address != null) {
      options = options.withAddress(address);
    }
    if (status != null) {
      options = options.withStatus(status);
    }
    for (Map.Entry<String, String> m : metadata.entrySet()) {
      options = options.withMetadata(m.getKey(), m.getValue());
    }
    try (UntilInterrupted ignored = UntilInterrupted.install(globals().timeout().plusSeconds(1))) {
      Lease lease;
      if (wait == null) {
        AcquireResult r = client.blocking().tryAcquire(name, options);
        if (r instanceof Granted g) {
          lease = g.lease();
        } else if (r instanceof Conflict c) {
          throw conflict(name, c);
        } else {
          throw WaitProgress.rejected(name, ((Rejected) r).rejection());
        }
      } else {
        try {
          lease = WaitProgress.acquire(client, name, options, wait, err());
        } catch (InterruptedException e) {
          throw CliFailure.failed("interrupted while waiting for " + name);
        }
      }
      LeaseInfo info =
          client
              .blocking()
              .get(name)
              .filter(l -> l.token() == lease.token())
              .orElseThrow(
                  () ->
                      CliFailure.failed(
                          name + ": granted (token " + lease.token() + ") but already gone"));
      out.print(LeaseView.json(info), LeaseView.detail(info));
      return hold ? hold(lease) : 0;
    }
  }

  private int hold(Lease lease) {
    err().printf("holding %s (token %d); Ctrl-C releases it%n", name, lease.token());
    err().flush();
    try {
      LeaseTransition end = lease.ended().get();
      throw CliFailure.failed(
          "lost the lease on "
              + name
              + " (token "
              + lease.token()
              + "): "
              + lease.lossReason().map(Enum::name).orElse(end.to().name()));
    } catch (InterruptedException e) {
      lease.close();
      return 0;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  static CliFailure conflict(String name, Conflict c) {
    return CliFailure.failed(
        name
            + " is held by "
            + c.holder()
            + " (token "
            + c.token()
            + ", expires in "
            + Human.duration(c.remaining())
            + ")");
  }
}
