package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.LiveView;
import io.leasehold.cli.Output;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseListing;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease get NAME [--watch]}. */
@Command(
    name = "get",
    mixinStandardHelpOptions = true,
    description = {
      "Shows who holds a name, since when and until when.",
      "",
      "The live lease: holder, token, TTL, acquired, last renewed, expires in, state, renew count and attributes.",
      " Exits 1 if no lease holds the name (see 'lease history' for why).",
      "",
      "With --watch it shows the lease again at every change (acquired, renewed, updated, ended) until Ctrl-C,",
      "redrawn in place on a terminal; a free name shows as not held and is followed all the same (exit 0).",
      ""
    })
public final class LeaseGetCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name, e.g. lock/billing-job.")
  String name;

  @Option(
      names = {"-w", "--watch"},
      description =
          "Follow the lease: show it again at every change, until Ctrl-C (-o json: JSON Lines of {\"name\", \"lease\"}).")
  boolean watch;

  @Override
  protected int run(LeaseholdClient client, Output out) throws Exception {
    if (watch) {
      return watch(client);
    }
    LeaseInfo lease =
        client
            .blocking()
            .get(name)
            .orElseThrow(
                () ->
                    CliFailure.failed(
                        name + " is not held (see 'leasehold lease history " + name + "')"));
    out.print(LeaseView.json(lease), LeaseView.detail(lease));
    return 0;
  }

  /**
   * The lease as of a listing, then again after each batch of changes to it (read afresh, as the
   * cluster judges it now).
   */
  private int watch(LeaseholdClient client) {
    LiveView view =
        new LiveView(
            spec.commandLine().getOut(),
            globals().output(),
            LiveView.stdoutIsTerminal(),
            "leasehold lease get " + name + " --watch (Ctrl-C stops)");
    client
        .blocking()
        .get(name); // a name the cluster refuses is a usage error now (exit 2), not a view of
    // nothing
    LeaseListing listing = client.blocking().list(name);
    show(view, listing.leases().stream().filter(l -> l.name().equals(name)).findFirst());
    // One element per change of the name, or the watch's failure.
    BlockingQueue<Object> changes = new LinkedBlockingQueue<>();
    WatchOptions options = WatchOptions.of(name).withStartAfter(listing).withRenewals(true);
    try (UntilInterrupted ignored = UntilInterrupted.install(Duration.ofSeconds(5));
        Watch w =
            client.watch(
                options,
                new WatchListener() {
                  @Override
                  public void onEvent(WatchEvent e) {
                    if (e.name().equals(name)) { // the prefix also matches longer names
                      changes.add(e);
                    }
                  }

                  @Override
                  public void onError(LeaseholdException error) {
                    changes.add(error);
                  }
                })) {
      String failing = null;
      while (true) {
        List<Object> batch = new ArrayList<>(List.of(changes.take()));
        changes.drainTo(batch);
        for (Object o : batch) {
          if (o instanceof LeaseholdException e) {
            throw e; // refused (exit 2) or a revision no longer in the history (exit 1)
          }
        }
        try {
          show(view, client.blocking().get(name));
          failing = null;
        } catch (ClusterUnavailableException e) {
          if (!e.getMessage().equals(failing)) {
            failing = e.getMessage();
            err()
                .println(
                    "cannot read " + name + " now: " + failing + "; the next change tries again");
            err().flush();
          }
        }
      }
    } catch (InterruptedException stopped) {
      return 0;
    }
  }

  private void show(LiveView view, Optional<LeaseInfo> lease) {
    String text = lease.map(l -> LeaseView.detail(l).render()).orElse(name + " is not held\n");
    Object key =
        lease
            .map(
                l ->
                    List.of(
                        l.token(),
                        l.modRevision(),
                        l.renewCount(),
                        l.renewedAt(),
                        LeaseView.state(l)))
            .orElse(null);
    view.show(
        Json.object("name", name, "lease", lease.map(LeaseView::json).orElse(null)), text, key);
  }
}
