package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.AuditRecordResponse;
import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.CopyGlobal;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.GetSessionResponse;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.proto.v1.InvalidCommand;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.ListSessionsResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogFormatReply;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Moving;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.PlacementTable;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.RefusedCommand;
import io.leasehold.proto.v1.ReplyBatch;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.proto.v1.SetLogFormatResponse;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.proto.v1.WrongGroup;
import io.leasehold.statemachine.store.AppliedPosition;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The deterministic lease state machine: a log entry in, the new state, a reply and events out.
 *
 * <p>It reads no clock. Time enters only as the leader's stamp in each {@link LogCommand}, kept
 * monotone, and is used only for recorded timestamps; whether a lease has expired is decided by the
 * leader's ticker, which proposes {@code Expire}. The fencing token of a lease derives from the
 * position of the command that granted it in the log ({@link LogFormat}), so tokens strictly
 * increase over every grant.
 *
 * <p>Every Acquire and renewal is checked against the replicated policy of the name's namespace
 * ({@link PolicyGate}); operators' commands (policies, bans, revocations) are applied by {@link
 * AdminCommands}. Everything the apply loop consults lives in memory ({@link CoreState}).
 *
 * <p>Single writer: {@link #apply} is called by one thread at a time; reads may run concurrently.
 */
public final class LeaseCore {
  static final byte[] CLOCK_KEY = "clock".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FORMAT_KEY = "log-format".getBytes(StandardCharsets.US_ASCII);

  private final KvStore store;

  /**
   * What the apply loop reads, kept in step with the store after each commit; readers on other
   * threads use consistent store views instead.
   */
  private final CoreState state = new CoreState();

  private final LeaseCommands leases;
  private final SessionCommands sessions;
  private final LeaseReads reads;
  private final EventHistory history;
  private final AdminCommands admin;
  private final AdminReads adminReads;
  private final AuthCommands auth;
  private final AuditTrail audit;
  private long clockMicros;
  private long appliedIndex;

  /**
   * The log format in force ({@link LogFormat}); read by other threads to decide whether to batch.
   */
  private volatile int logFormat = LogFormat.FIRST;

  /** Which namespaces this group applies commands to, and its token offset. */
  private final Placements placements;

  private final NamespaceMoves moves;

  /** The meta group's policies, bans and roles: its own, or a lease group's copy of them. */
  private final GlobalCopies global;

  /** The core of the meta group, which is a cluster's only group unless it has lease groups. */
  public LeaseCore(KvStore store) {
    this(store, 0);
  }

  /**
   * @param group the number of the Raft group this core applies: 0 for the meta group, 1 and up for
   *     lease groups (docs/design/multi-raft.md)
   */
  public LeaseCore(KvStore store, int group) {
    this.store = store;
    this.placements = new Placements(group, state.frozen);
    this.moves =
        new NamespaceMoves(state, store, placements, index -> LogFormat.token(logFormat, index, 0));
    this.reads = new LeaseReads(store);
    this.history = new EventHistory(store);
    this.admin = new AdminCommands(store, state);
    this.adminReads = new AdminReads(store);
    this.auth = new AuthCommands(store);
    this.sessions = new SessionCommands(state, auth::view);
    this.leases =
        new LeaseCommands(
            store,
            state,
            (identity, name) -> ApplyAuthorization.admin(auth.view(), identity, name));
    this.audit = new AuditTrail(store);
    this.global = new GlobalCopies(store, state, auth);
    reload();
  }

  /**
   * Re-reads the cached position, clock and in-memory state, after the store was replaced by a
   * snapshot.
   */
  public void reload() {
    clockMicros =
        store.get(Space.META, CLOCK_KEY).map(b -> ByteBuffer.wrap(b).getLong()).orElse(0L);
    appliedIndex = store.applied().index();
    logFormat =
        store
            .get(Space.META, FORMAT_KEY)
            .map(b -> ByteBuffer.wrap(b).getInt())
            .orElse(LogFormat.FIRST);
    history.reload();
    state.load(store);
    placements.load(store);
    auth.load();
    audit.load();
    global.load();
  }

  /** The roles and grants as of the last applied entry, for the API's authorization point. */
  public AccessView access() {
    return auth.view();
  }

  public KvStore store() {
    return store;
  }

  public AppliedPosition applied() {
    return store.applied();
  }

  /**
   * Applies the entry at {@code index}. Entries at or below the store's applied index are skipped:
   * their effects are already in the store (a replay after restart).
   */
  public ApplyResult apply(long term, long index, LogCommand command) throws IOException {
    if (index <= appliedIndex) {
      return ApplyResult.skipped(index);
    }
    long now = Math.max(clockMicros, command.getLeaderTimeMicros());
    if (command.getCommandCase() == LogCommand.CommandCase.BATCH
        && logFormat >= LogFormat.BATCHES) {
      return applyBatch(term, index, now, command.getBatch());
    }
    Tx tx = newTx(index, 0, now, 0, command);
    LogReply reply;
    try {
      reply = dispatch(tx, command);
    } catch (InvalidArgumentException e) {
      // A command the API should have refused: consume the entry, change nothing.
      tx = newTx(index, 0, now, 0, command);
      reply = invalid(e);
    } catch (RefusedException e) {
      tx = newTx(index, 0, now, 0, command);
      reply = refused(e);
    }
    Tx.Written written = tx.write();
    List<Change> changes = written.changes();
    changes.addAll(entryMeta(now, written.compaction()));
    if (logFormat >= LogFormat.AUTH) {
      Audits.entry(command, reply, tx.caller, now)
          .ifPresent(entry -> audit.record(changes, index, entry));
    }
    boolean globalChange =
        placements.group() == 0
            && logFormat >= LogFormat.GROUPS
            && GlobalCopies.global(command)
            && !reply.hasInvalid()
            && !reply.hasRefused();
    if (globalChange) {
      global.changed(changes, index);
    }
    store.commit(new AppliedPosition(term, index), changes);
    tx.publish();
    if (globalChange) {
      global.committed(index);
    }
    finishEntry(index, now);
    history.committed(written.kept(), written.compaction());
    return new ApplyResult(index, reply, tx.events, tx.bars, tx.sessionChanges);
  }

  /**
   * The fencing token of a lease granted by the command at {@code position} of entry {@code index}:
   * the index itself in log format 1, where an entry carries one command, and {@code index * 256 +
   * position} from format 2 on, so that tokens strictly increase over every grant however many an
   * entry carries.
   */
  long token(long index, int position) {
    return placements.tokenOffset() + LogFormat.token(logFormat, index, position);
  }

  /**
   * A batch of client commands: each applied in order with its own token and reply, each seeing the
   * changes of those before it; one invalid command changes nothing and the others still apply. One
   * store commit holds them all.
   */
  private ApplyResult applyBatch(long term, long index, long now, CommandBatch batch)
      throws IOException {
    int n = batch.getCommandsCount();
    List<Change> changes = new ArrayList<>();
    List<LeaseEvent> events = new ArrayList<>();
    List<TimedBar> bars = new ArrayList<>(0);
    List<SessionChange> sessionChanges = new ArrayList<>(0);
    ReplyBatch.Builder replies = ReplyBatch.newBuilder();
    Map<String, AcquireResponse> requestsInEntry = new HashMap<>();
    leases.batchRequests(requestsInEntry);
    int sequence = 0;
    try {
      for (int position = 0; position < n; position++) {
        LogCommand command = batch.getCommands(position);
        Tx tx = newTx(index, position, now, sequence, command);
        LogReply reply;
        try {
          if (position >= LogFormat.MAX_BATCH) {
            throw new InvalidArgumentException(
                "batch.commands[" + position + "]",
                "an entry carries at most " + LogFormat.MAX_BATCH + " commands");
          }
          if (!LogFormat.batchable(command)) {
            throw new InvalidArgumentException(
                "batch.commands[" + position + "]",
                "only client lease and session commands may be batched, not "
                    + command.getCommandCase());
          }
          reply = dispatch(tx, command);
        } catch (InvalidArgumentException e) {
          tx = newTx(index, position, now, sequence, command);
          reply = invalid(e);
        } catch (RefusedException e) {
          tx = newTx(index, position, now, sequence, command);
          reply = refused(e);
        }
        Tx.Written written = tx.write();
        changes.addAll(written.changes());
        // Published at once, so the next command sees this one's changes; the store commit below
        // holds them all. If it fails, Ratis stops the server and the state reloads from the store.
        tx.publish();
        written.request().ifPresent(r -> requestsInEntry.put(r.id(), r.reply()));
        sequence += written.kept();
        history.committed(written.kept(), Optional.empty());
        events.addAll(tx.events);
        bars.addAll(tx.bars);
        sessionChanges.addAll(tx.sessionChanges);
        replies.addReplies(reply);
      }
    } finally {
      leases.batchRequests(Map.of());
    }
    if (now != clockMicros) {
      changes.add(Change.put(Space.META, CLOCK_KEY, ByteBuffer.allocate(8).putLong(now).array()));
    }
    store.commit(new AppliedPosition(term, index), changes);
    finishEntry(index, now);
    return new ApplyResult(
        index, LogReply.newBuilder().setBatch(replies).build(), events, bars, sessionChanges);
  }

  /**
   * The transaction of one command; the caller counts from log format 3 on, as every replica then
   * applies it.
   */
  private Tx newTx(long index, int position, long now, int sequence, LogCommand command) {
    return new Tx(
        index,
        token(index, position),
        now,
        logFormat >= LogFormat.AUTH ? command.getCaller() : "",
        logFormat >= LogFormat.SESSIONS,
        logFormat >= LogFormat.MANY,
        state,
        sequence);
  }

  private LogReply dispatch(Tx tx, LogCommand command) {
    int needed = LogFormat.needed(command);
    if (needed > logFormat) {
      throw new InvalidArgumentException(
          "command",
          command.getCommandCase()
              + " needs log format "
              + needed
              + "; the cluster applies format "
              + logFormat
              + " until every member runs code that knows it");
    }
    Optional<String> foreign = placements.foreign(command);
    if (foreign.isPresent()) {
      return LogReply.newBuilder()
          .setWrongGroup(WrongGroup.newBuilder().setNamespace(foreign.get()))
          .build();
    }
    Optional<String> moving = placements.moving(command);
    if (moving.isPresent()) {
      return LogReply.newBuilder()
          .setMoving(
              Moving.newBuilder()
                  .setNamespace(moving.get())
                  .setMove(placements.frozenBy(moving.get())))
          .build();
    }
    if (placements.group() != 0 && GlobalCopies.global(command)) {
      throw new InvalidArgumentException(
          "command",
          command.getCommandCase()
              + " is applied by the meta group; lease group "
              + placements.group()
              + " holds copies of its policies, bans and roles");
    }
    ApplyAuthorization.check(auth.view(), tx.caller, command);
    return switch (command.getCommandCase()) {
      case ACQUIRE ->
          LogReply.newBuilder().setAcquire(leases.acquire(tx, command.getAcquire())).build();
      case ACQUIRE_MANY ->
          LogReply.newBuilder()
              .setAcquireMany(
                  leases.acquireMany(
                      tx, command.getAcquireMany(), position -> token(tx.index, position)))
              .build();
      case RENEW -> LogReply.newBuilder().setRenew(leases.renew(tx, command.getRenew())).build();
      case RELEASE ->
          LogReply.newBuilder().setRelease(leases.release(tx, command.getRelease())).build();
      case UPDATE ->
          LogReply.newBuilder().setUpdate(leases.update(tx, command.getUpdate())).build();
      case EXPIRE ->
          LogReply.newBuilder()
              .setExpire(
                  sessions.expire(tx, command.getExpire(), leases.expire(tx, command.getExpire())))
              .build();
      case COMPACT_HISTORY ->
          LogReply.newBuilder()
              .setCompactHistory(history.compact(tx, command.getCompactHistory()))
              .build();
      case SET_POLICY ->
          LogReply.newBuilder().setSetPolicy(admin.setPolicy(tx, command.getSetPolicy())).build();
      case DELETE_POLICY ->
          LogReply.newBuilder()
              .setDeletePolicy(admin.deletePolicy(tx, command.getDeletePolicy()))
              .build();
      case BAN -> LogReply.newBuilder().setBan(admin.ban(tx, command.getBan())).build();
      case UNBAN -> LogReply.newBuilder().setUnban(admin.unban(tx, command.getUnban())).build();
      case REVOKE -> LogReply.newBuilder().setRevoke(admin.revoke(tx, command.getRevoke())).build();
      case LIFT_BANS ->
          LogReply.newBuilder().setLiftBans(admin.liftBans(tx, command.getLiftBans())).build();
      case LIFT_LOCK_DELAYS ->
          LogReply.newBuilder()
              .setLiftLockDelays(admin.liftLockDelays(tx, command.getLiftLockDelays()))
              .build();
      case SET_LOG_FORMAT ->
          LogReply.newBuilder()
              .setSetLogFormat(setLogFormat(tx, command.getSetLogFormat()))
              .build();
      case ADD_ROLE ->
          LogReply.newBuilder().setAddRole(auth.addRole(tx, command.getAddRole())).build();
      case REMOVE_ROLE ->
          LogReply.newBuilder().setRemoveRole(auth.removeRole(tx, command.getRemoveRole())).build();
      case GRANT_ROLE ->
          LogReply.newBuilder().setGrantRole(auth.grantRole(tx, command.getGrantRole())).build();
      case REVOKE_ROLE ->
          LogReply.newBuilder().setRevokeRole(auth.revokeRole(tx, command.getRevokeRole())).build();
      case BOOTSTRAP_ADMIN ->
          LogReply.newBuilder()
              .setBootstrapAdmin(auth.bootstrapAdmin(tx, command.getBootstrapAdmin()))
              .build();
      case CREATE_SESSION ->
          LogReply.newBuilder()
              .setCreateSession(sessions.create(tx, command.getCreateSession()))
              .build();
      case KEEP_ALIVE ->
          LogReply.newBuilder()
              .setKeepAlive(sessions.keepAlive(tx, command.getKeepAlive()))
              .build();
      case CLOSE_SESSION ->
          LogReply.newBuilder()
              .setCloseSession(sessions.close(tx, command.getCloseSession()))
              .build();
      case TRANSFER ->
          LogReply.newBuilder().setTransfer(leases.transfer(tx, command.getTransfer())).build();
      case ACCEPT_TRANSFER ->
          LogReply.newBuilder()
              .setAcceptTransfer(leases.acceptTransfer(tx, command.getAcceptTransfer()))
              .build();
      case WITHDRAW_OFFERS ->
          LogReply.newBuilder()
              .setWithdrawOffers(leases.withdrawOffers(tx, command.getWithdrawOffers()))
              .build();
      case AUDIT_RECORD ->
          LogReply.newBuilder()
              .setAuditRecord(AuditRecordResponse.newBuilder().setRevision(tx.index))
              .build();
      case PLACE_NAMESPACE ->
          LogReply.newBuilder()
              .setPlaceNamespace(
                  placements.place(
                      tx, command.getPlaceNamespace(), this::holdsState, token(tx.index + 1, 0)))
              .build();
      case ADOPT_NAMESPACE -> {
        AdoptNamespace c = command.getAdoptNamespace();
        if (c.getEpoch() >= 1 && (c.getMove() < 0 || (c.getMove() == 0) != (c.getEpoch() == 1))) {
          throw new InvalidArgumentException(
              "adopt_namespace.move",
              "a first placement (epoch 1) carries no move, and a move's adoption (epoch 2 on)"
                  + " names its move, above 0; got epoch "
                  + c.getEpoch()
                  + ", move "
                  + c.getMove());
        }
        if (c.getMove() == 0 && (c.hasState() || c.getStagedParts() != 0)) {
          throw new InvalidArgumentException(
              "adopt_namespace.state", "only a move's adoption carries state");
        }
        PlacementResponse adopted =
            placements.adopt(tx, c, LogFormat.token(logFormat, tx.index + 1, 0));
        if (c.getMove() != 0 && adopted.getRevision() == tx.index) {
          // A new adoption: its staged parts must all be here (an adoption applied already
          // changes nothing, and its parts are gone).
          moves.adoptState(tx, c, moves.adopted(tx, c));
        }
        yield LogReply.newBuilder().setAdoptNamespace(adopted).build();
      }
      case FREEZE_NAMESPACE -> {
        String ns = command.getFreezeNamespace().getNamespace();
        if (!ns.isEmpty() && !placements.owns(ns)) {
          yield LogReply.newBuilder()
              .setWrongGroup(WrongGroup.newBuilder().setNamespace(ns))
              .build();
        }
        yield LogReply.newBuilder()
            .setFreezeNamespace(moves.freeze(tx, command.getFreezeNamespace()))
            .build();
      }
      case STAGE_NAMESPACE ->
          LogReply.newBuilder()
              .setStageNamespace(moves.stage(tx, command.getStageNamespace()))
              .build();
      case UNFREEZE_NAMESPACE ->
          LogReply.newBuilder()
              .setUnfreezeNamespace(moves.unfreeze(tx, command.getUnfreezeNamespace()))
              .build();
      case RECORD_MOVE ->
          LogReply.newBuilder()
              .setRecordMove(placements.recordMove(tx, command.getRecordMove()))
              .build();
      case FINISH_MOVE -> {
        Optional<PlacementResponse> before = placements.get(command.getFinishMove().getNamespace());
        PlacementResponse after = placements.finishMove(tx, command.getFinishMove());
        if (before.isPresent()
            && before.get().getGroup() == 0
            && before.get().getMovingTo() != 0
            && after.getGroup() != 0) {
          // A move from the meta group is done: its state lives on in the group that adopted it.
          moves.forget(tx, after.getNamespace());
        }
        yield LogReply.newBuilder().setFinishMove(after).build();
      }
      case DROP_NAMESPACE ->
          LogReply.newBuilder()
              .setDropNamespace(moves.drop(tx, command.getDropNamespace()))
              .build();
      case COPY_GLOBAL -> {
        if (placements.group() == 0) {
          throw new InvalidArgumentException(
              "copy_global", "the meta group holds the global state; only lease groups copy it");
        }
        yield LogReply.newBuilder()
            .setCopyGlobal(global.apply(tx, command.getCopyGlobal()))
            .build();
      }
      case CREATE_SESSION_PART -> {
        leaseGroupOnly("create_session_part");
        yield LogReply.newBuilder()
            .setSessionParts(sessions.createPart(tx, command.getCreateSessionPart()))
            .build();
      }
      case END_SESSION_PARTS -> {
        leaseGroupOnly("end_session_parts");
        yield LogReply.newBuilder()
            .setSessionParts(sessions.endParts(tx, command.getEndSessionParts()))
            .build();
      }
      // Format 1 knows no batches: applied as no command, as a node that predates them applies it.
      case BATCH ->
          throw new InvalidArgumentException(
              "batch", "log format " + logFormat + " carries one command an entry");
      case COMMAND_NOT_SET ->
          throw new InvalidArgumentException("command", "the log entry carries no command");
    };
  }

  private void leaseGroupOnly(String field) {
    if (placements.group() == 0) {
      throw new InvalidArgumentException(
          field, "the meta group holds sessions whole; only lease groups hold parts of them");
    }
  }

  private static LogReply refused(RefusedException e) {
    return LogReply.newBuilder()
        .setRefused(
            RefusedCommand.newBuilder()
                .setCode(e.kind().grpcCode())
                .setField(e.field())
                .setMessage(e.getMessage()))
        .build();
  }

  private static LogReply invalid(InvalidArgumentException e) {
    return LogReply.newBuilder()
        .setInvalid(InvalidCommand.newBuilder().setField(e.field()).setMessage(e.getMessage()))
        .build();
  }

  /** The clock and history bounds an entry leaves in the meta space. */
  private List<Change> entryMeta(long now, Optional<Tx.Compaction> compaction) {
    List<Change> changes = new ArrayList<>(2);
    if (now != clockMicros) {
      changes.add(Change.put(Space.META, CLOCK_KEY, ByteBuffer.allocate(8).putLong(now).array()));
    }
    EventHistory.meta(compaction).ifPresent(changes::add);
    return changes;
  }

  private void finishEntry(long index, long now) {
    clockMicros = now;
    appliedIndex = index;
  }

  /**
   * Raises the log format (never lowers it). The leader proposes this only once every member runs
   * code that knows the new format, so every replica applies it alike.
   */
  private SetLogFormatResponse setLogFormat(Tx tx, SetLogFormat c) {
    int asked = c.getFormat();
    boolean raises = asked > logFormat && asked <= LogFormat.NEWEST;
    if (raises) {
      tx.extra.add(
          Change.put(Space.META, FORMAT_KEY, ByteBuffer.allocate(4).putInt(asked).array()));
      if (logFormat < LogFormat.SESSIONS && asked >= LogFormat.SESSIONS) {
        // From here on every lease write keeps the holder index; it starts with the leases live
        // now.
        state.leases.forEach(
            (name, lease) ->
                tx.extra.add(
                    Change.put(
                        Space.HOLDER_LEASES,
                        HolderKeys.key(lease.getHolder(), name),
                        HolderKeys.EMPTY)));
      }
      if (logFormat < LogFormat.MANY && asked >= LogFormat.MANY) {
        // From here on every change to a service's instances sets its version; the services live
        // now start at this entry's index.
        Set<String> services = new HashSet<>();
        state.leases.forEach(
            (name, lease) -> {
              String service = ServiceVersions.serviceOf(name);
              if (service != null) {
                services.add(service);
              }
            });
        ServiceVersions.put(services, tx.index, tx.extra);
      }
      if (placements.group() == 0 && logFormat < LogFormat.GROUPS && asked >= LogFormat.GROUPS) {
        // The global state held now is the first version lease groups copy.
        global.changed(tx.extra, tx.index);
        tx.afterCommit(() -> global.committed(tx.index));
      }
      tx.afterCommit(() -> logFormat = asked);
    }
    return SetLogFormatResponse.newBuilder()
        .setFormat(raises ? asked : logFormat)
        .setRevision(tx.index)
        .build();
  }

  /** The log format in force as of the last applied entry ({@link LogFormat}). */
  public int logFormat() {
    return logFormat;
  }

  /**
   * Whether a command changes the global state (policies, bans, roles): the meta group's alone,
   * copied into lease groups.
   */
  public static boolean changesGlobalState(LogCommand command) {
    return GlobalCopies.global(command);
  }

  /**
   * The version of the global state (policies, bans, roles) this group holds: in the meta group the
   * last entry that changed it, in a lease group the copy it took last (docs/design/multi-raft.md,
   * "Global state"). Safe from any thread.
   */
  public long globalVersion() {
    return global.version();
  }

  /**
   * The meta group's global state as of its last applied entry, as a lease group takes it ({@code
   * CopyGlobal}); read from one view.
   */
  public CopyGlobal globalState() {
    return global.snapshot();
  }

  // ---- reads ----

  /**
   * Answers a read from one consistent view; {@code nowMicros} only fills {@code remaining}. With
   * {@code check_served}, the answer names which of those namespaces (and, with {@code
   * check_listed}, of the listed leases' namespaces) this group served from the answer's revision
   * until now ({@link #servesReads}).
   */
  public ReadReply query(ReadQuery query, long nowMicros) {
    ReadReply reply = answer(query, nowMicros);
    if (query.getCheckServedCount() == 0 && !query.getCheckListed()) {
      return reply;
    }
    java.util.Set<String> asked = new java.util.TreeSet<>(query.getCheckServedList());
    if (query.getCheckListed() && reply.hasList()) {
      reply.getList().getLeasesList().forEach(l -> asked.add(namespaceOf(l.getName())));
    }
    long revision = revisionOf(reply);
    ReadReply.Builder checked = reply.toBuilder();
    for (String ns : asked) {
      if (servesReads(ns, revision)) {
        checked.addServed(ns);
      }
    }
    return checked.build();
  }

  /** The revision a read's answer reflects; the largest for an answer that carries none. */
  private static long revisionOf(ReadReply reply) {
    return switch (reply.getReplyCase()) {
      case GET -> reply.getGet().getRevision();
      case LIST -> reply.getList().getRevision();
      case HISTORY -> reply.getHistory().getRevision();
      case SERVICE -> reply.getService().getList().getRevision();
      default -> Long.MAX_VALUE;
    };
  }

  private ReadReply answer(ReadQuery query, long nowMicros) {
    return switch (query.getQueryCase()) {
      case GET -> ReadReply.newBuilder().setGet(get(query.getGet(), nowMicros)).build();
      case LIST -> ReadReply.newBuilder().setList(list(query.getList(), nowMicros)).build();
      case SERVICE ->
          ReadReply.newBuilder()
              .setService(reads.service(query.getService().getService(), nowMicros))
              .build();
      case GET_POLICY ->
          ReadReply.newBuilder().setGetPolicy(adminReads.getPolicy(query.getGetPolicy())).build();
      case LIST_POLICIES ->
          ReadReply.newBuilder()
              .setListPolicies(adminReads.listPolicies(query.getListPolicies()))
              .build();
      case LIST_BANS ->
          ReadReply.newBuilder().setListBans(adminReads.listBans(query.getListBans())).build();
      case HISTORY ->
          ReadReply.newBuilder().setHistory(adminReads.history(query.getHistory())).build();
      case LIST_ROLES ->
          ReadReply.newBuilder().setListRoles(auth.listRoles(query.getListRoles())).build();
      case LIST_GRANTS ->
          ReadReply.newBuilder().setListGrants(auth.listGrants(query.getListGrants())).build();
      case AUDIT -> ReadReply.newBuilder().setAudit(audit.read(query.getAudit())).build();
      case GET_SESSION ->
          ReadReply.newBuilder()
              .setGetSession(reads.getSession(query.getGetSession(), nowMicros))
              .build();
      case LIST_SESSIONS ->
          ReadReply.newBuilder()
              .setListSessions(reads.listSessions(query.getListSessions(), nowMicros))
              .build();
      case LOG_FORMAT ->
          ReadReply.newBuilder()
              .setLogFormat(
                  LogFormatReply.newBuilder().setNewest(LogFormat.NEWEST).setCurrent(logFormat))
              .build();
      case CONFIRM_LEADERSHIP ->
          throw new InvalidArgumentException(
              "query", "confirm_leadership is answered by the server, not the store");
      case DEADLINES ->
          throw new InvalidArgumentException(
              "query", "deadlines are answered by the leader's expiry ticker, not the store");
      case PLACEMENT -> ReadReply.newBuilder().setPlacement(placementTable()).build();
      case QUERY_NOT_SET -> throw new InvalidArgumentException("query", "carries no request");
    };
  }

  /** The placements this group records, from one consistent view. */
  private PlacementTable placementTable() {
    return store.read(
        view -> {
          PlacementTable.Builder table = PlacementTable.newBuilder();
          view.scan(
              Space.PLACEMENTS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                table.addPlacements(
                    Placements.response(
                        new String(key, StandardCharsets.UTF_8), Placements.parse(value)));
                return true;
              });
          return table.build();
        });
  }

  /**
   * Whether this group holds live state of a namespace: a lease, a lock-delay or a transfer offer
   * (apply thread).
   */
  private boolean holdsState(String namespace) {
    if (state.index.countsByNamespace().getOrDefault(namespace, 0L) > 0) {
      return true;
    }
    byte[] prefix = (namespace + "/").getBytes(StandardCharsets.UTF_8);
    return store.read(
        view -> {
          boolean[] found = new boolean[1];
          for (Space space : new Space[] {Space.LOCK_DELAYS, Space.OFFERS}) {
            view.scan(
                space,
                prefix,
                new byte[0],
                (key, value) -> {
                  found[0] = true;
                  return false;
                });
          }
          return found[0];
        });
  }

  /** This group's number: 0 for the meta group. */
  public int group() {
    return placements.group();
  }

  /**
   * The placement of {@code namespace} as this replica has applied it (the meta group's table, or a
   * lease group's adoption); safe to call from any thread.
   */
  public Optional<PlacementResponse> placement(String namespace) {
    return placements.get(namespace);
  }

  /**
   * How many entries a moving namespace's state holds (leases, lock-delays, offers, sessions,
   * names' histories), as an adoption of staged parts names them ({@code staged_entries}).
   */
  public static int stateEntries(io.leasehold.proto.v1.NamespaceState state) {
    return NamespaceMoves.entries(state);
  }

  /**
   * Whether this group's read of {@code namespace} at {@code revision} is the namespace's live
   * state: it owned the namespace from that revision until now and does not hold it frozen for a
   * move. A node whose placement table is behind a move may read the group the namespace left,
   * which has dropped it or holds only the copy it froze. Any thread.
   */
  public boolean servesReads(String namespace, long revision) {
    return placements.servesReads(namespace, revision);
  }

  /**
   * The meta group: the index of the last entry that changed where a namespace lives (a placement,
   * a move's switch), as this replica applied it; 0 before any. Any thread.
   */
  public long placementVersion() {
    return placements.version();
  }

  /** The namespaces placed on each group in this replica's placement table, sorted; any thread. */
  public Map<Integer, List<String>> namespacesByGroup() {
    return placements.namespacesByGroup();
  }

  public GetResponse get(GetRequest r, long nowMicros) {
    return reads.get(r, nowMicros);
  }

  public ListResponse list(ListRequest r, long nowMicros) {
    return reads.list(r, nowMicros, logFormat);
  }

  /**
   * What a history read found: the events are gone below {@code compactRevision}; the view was at
   * {@code revision}.
   */
  public record HistoryRead(boolean compacted, long compactRevision, long revision) {}

  /**
   * Visits, in one consistent view, every event in the history from {@code fromRevision} on, unless
   * the history no longer reaches back that far ({@link HistoryRead#compacted}).
   */
  public HistoryRead readHistory(long fromRevision, Consumer<Event> visitor) {
    return history.read(fromRevision, visitor);
  }

  /**
   * The revision below which the history may be dropped to keep at most {@code maxCount} events,
   * none older than {@code notBeforeMicros} (leader-stamped time).
   */
  public long compactionPoint(long maxCount, long notBeforeMicros) {
    return history.compactionPoint(maxCount, notBeforeMicros);
  }

  /** The history's bounds as of the latest applied entry, for the leader's compactor. */
  public HistoryMeta history() {
    return history.bounds();
  }

  /** The live leases as of the latest applied entry; safe to call from any thread. */
  public int liveLeases() {
    return state.liveLeases;
  }

  /**
   * The live leases of each namespace in this replica's applied state, from the index the apply
   * thread keeps (no scan); safe to call from any thread.
   */
  public Map<String, Long> liveLeasesByNamespace() {
    return state.index.countsByNamespace();
  }

  /** The namespace of a lease name: what precedes its first '/' (quotas count leases by it). */
  public static String namespaceOf(String name) {
    return LeaseIndex.namespace(name);
  }

  /** What this replica's apply loop has counted since it started (not replicated). */
  public Counters counters() {
    return state.counters;
  }

  /**
   * Visits every lock-delay, transfer offer and timed ban in one consistent view, for a new leader
   * that must lift them; returns the revision the view reflects. A lock-delay comes with its full
   * delay and an offer with its full window (the leader gives them all of it again, as it gives
   * every lease a full TTL); a timed ban with what remains of it by the latest stamped time, at
   * least 0 (so the leader lifts it no earlier than the recorded end, as far as stamped time can
   * tell).
   */
  public long forEachTimedBar(Consumer<TimedBar> visitor) {
    return reads.forEachTimedBar(visitor);
  }

  /** Visits every session in one consistent view; returns the revision the view reflects. */
  public long forEachSession(BiConsumer<Long, StoredSession> visitor) {
    return reads.forEachSession(visitor);
  }

  /** A session (or a lease group's part of one) as this replica holds it; any thread. */
  public Optional<StoredSession> storedSession(long id) {
    return store.read(view -> view.get(Space.SESSIONS, Sessions.key(id)).map(Sessions::parse));
  }

  /**
   * Whether the meta group's session {@code id} has ended for good: this replica applied the entry
   * that created it (ids are tokens, which grow with the log; the meta group's carry no offset) and
   * holds it no longer. Sessions never come back, so a lagging replica may answer false, never
   * wrongly true. Any thread.
   */
  public boolean sessionEnded(long id) {
    return store.read(
        view -> {
          // The format as of the view: a later one could count tokens the view has not applied.
          int format =
              view.get(Space.META, FORMAT_KEY)
                  .map(b -> ByteBuffer.wrap(b).getInt())
                  .orElse(LogFormat.FIRST);
          long next = LogFormat.token(format, view.applied().index() + 1, 0);
          return id < next && view.get(Space.SESSIONS, Sessions.key(id)).isEmpty();
        });
  }

  public GetSessionResponse getSession(GetSessionRequest r, long nowMicros) {
    return reads.getSession(r, nowMicros);
  }

  public ListSessionsResponse listSessions(ListSessionsRequest r, long nowMicros) {
    return reads.listSessions(r, nowMicros);
  }

  /** Visits every lease in one consistent view; returns the revision the view reflects. */
  /** Every placement this group has applied, by namespace; safe from any thread. */
  public List<PlacementResponse> placements() {
    return placements.all();
  }

  public long forEachLease(BiConsumer<String, LeaseRecord> visitor) {
    return reads.forEachLease(visitor);
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static HistoryMeta parseHistory(byte[] bytes) {
    try {
      return HistoryMeta.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt history meta", e);
    }
  }

  static LeaseRecord parse(byte[] bytes) {
    try {
      return LeaseRecord.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt lease record", e);
    }
  }
}
