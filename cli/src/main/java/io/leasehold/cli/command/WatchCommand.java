package io.leasehold.cli.command;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.EventType;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.ServiceFilter;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold watch PREFIX}: streams changes, one line each, until interrupted. */
@Command(
    name = "watch",
    mixinStandardHelpOptions = true,
    description = {
      "Streams changes to leases under PREFIX, one line per event.",
      "",
      "Events come in revision order (-o json: JSON Lines) until Ctrl-C. It follows the cluster across node failures with no gap and no duplicate.",
      "",
      "  leasehold watch lock/ --from-revision 1 --types ACQUIRED,EXPIRED",
      "  leasehold watch service/payments/ --zone eu-west-1a --status SERVING",
      ""
    })
public final class WatchCommand extends ClientCommand {
  @Parameters(
      paramLabel = "PREFIX",
      arity = "0..1",
      defaultValue = "",
      description = "Names starting with this (default: every lease).")
  String prefix;

  @Option(
      names = "--from-revision",
      paramLabel = "R",
      defaultValue = "0",
      description = "Start at revision R, history first (default: from now on).")
  long fromRevision;

  @Option(
      names = "--from-group",
      paramLabel = "G",
      description =
          "With --from-revision, on a cluster with lease groups: the group R counts in, as a"
              + " watched event's \"group\" shows it (-o json). Needed for a namespace that has"
              + " moved between groups.")
  Integer fromGroup;

  @Option(
      names = "--types",
      split = ",",
      paramLabel = "TYPE,...",
      description =
          "Only these event types: ACQUIRED, UPDATED, RELEASED, EXPIRED, REVOKED, POLICY_CHANGED, RENEWED (default: all but RENEWED and POLICY_CHANGED).")
  Set<EventType> types = new LinkedHashSet<>();

  @Option(
      names = "--zone",
      split = ",",
      paramLabel = "ZONE",
      description =
          "Only leases whose zone (metadata \"zone\") is one of these; an update that moves a lease"
              + " out of them is shown too.")
  List<String> zones = new ArrayList<>();

  @Option(
      names = "--meta",
      paramLabel = "KEY=VALUE",
      description = "Only leases with this metadata value; repeatable (all must match).")
  Map<String, String> metadata = new LinkedHashMap<>();

  @Option(
      names = "--status",
      split = ",",
      paramLabel = "STATUS",
      description = "Only leases with one of these statuses, e.g. SERVING (default: any status).")
  List<String> statuses = new ArrayList<>();

  @Override
  protected int run(LeaseholdClient client, Output out) throws Exception {
    if (fromRevision < 0) {
      throw usage("--from-revision: must not be negative, got " + fromRevision);
    }
    if (fromGroup != null && fromRevision == 0) {
      throw usage("--from-group: goes with --from-revision, the revision it is the group of");
    }
    if (fromGroup != null && fromGroup < 0) {
      throw usage("--from-group: must not be negative (0: the meta group), got " + fromGroup);
    }
    Set<EventType> wanted = types.isEmpty() ? Set.of() : EnumSet.copyOf(types);
    if (wanted.contains(EventType.UNKNOWN)) {
      throw usage("--types: not an event type: UNKNOWN");
    }
    WatchOptions options =
        WatchOptions.of(prefix)
            .withFromRevision(fromRevision, fromGroup == null ? -1 : fromGroup)
            .withTypes(wanted)
            .withRenewals(wanted.contains(EventType.RENEWED))
            .withFilter(ServiceFilters.narrowed(ServiceFilter.all(), zones, metadata, statuses));
    client
        .blocking()
        .clusterStatus(); // an unreachable cluster fails now (exit 3) rather than watching in
    // silence
    CompletableFuture<LeaseholdException> failed = new CompletableFuture<>();
    try (UntilInterrupted ignored = UntilInterrupted.install(Duration.ofSeconds(5));
        Watch watch =
            client.watch(
                options,
                new WatchListener() {
                  @Override
                  public void onEvent(WatchEvent e) {
                    out.line(LeaseView.json(e), LeaseView.line(e));
                  }

                  @Override
                  public void onError(LeaseholdException error) {
                    failed.complete(error);
                  }
                })) {
      throw failed
          .get(); // bad input (exit 2) or a start revision no longer in the history (exit 1)
    } catch (InterruptedException stopped) {
      return 0;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }
}
