package io.leasehold.jepsen.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One server node: the packaged jar run as an OS process (in its network namespace when there is
 * one), with its own data dir, log file (appended across restarts) and clock-offset file. Its pid
 * is written where the watchdog finds it, so the node dies with the test JVM.
 *
 * <p>Like systemd's {@code Restart=on-failure} in the shipped unit, it restarts a node that exits
 * on its own with code 75 (the {@code server} command's "restart me from my data"), after {@link
 * #RESTART_DELAY}; every exit that no nemesis caused is kept for the report. Any other exit code
 * leaves the node down: that is a crash to look at, not a restart to hide.
 */
public final class NodeProcess {
  private static final Logger LOG = LoggerFactory.getLogger(NodeProcess.class);

  /** The {@code server} command's exit code when a restart from the data dir recovers the node. */
  public static final int EXIT_RESTART = 75;

  static final Duration RESTART_DELAY = Duration.ofSeconds(1);
  private static final ScheduledExecutorService RESTARTS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "jepsen-node-restarts");
            t.setDaemon(true);
            return t;
          });

  /** A node process that ended without a nemesis or the harness stopping it. */
  public record SelfExit(Instant at, String node, int code, boolean restarted) {
    @Override
    public String toString() {
      return at
          + " "
          + node
          + " exited on its own with code "
          + code
          + (restarted ? "; restarted from its data dir" : "; left down");
    }
  }

  private final int index;
  private final String id;
  private final List<String> command;
  private final List<String> environment;
  private final Path log;
  private final Path pidFile;
  private final Path clockFile;
  private final Path dataDir;
  private Process process;

  /** Started with {@code --join} from now on: removed, wiped and added back as a new member. */
  private boolean joining;

  private boolean paused;
  private boolean retired;

  /** Set while {@link #kill} ends the current process: its exit is expected. */
  private boolean killing;

  private final List<SelfExit> selfExits = new ArrayList<>();

  NodeProcess(
      int index,
      String id,
      List<String> command,
      List<String> environment,
      Path log,
      Path pidFile,
      Path clockFile,
      Path dataDir) {
    this.index = index;
    this.id = id;
    this.command = List.copyOf(command);
    this.environment = List.copyOf(environment);
    this.log = log;
    this.pidFile = pidFile;
    this.clockFile = clockFile;
    this.dataDir = dataDir;
  }

  public int index() {
    return index;
  }

  public String id() {
    return id;
  }

  public Path log() {
    return log;
  }

  public synchronized void start() {
    if (isRunning() || retired) {
      return;
    }
    try {
      Files.writeString(
          log,
          "\n==== start " + id + " at " + Instant.now() + " ====\n",
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
      List<String> cmd = new ArrayList<>(command);
      if (joining) {
        // A member that joined keeps the flag across restarts (harmless: its membership is on
        // disk).
        cmd.add("--join");
      }
      ProcessBuilder pb =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(Redirect.appendTo(log.toFile()));
      for (String kv : environment) {
        int eq = kv.indexOf('=');
        pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
      }
      Process started = pb.start();
      process = started;
      killing = false;
      started.onExit().thenAccept(this::exited);
      started.getOutputStream().close();
      paused = false;
      Files.writeString(pidFile, Long.toString(process.pid()));
    } catch (IOException e) {
      throw new UncheckedIOException("starting node " + id, e);
    }
  }

  private synchronized void exited(Process p) {
    if (p != process || killing || retired) {
      return;
    }
    int code = p.exitValue();
    boolean restart = code == EXIT_RESTART;
    SelfExit exit = new SelfExit(Instant.now(), id, code, restart);
    selfExits.add(exit);
    LOG.warn("{}", exit);
    try {
      // A dead pid must not linger where the watchdog would kill whatever reuses it.
      Files.deleteIfExists(pidFile);
    } catch (IOException e) {
      LOG.warn("deleting {}: {}", pidFile, e.toString());
    }
    if (restart) {
      RESTARTS.schedule(this::start, RESTART_DELAY.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Returns once every restart already scheduled has run: the restart thread is single and runs its
   * tasks in time order, so a no-op scheduled now with the same delay runs after them.
   */
  static void awaitScheduledRestarts() throws Exception {
    RESTARTS
        .schedule(() -> {}, RESTART_DELAY.toMillis(), TimeUnit.MILLISECONDS)
        .get(RESTART_DELAY.toMillis() + 30_000, TimeUnit.MILLISECONDS);
  }

  /** The times this node's process ended on its own, oldest first. */
  public synchronized List<SelfExit> selfExits() {
    return List.copyOf(selfExits);
  }

  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  public synchronized boolean isPaused() {
    return paused;
  }

  public synchronized Optional<Long> pid() {
    return isRunning() ? Optional.of(process.pid()) : Optional.empty();
  }

  /** kill -9, waiting until the process is gone. */
  public synchronized void kill() {
    if (process == null) {
      return;
    }
    killing = true;
    if (paused) {
      signal("CONT");
    }
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    paused = false;
    try {
      // A dead pid must not linger where the watchdog would kill whatever reuses it.
      Files.deleteIfExists(pidFile);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * kill -9 and delete the data dir, as an operator does with a removed member; the next {@link
   * #start} runs it in join mode, empty, waiting to be added to the cluster.
   */
  public synchronized void wipeForRejoin() {
    kill();
    try {
      if (Files.exists(dataDir)) {
        try (var paths = Files.walk(dataDir)) {
          for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(p);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("deleting " + dataDir, e);
    }
    joining = true;
  }

  /**
   * Kills the node for good: a nemesis or heal still running while the cluster closes cannot start
   * it again.
   */
  public synchronized void retire() {
    retired = true;
    kill();
  }

  /** SIGSTOP: the process stays, frozen, holding its sockets. */
  public synchronized void pause() {
    if (isRunning() && !paused) {
      signal("STOP");
      paused = true;
    }
  }

  /** SIGCONT. */
  public synchronized void resume() {
    if (paused) {
      signal("CONT");
      paused = false;
    }
  }

  /**
   * Moves this node's wall clock by {@code offsetSeconds} from real time (libfaketime reads it
   * within a second).
   */
  public void setClockOffset(long offsetSeconds) {
    try {
      Files.writeString(clockFile, (offsetSeconds >= 0 ? "+" : "") + offsetSeconds + "s\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void signal(String sig) {
    if (process != null && process.isAlive()) {
      Shell.run(List.of("kill", "-" + sig, Long.toString(process.pid())));
    }
  }

  /** The last {@code lines} lines of this node's log. */
  public String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  static List<String> javaCommand(
      List<String> launcher, Path jar, Path tmpDir, List<String> serverArgs) {
    List<String> cmd = new ArrayList<>(launcher);
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // Small, quick-starting JVMs: several share two cores with the test JVM.
    cmd.addAll(
        List.of("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData"));
    // RocksDB and LZ4 unpack their native libraries into java.io.tmpdir, 15 MB a node, and
    // delete them at a clean exit (SIGTERM included); a node killed with -9 leaves them there.
    // Under the cluster's directory they go when the run removes it, not into the machine's /tmp.
    cmd.add("-Djava.io.tmpdir=" + tmpDir);
    cmd.addAll(List.of("-jar", jar.toString()));
    cmd.addAll(serverArgs);
    return cmd;
  }

  @Override
  public String toString() {
    return id;
  }
}
