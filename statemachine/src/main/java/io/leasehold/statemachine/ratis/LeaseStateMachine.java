package io.leasehold.statemachine.ratis;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.store.AppliedPosition;
import io.leasehold.statemachine.store.RocksDbStore;
import io.leasehold.statemachine.store.SnapshotFormat;
import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.util.ProtoUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis face of {@link LeaseCore}: decodes log entries, stamps the leader's time, delegates,
 * persists snapshots, and passes leadership changes on. It decides nothing itself.
 *
 * <p>The live RocksDB lives in {@code dbDir}, outside Ratis's {@code sm/} directory, which a
 * snapshot installation replaces. A snapshot is one file in {@code sm/} holding the whole state in
 * the store-independent {@code SnapshotFormat}, so Ratis can ship it to a lagging follower with its
 * own InstallSnapshot machinery.
 */
public final class LeaseStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseStateMachine.class);
  private static final SnapshotRetentionPolicy KEEP_TWO =
      new SnapshotRetentionPolicy() {
        @Override
        public int getNumSnapshotsRetained() {
          return 2;
        }
      };

  /** Callbacks from the apply thread and Ratis's leadership notifications. None may block. */
  public interface Listener {
    void onApplied(ApplyResult result);

    /** This node is leader and has applied its term's first entry: it may start deciding expiry. */
    void onLeaderReady();

    /** This node is not (or no longer) the leader. */
    void onNotLeader();

    /** Ratis learned of a new leader (any node, this one included) in a term. */
    default void onLeaderChanged(String leaderId, long term) {}

    /** How long the core took to apply one entry (apply thread). */
    default void onApplyTime(long nanos) {}

    /** A snapshot was written: its position and size (snapshot thread). */
    default void onSnapshotTaken(long term, long index, long bytes) {}

    /**
     * Ratis closed this node's Raft division on its own, while the server goes on: a candidate
     * whose configuration leaves it out shuts itself down. The node can no longer take part.
     */
    default void onDivisionClosed(RaftProtos.RoleInfoProto roleInfo) {}

    /** A Raft configuration was appended or applied: the members it lists. */
    default void onConfigurationChanged(List<RaftPeer> members) {}

    /**
     * A follower asks this node, as leader of {@code term}, to confirm with a majority that it
     * still leads: completes when it has, fails otherwise.
     */
    default CompletableFuture<Void> confirmLeadership(long term) {
      return CompletableFuture.failedFuture(
          new UnsupportedOperationException("confirm_leadership"));
    }

    /**
     * The node serving a lease read asks this node, as the leader, for the deadlines its expiry
     * ticker keeps: fails unless this node leads and decides expiry.
     */
    default CompletableFuture<DeadlineReply> deadlines(DeadlineQuery query) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException("deadlines"));
    }
  }

  private final Path dbDir;
  private final Optional<RocksDbStore.Memory> memory;
  private final Listener listener;
  private final LongSupplier wallClockMicros;
  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private final AtomicLong lastStamp = new AtomicLong();
  private final AtomicInteger snapshotsLoaded = new AtomicInteger();
  private volatile RocksDbStore store;
  private volatile LeaseCore core;
  private volatile RaftPeerId selfId;
  private volatile SnapshotInfo latestSnapshot;
  private final ExecutorService snapshotWriter =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-snapshot");
            t.setDaemon(true);
            return t;
          });

  private final int group;

  /** Guarded by this: the background snapshot, if one was started. */
  private Future<?> snapshotRun;

  /** Guarded by this: the snapshot index last returned to Ratis. */
  private long returnedSnapshotIndex = -1;

  public LeaseStateMachine(Path dbDir, Listener listener, LongSupplier wallClockMicros) {
    this(dbDir, listener, wallClockMicros, Optional.empty());
  }

  /**
   * @param memory the RocksDB memory budget to open the store within, shared with the node's other
   *     groups' stores; empty: a budget of its own
   */
  public LeaseStateMachine(
      Path dbDir,
      Listener listener,
      LongSupplier wallClockMicros,
      Optional<RocksDbStore.Memory> memory) {
    this(dbDir, listener, wallClockMicros, memory, 0);
  }

  /**
   * @param group the number of the Raft group it applies: 0 for the meta group, 1 and up for lease
   *     groups
   */
  public LeaseStateMachine(
      Path dbDir,
      Listener listener,
      LongSupplier wallClockMicros,
      Optional<RocksDbStore.Memory> memory,
      int group) {
    this.group = group;
    this.dbDir = Objects.requireNonNull(dbDir);
    this.listener = Objects.requireNonNull(listener);
    this.wallClockMicros = Objects.requireNonNull(wallClockMicros);
    this.memory = Objects.requireNonNull(memory);
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    getLifeCycle()
        .startAndTransition(
            () -> {
              super.initialize(server, groupId, raftStorage);
              selfId = server.getId();
              storage.init(raftStorage);
              store =
                  memory.isPresent()
                      ? RocksDbStore.open(dbDir, memory.get())
                      : RocksDbStore.open(dbDir);
              core = new LeaseCore(store, group);
              catchUpFromSnapshot(storage.loadLatestSnapshot());
            });
    LOG.info("state loaded: db={} applied={} snapshot={}", dbDir, core.applied(), latestSnapshot);
  }

  /** Ratis pauses the state machine (no applies) before it publishes an installed snapshot. */
  @Override
  public void pause() {
    getLifeCycle().transition(LifeCycle.State.PAUSING);
    getLifeCycle().transition(LifeCycle.State.PAUSED);
  }

  /** Called by Ratis, paused, after it installed a snapshot from the leader. */
  @Override
  public void reinitialize() throws IOException {
    awaitSnapshotWriter();
    catchUpFromSnapshot(storage.loadLatestSnapshot());
    if (getLifeCycleState() == LifeCycle.State.PAUSED) {
      getLifeCycle().transition(LifeCycle.State.STARTING);
      getLifeCycle().transition(LifeCycle.State.RUNNING);
    }
    LOG.info("state reloaded after snapshot install: applied={}", core.applied());
  }

  /**
   * Loads the snapshot into the live store if the store is behind it (a fresh node, a lost DB, or
   * an installed snapshot). A store that is ahead keeps its state: Ratis replays from the snapshot
   * index and the core skips entries it has already applied.
   */
  private void catchUpFromSnapshot(SingleFileSnapshotInfo snapshot) throws IOException {
    latestSnapshot = snapshot;
    if (snapshot == null) {
      return;
    }
    Path file = snapshot.getFile().getPath();
    if (core.applied().index() < snapshot.getIndex()) {
      MD5Hash md5 = snapshot.getFile().getFileDigest();
      if (md5 != null) {
        MD5FileUtil.verifySavedMD5(file.toFile(), md5);
      }
      try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
        store.loadSnapshot(in);
      }
      core.reload();
      snapshotsLoaded.incrementAndGet();
      LOG.info("snapshot loaded: {} -> applied={}", file.getFileName(), core.applied());
    }
    setLastAppliedTermIndex(snapshot.getTermIndex());
  }

  @Override
  public SimpleStateMachineStorage getStateMachineStorage() {
    return storage;
  }

  /**
   * Ratis asks for this on every append; the storage answers from a cache only once a snapshot
   * exists and lists the snapshot directory on every call until then. Ours is kept here and changes
   * only where a snapshot appears: taken, loaded at start, or installed from the leader.
   */
  @Override
  public SnapshotInfo getLatestSnapshot() {
    return latestSnapshot;
  }

  /** Stamps the leader's wall-clock time into the command before it is appended to the log. */
  @Override
  public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
    TransactionContext.Builder trx =
        TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request);
    LogCommand command;
    try {
      command = LogCommand.parseFrom(request.getMessage().getContent().asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      TransactionContext rejected = trx.build();
      rejected.setException(new IOException("not a Leasehold log command: " + e.getMessage(), e));
      return rejected;
    }
    long stamp = lastStamp.accumulateAndGet(wallClockMicros.getAsLong(), Math::max);
    LogCommand stamped = command.toBuilder().setLeaderTimeMicros(stamp).build();
    return trx.setLogData(UnsafeByteOperations.unsafeWrap(stamped.toByteArray()))
        .setStateMachineContext(stamped)
        .build();
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    LogCommand command = trx.getStateMachineContext() instanceof LogCommand c ? c : decode(entry);
    try {
      long started = System.nanoTime();
      ApplyResult result = core.apply(entry.getTerm(), entry.getIndex(), command);
      listener.onApplyTime(System.nanoTime() - started);
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
      listener.onApplied(result);
      return CompletableFuture.completedFuture(
          Message.valueOf(UnsafeByteOperations.unsafeWrap(result.reply().toByteArray())));
    } catch (IOException | RuntimeException e) {
      // A storage fault: Ratis stops this server rather than let replicas diverge.
      LOG.error("apply failed at index {}", entry.getIndex(), e);
      return CompletableFuture.failedFuture(e);
    }
  }

  private static LogCommand decode(LogEntryProto entry) {
    ByteString data = entry.getStateMachineLogEntry().getLogData();
    try {
      return LogCommand.parseFrom(data.asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      // Applied as "no command": an invalid no-op on every replica alike.
      LOG.warn("undecodable log entry at index {}: {}", entry.getIndex(), e.getMessage());
      return LogCommand.getDefaultInstance();
    }
  }

  /** Answers reads; linearizability comes from Ratis's read index before this is called. */
  @Override
  public CompletableFuture<Message> query(Message request) {
    try {
      ReadQuery query = ReadQuery.parseFrom(request.getContent().asReadOnlyByteBuffer());
      if (query.hasConfirmLeadership()) {
        return listener
            .confirmLeadership(query.getConfirmLeadership().getTerm())
            .thenApply(
                done ->
                    Message.valueOf(
                        UnsafeByteOperations.unsafeWrap(
                            ReadReply.getDefaultInstance().toByteArray())));
      }
      if (query.hasDeadlines()) {
        return listener
            .deadlines(query.getDeadlines())
            .thenApply(
                reply ->
                    Message.valueOf(
                        UnsafeByteOperations.unsafeWrap(
                            ReadReply.newBuilder().setDeadlines(reply).build().toByteArray())));
      }
      byte[] reply = core.query(query, wallClockMicros.getAsLong()).toByteArray();
      return CompletableFuture.completedFuture(
          Message.valueOf(UnsafeByteOperations.unsafeWrap(reply)));
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Starts a snapshot in the background and returns the index of the latest one finished.
   *
   * <p>Ratis calls this on the apply thread, and writing the whole state there stopped every apply
   * for about a second per 100,000 leases (every write in the cluster waited). Instead the snapshot
   * is written by its own thread from one consistent store view, named by the position that view
   * reflects; applies go on meanwhile. Ratis keeps asking while the returned index is behind its
   * threshold; once the snapshot is done the next call returns it, and Ratis may then purge the log
   * up to it.
   */
  @Override
  public synchronized long takeSnapshot() {
    long done = latestSnapshot == null ? -1 : latestSnapshot.getIndex();
    if (snapshotRun != null && !snapshotRun.isDone()) {
      return done;
    }
    if (done > returnedSnapshotIndex) {
      returnedSnapshotIndex = done;
      return done;
    }
    if (hasNothingToSnapshot() || core.applied().index() <= done) {
      return done;
    }
    try {
      snapshotRun =
          snapshotWriter.submit(
              () -> {
                try {
                  writeSnapshot();
                } catch (IOException | RuntimeException e) {
                  LOG.warn("snapshot failed; Ratis will ask again: {}", e.toString());
                }
              });
    } catch (RejectedExecutionException closed) {
      // Asked while closing: the store is durable as it is; the next start replays from `done`.
    }
    return done;
  }

  /** Writes one snapshot file from a consistent view of the store (snapshot thread). */
  private void writeSnapshot() throws IOException {
    File[] written = new File[1];
    TermIndex[] at = new TermIndex[1];
    MessageDigest md5 = MD5FileUtil.newMD5();
    store.read(
        view -> {
          AppliedPosition position = view.applied();
          at[0] = TermIndex.valueOf(position.term(), position.index());
          written[0] = storage.getSnapshotFile(position.term(), position.index());
          Path partial = written[0].toPath().resolveSibling("partial-" + written[0].getName());
          try (FileChannel channel =
                  FileChannel.open(
                      partial,
                      StandardOpenOption.CREATE,
                      StandardOpenOption.TRUNCATE_EXISTING,
                      StandardOpenOption.WRITE);
              OutputStream out = Channels.newOutputStream(channel)) { // SnapshotFormat buffers
            SnapshotFormat.write(view, out, md5);
            out.flush();
            channel.force(true);
            Files.move(
                partial,
                written[0].toPath(),
                StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          return null;
        });
    File file = written[0];
    // The digest of the bytes as they were written, not of the file read back (one pass less).
    MD5Hash digest = MD5Hash.newInstance(md5.digest());
    MD5FileUtil.saveMD5File(file, digest);
    SingleFileSnapshotInfo taken =
        new SingleFileSnapshotInfo(new FileInfo(file.toPath(), digest), at[0]);
    storage.updateLatestSnapshot(taken);
    latestSnapshot = taken;
    storage.cleanupOldSnapshots(KEEP_TWO);
    long bytes = Files.size(file.toPath());
    LOG.debug("snapshot taken at {} ({} bytes)", at[0], bytes);
    listener.onSnapshotTaken(at[0].getTerm(), at[0].getIndex(), bytes);
  }

  /**
   * Waits for a background snapshot, so nothing writes into {@code sm/} while Ratis replaces or
   * closes it.
   */
  private void awaitSnapshotWriter() {
    Future<?> run;
    synchronized (this) {
      run = snapshotRun;
    }
    if (run == null) {
      return;
    }
    try {
      run.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      // Logged by the task.
    }
  }

  @Override
  public void notifyLeaderReady() {
    listener.onLeaderReady();
  }

  @Override
  public void notifyNotLeader(Collection<TransactionContext> pendingEntries) {
    listener.onNotLeader();
  }

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
    if (newLeaderId != null) {
      long term = -1;
      RaftServer server = getServer().getNow(null);
      try {
        term =
            server == null
                ? -1
                : server.getDivision(groupMemberId.getGroupId()).getInfo().getCurrentTerm();
      } catch (IOException | RuntimeException e) {
        // The term is only for the log line.
      }
      listener.onLeaderChanged(newLeaderId.toString(), term);
    }
    if (!Objects.equals(newLeaderId, selfId)) {
      listener.onNotLeader();
    }
  }

  @Override
  public void notifyServerShutdown(RaftProtos.RoleInfoProto roleInfo, boolean allServer) {
    // Ratis 3.3 calls this only from a leader election that found this node outside the
    // configuration (its own, or the leader's answer); a whole-server close does not come here.
    listener.onDivisionClosed(roleInfo);
  }

  @Override
  public void notifyConfigurationChanged(
      long term, long index, RaftProtos.RaftConfigurationProto configuration) {
    listener.onConfigurationChanged(ProtoUtils.toRaftPeers(configuration.getPeersList()));
  }

  @Override
  public void close() throws IOException {
    awaitSnapshotWriter();
    snapshotWriter.shutdown();
    super.close();
    RocksDbStore s = store;
    if (s != null) {
      s.close();
    }
    closed = true;
  }

  private volatile boolean closed;

  /** Whether {@link #close} has finished: the store is closed, and its directory may go. */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Whether the store holds nothing a snapshot would keep: no entry past the first has been applied
   * and no snapshot was loaded. {@link #takeSnapshot} writes none then, so whoever waits for one
   * would wait forever.
   */
  public boolean hasNothingToSnapshot() {
    return core.applied().index() <= 0;
  }

  /** The core, for reads served from this node's applied state and for the expiry ticker. */
  public LeaseCore core() {
    return core;
  }

  /** The latest snapshot this node has (taken, loaded at start or installed), if any. */
  public Optional<SingleFileSnapshotInfo> latestSnapshotFile() {
    return latestSnapshot instanceof SingleFileSnapshotInfo s ? Optional.of(s) : Optional.empty();
  }

  /**
   * How many times a snapshot replaced the live state (fresh start, lost DB or install from the
   * leader).
   */
  public int snapshotsLoaded() {
    return snapshotsLoaded.get();
  }
}
