package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.LiveView;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.cli.view.ClusterView;
import io.leasehold.cli.view.GroupsView;
import io.leasehold.client.ClusterMember;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.SnapshotResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold cluster …}. */
@Command(
    name = "cluster",
    mixinStandardHelpOptions = true,
    description = "The cluster's members: status, membership, leadership, snapshots.")
public final class ClusterCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          ClusterCommand.Status.class,
          ClusterCommand.Groups.class,
          ClusterCommand.Add.class,
          ClusterCommand.Remove.class,
          ClusterCommand.GroupMembers.class,
          ClusterCommand.TransferLeader.class,
          ClusterCommand.Snapshot.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        "a subcommand is required: status, groups, add, remove, group-members, transfer-leader"
            + " or snapshot");
  }

  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description = {
        "Asks every member for its own status: id, client address, role, term, commit and applied index,",
        "lag (entries committed on the leader it has yet to apply) and health (answers, follows the leader of the",
        "current term, lag at most "
            + ClusterStatus.HEALTHY_LAG
            + "). -o wide adds the peer address, leader and error.",
        "Exits 1 if any member is not healthy.",
        "",
        "With --watch it asks again every --interval until Ctrl-C (exit 0) and shows the members again when a member's",
        "role, term, leader, health or error changed; on a terminal it redraws in place every time.",
        ""
      })
  public static final class Status extends ClientCommand {
    @CommandLine.Option(
        names = {"-w", "--watch"},
        description =
            "Follow the cluster until Ctrl-C (-o json: JSON Lines, one array per change).")
    boolean watch;

    @CommandLine.Option(
        names = "--interval",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "With --watch: how often to ask (default: 2s).")
    Duration interval;

    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      if (interval != null && !watch) {
        throw usage("--interval: only with --watch");
      }
      if (interval != null && interval.isZero()) {
        throw usage("--interval: must be positive");
      }
      if (watch) {
        return watch(client, interval == null ? Duration.ofSeconds(2) : interval);
      }
      ClusterStatus status = client.blocking().clusterStatus();
      out.print(
          status.members().stream().map(m -> ClusterView.json(status, m)).toList(),
          ClusterView.table(status, out.wide()));
      return status.members().stream().allMatch(status::healthy) ? 0 : 1;
    }

    private int watch(LeaseholdClient client, Duration every) throws Exception {
      LiveView view =
          new LiveView(
              spec.commandLine().getOut(),
              globals().output(),
              LiveView.stdoutIsTerminal(),
              "leasehold cluster status --watch, every "
                  + Human.duration(every)
                  + " (Ctrl-C stops)");
      boolean wide = globals().output() == io.leasehold.cli.OutputFormat.WIDE;
      ClusterStatus first =
          client.blocking().clusterStatus(); // an unreachable cluster fails now (exit 3)
      try (UntilInterrupted ignored = UntilInterrupted.install(Duration.ofSeconds(5))) {
        String failing = null;
        for (ClusterStatus status = first; ; ) {
          if (status != null) {
            ClusterStatus s = status;
            view.show(
                s.members().stream().map(m -> ClusterView.json(s, m)).toList(),
                ClusterView.table(s, wide).render(),
                ClusterView.change(s));
          }
          TimeUnit.NANOSECONDS.sleep(every.toNanos());
          try {
            status = Await.of(client.clusterStatus());
            failing = null;
          } catch (ClusterUnavailableException e) {
            status = null;
            if (!e.getMessage().equals(failing)) {
              failing = e.getMessage();
              err()
                  .println(
                      "no node answered: "
                          + failing
                          + "; asking again every "
                          + Human.duration(every));
              err().flush();
            }
          }
        }
      } catch (InterruptedException stopped) {
        return 0;
      }
    }
  }

  @Command(
      name = "groups",
      mixinStandardHelpOptions = true,
      description = {
        "Lists the cluster's Raft groups from every member's own account: the meta group (0), which every",
        "cluster has, and its lease groups; each group's leader, term, commit index and members with their",
        "election priority (a leader hands leadership to a caught-up member of higher priority), then how many",
        "groups each member leads.",
        ""
      })
  public static final class Groups extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      ClusterStatus status = client.blocking().clusterStatus();
      List<GroupsView.Group> groups = GroupsView.groups(status);
      out.print(groups.stream().map(GroupsView::json).toList(), GroupsView.table(groups));
      if (!out.json()) {
        List<String> leads = new ArrayList<>();
        GroupsView.leadership(groups).forEach((id, n) -> leads.add(id + " " + n));
        spec.commandLine().getOut().println("groups led: " + String.join(", ", leads));
        spec.commandLine().getOut().flush();
      }
      return 0;
    }
  }

  /** The configuration after a membership change: one row per member. */
  static void printMembers(Output out, List<ClusterMember> members) {
    Table table = Table.of("ID", "PEER ADDRESS", "CLIENT ADDRESS");
    List<Map<String, Object>> json = new ArrayList<>();
    for (ClusterMember m : members) {
      json.add(
          Json.object(
              "id",
              m.id(),
              "peerAddress",
              m.peerAddress(),
              "clientAddress",
              m.clientAddress().orElse(null)));
      table.row(m.id(), m.peerAddress(), m.clientAddress().orElse("-"));
    }
    out.print(json, table);
  }

  @Command(
      name = "add",
      mixinStandardHelpOptions = true,
      description = {
        "Adds a member. Start its node first with `leasehold server --join` (same --cluster-name, its own",
        "--id and ports); it catches up from the leader by log or snapshot. Prints the configuration after the change.",
        ""
      })
  public static final class Add extends ClientCommand {
    @CommandLine.Parameters(index = "0", paramLabel = "ID", description = "The new member's id.")
    String id;

    @CommandLine.Option(
        names = "--peer-address",
        required = true,
        paramLabel = "HOST:PORT",
        description = "Its Raft (peer) address.")
    String peerAddress;

    @CommandLine.Option(
        names = "--client-address",
        required = true,
        paramLabel = "HOST:PORT",
        description = "Its gRPC API (client) address.")
    String clientAddress;

    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      printMembers(out, Await.of(client.cluster().addMember(id, peerAddress, clientAddress)));
      return 0;
    }
  }

  @Command(
      name = "remove",
      mixinStandardHelpOptions = true,
      description = {
        "Removes a member from the configuration (its node stops serving; stop the process afterwards).",
        "Prints the configuration after the change.",
        ""
      })
  public static final class Remove extends ClientCommand {
    @CommandLine.Parameters(index = "0", paramLabel = "ID", description = "The member to remove.")
    String id;

    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      printMembers(out, Await.of(client.cluster().removeMember(id)));
      return 0;
    }
  }

  @Command(
      name = "group-members",
      mixinStandardHelpOptions = true,
      description = {
        "Changes the members of one lease group, where lease groups sit on subsets of the nodes",
        "(--lease-group-size): adds each --add (a member of the cluster already; it gets a replica of the",
        "group and is brought up to date before it counts), then removes each --remove (it drops its replica",
        "and serves the group through its members). To replace a failed member: --add another node --remove",
        "it. Repeat a call that failed part-way to finish it. With neither option, prints the group's",
        "members. Prints the group's members after the change.",
        ""
      })
  public static final class GroupMembers extends ClientCommand {
    @CommandLine.Parameters(
        index = "0",
        paramLabel = "GROUP",
        description = "The lease group, 1 or more (`leasehold cluster groups` lists them).")
    int group;

    @CommandLine.Option(
        names = "--add",
        paramLabel = "ID",
        description = "A member of the cluster to add to the group (repeatable).")
    List<String> add = new ArrayList<>();

    @CommandLine.Option(
        names = "--remove",
        paramLabel = "ID",
        description = "A member of the group to remove from it (repeatable).")
    List<String> remove = new ArrayList<>();

    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      printMembers(out, Await.of(client.cluster().setGroupMembers(group, add, remove)));
      return 0;
    }
  }

  @Command(
      name = "transfer-leader",
      mixinStandardHelpOptions = true,
      description = {
        "Hands leadership to the member ID, or, without one, to whichever member the cluster picks",
        "(before stopping the leader's node for maintenance). Prints the new leader.",
        ""
      })
  public static final class TransferLeader extends ClientCommand {
    @CommandLine.Parameters(
        index = "0",
        arity = "0..1",
        paramLabel = "ID",
        description = "The member to lead.")
    String id;

    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      String leader =
          Await.of(
              id == null
                  ? client.cluster().transferLeadership()
                  : client.cluster().transferLeadership(id));
      out.print(Json.object("leader", leader), Table.of("LEADER").row(leader));
      return 0;
    }
  }

  @Command(
      name = "snapshot",
      mixinStandardHelpOptions = true,
      description = {
        "Takes a snapshot on the node the client reaches first (each node snapshots its own state; point",
        "--endpoints at one node to choose it). Prints the node, the log position the snapshot includes and its size.",
        ""
      })
  public static final class Snapshot extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      SnapshotResult s = Await.of(client.cluster().takeSnapshot());
      out.print(
          Json.object(
              "node", s.nodeId(), "term", s.term(), "index", s.index(), "sizeBytes", s.sizeBytes()),
          Table.of("NODE", "TERM", "INDEX", "SIZE")
              .row(s.nodeId(), s.term(), s.index(), s.sizeBytes()));
      return 0;
    }
  }
}
