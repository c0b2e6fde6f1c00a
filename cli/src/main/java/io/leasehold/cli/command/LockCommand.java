package io.leasehold.cli.command;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Output;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code leasehold lock NAME -- COMMAND…}: runs a command while holding a lease, like {@code consul
 * lock}.
 */
@Command(
    name = "lock",
    mixinStandardHelpOptions = true,
    description = {
      "Runs a command while holding a lease on NAME (like consul lock).",
      "",
      "Acquires the lease (waiting while someone else holds it, showing who and for how long), runs COMMAND with",
      "the fencing token in LEASEHOLD_TOKEN, the name in LEASEHOLD_LEASE and the holder in LEASEHOLD_HOLDER,",
      "keeps the lease renewed while it runs, and releases it when the command exits.",
      "If the lease is lost, the command is stopped (SIGTERM, then SIGKILL after --kill-grace) and lock exits 1.",
      "Exits with the command's exit code otherwise.",
      "",
      "  leasehold lock lock/billing-job --ttl 15s -- ./run-billing.sh --month 2026-11",
      ""
    })
public final class LockCommand extends ClientCommand {
  @Parameters(
      index = "0",
      paramLabel = "NAME",
      description = "The name to lock, e.g. lock/billing-job.")
  String name;

  @Parameters(
      index = "1..*",
      arity = "1..*",
      paramLabel = "COMMAND",
      description = "The command and its arguments (after --).")
  List<String> command;

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      defaultValue = "15s",
      paramLabel = "DURATION",
      description =
          "The lease's TTL: how long others wait if this process dies (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      description = "Who holds it (default: <host>/<pid>/<random>).")
  String holder;

  @Option(
      names = "--wait",
      converter = DurationConverter.class,
      paramLabel = "DURATION",
      description =
          "Give up (exit 1) if the name is not free within this long (default: wait as long as it takes).")
  Duration wait;

  @Option(
      names = "--kill-grace",
      converter = DurationConverter.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description =
          "After the lease is lost, how long the command has to exit on SIGTERM before SIGKILL (default: ${DEFAULT-VALUE}).")
  Duration killGrace;

  @Override
  protected LeaseholdClientBuilder configure(LeaseholdClientBuilder b) {
    return holder == null ? b : b.holder(holder);
  }

  @Override
  protected int run(LeaseholdClient client, Output out) throws Exception {
    try (UntilInterrupted ignored =
        UntilInterrupted.install(killGrace.plus(globals().timeout()).plusSeconds(1))) {
      Lease lease;
      try {
        lease =
            WaitProgress.acquire(client, name, LeaseOptions.defaults().withTtl(ttl), wait, err());
      } catch (InterruptedException e) {
        throw CliFailure.failed("interrupted while waiting for " + name);
      }
      try {
        return runWhileHeld(lease);
      } finally {
        lease.close();
      }
    }
  }

  private int runWhileHeld(Lease lease) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
    pb.environment().put("LEASEHOLD_TOKEN", Long.toString(lease.token()));
    pb.environment().put("LEASEHOLD_LEASE", name);
    pb.environment().put("LEASEHOLD_HOLDER", lease.holder());
    Process child;
    try {
      child = pb.start();
    } catch (IOException e) {
      throw CliFailure.failed("cannot run " + command.get(0) + ": " + e.getMessage());
    }
    AtomicReference<String> lost = new AtomicReference<>();
    lease.addListener(
        t -> {
          if (t.to() == LeaseState.LOST) {
            lost.set(t.reason().map(Enum::name).orElse("LOST"));
            stop(child);
          }
        });
    int code;
    try {
      code = child.waitFor();
    } catch (InterruptedException e) {
      // Ctrl-C or SIGTERM: the command (in our process group on a terminal) got the signal too;
      // make sure it ends.
      stop(child);
      child.waitFor(killGrace.toMillis() + 1000, TimeUnit.MILLISECONDS);
      throw CliFailure.failed("interrupted; stopped " + command.get(0) + " and released " + name);
    }
    if (lost.get() != null) {
      throw CliFailure.failed(
          "lost the lease on "
              + name
              + " (token "
              + lease.token()
              + ", "
              + lost.get()
              + "); stopped "
              + command.get(0)
              + " (exit "
              + code
              + ")");
    }
    return code;
  }

  /** SIGTERM to the command and everything it started, SIGKILL to what is left after the grace. */
  private void stop(Process child) {
    child.descendants().forEach(ProcessHandle::destroy);
    child.destroy();
    child
        .onExit()
        .completeOnTimeout(null, killGrace.toMillis(), TimeUnit.MILLISECONDS)
        .thenRun(
            () -> {
              if (child.isAlive()) {
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
              }
            });
  }
}
