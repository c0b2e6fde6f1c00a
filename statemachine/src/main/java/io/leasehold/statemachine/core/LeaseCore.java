package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.CompactHistory;
import io.leasehold.proto.v1.CompactHistoryResponse;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Conflict;
import io.leasehold.proto.v1.ExpireCommand;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.ExpireResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.InvalidCommand;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.Rejection;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.ReplyBatch;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.proto.v1.SetLogFormatResponse;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.UpdateResponse;
import io.leasehold.statemachine.store.AppliedPosition;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.ReadView;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiConsumer;

/**
 * The deterministic lease state machine: a log entry in, the new state, a reply and events out.
 *
 * <p>It reads no clock. Time enters only as the leader's stamp in each {@link LogCommand}, kept
 * monotone, and is used only for recorded timestamps; whether a lease has expired is decided by
 * the leader's ticker, which proposes {@code Expire}. The fencing token of a lease derives from
 * the position of the command that granted it in the log ({@link LogFormat}), so tokens strictly
 * increase over every grant.
 *
 * <p>Every Acquire and renewal is checked against the replicated policy of the name's namespace
 * ({@link PolicyGate}); operators' commands (policies, bans, revocations) are applied by
 * {@link AdminCommands}. Everything the apply loop consults lives in memory ({@link CoreState}).
 *
 * <p>Single writer: {@link #apply} is called by one thread at a time; reads may run concurrently.
 */
public final class LeaseCore {
  private static final byte[] CLOCK_KEY = "clock".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] HISTORY_KEY = "history".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FORMAT_KEY = "log-format".getBytes(StandardCharsets.US_ASCII);

  private final KvStore store;
  /**
   * What the apply loop reads, kept in step with the store after each commit; readers on other
   * threads use consistent store views instead.
   */
  private final CoreState state = new CoreState();
  private final AdminCommands admin;
  private final AdminReads adminReads;
  private final AuthCommands auth;
  private final AuditTrail audit;
  private long clockMicros;
  private long appliedIndex;
  /** The log format in force ({@link LogFormat}); read by other threads to decide whether to batch. */
  private volatile int logFormat = LogFormat.FIRST;
  /** Acquire request ids applied by earlier commands of the batch being applied, with their replies. */
  private Map<String, AcquireResponse> entryRequests = Map.of();
  /** Events below this revision are gone from the history; the stored value is the truth. */
  private volatile long compactRevision;
  /**
   * Events in the history. Not stored (an extra write per event), recounted on load; only the
   * leader's compactor reads it, to choose a compaction point it then proposes.
   */
  private volatile long historyCount;

  public LeaseCore(KvStore store) {
    this.store = store;
    this.admin = new AdminCommands(store, state);
    this.adminReads = new AdminReads(store);
    this.auth = new AuthCommands(store);
    this.audit = new AuditTrail(store);
    reload();
  }

  /** Re-reads the cached position, clock and in-memory state, after the store was replaced by a snapshot. */
  public void reload() {
    clockMicros = store.get(Space.META, CLOCK_KEY).map(b -> ByteBuffer.wrap(b).getLong()).orElse(0L);
    appliedIndex = store.applied().index();
    logFormat = store.get(Space.META, FORMAT_KEY).map(b -> ByteBuffer.wrap(b).getInt()).orElse(LogFormat.FIRST);
    compactRevision = storedCompactRevision(store.get(Space.META, HISTORY_KEY));
    historyCount = store.read(view -> {
      long[] n = {0};
      view.scan(Space.EVENTS, new byte[0], liveFrom(compactRevision), (key, value) -> {
        n[0]++;
        return true;
      });
      return n[0];
    });
    state.load(store);
    auth.load();
    audit.load();
  }

  /** The roles and grants as of the last applied entry, for the API's authorization point. */
  public AccessView access() {
    return auth.view();
  }

  private static long storedCompactRevision(Optional<byte[]> meta) {
    return meta.map(LeaseCore::parseHistory).orElse(HistoryMeta.getDefaultInstance()).getCompactRevision();
  }

  public KvStore store() {
    return store;
  }

  public AppliedPosition applied() {
    return store.applied();
  }

  /**
   * Applies the entry at {@code index}. Entries at or below the store's applied index are
   * skipped: their effects are already in the store (a replay after restart).
   */
  public ApplyResult apply(long term, long index, LogCommand command) throws IOException {
    if (index <= appliedIndex) {
      return ApplyResult.skipped(index);
    }
    long now = Math.max(clockMicros, command.getLeaderTimeMicros());
    if (command.getCommandCase() == LogCommand.CommandCase.BATCH && logFormat >= LogFormat.BATCHES) {
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
    List<Change> changes = tx.changes();
    List<Change> meta = entryMeta(now, tx);
    changes.addAll(meta);
    if (logFormat >= LogFormat.AUTH) {
      Audits.entry(command, reply, tx.caller, now).ifPresent(entry -> audit.record(changes, index, entry));
    }
    store.commit(new AppliedPosition(term, index), changes);
    tx.publish();
    finishEntry(index, now, tx.compactTo);
    historyCount += tx.keptCount - tx.removed;
    return new ApplyResult(index, reply, tx.events, tx.bars);
  }

  /**
   * The fencing token of a lease granted by the command at {@code position} of entry
   * {@code index}: the index itself in log format 1, where an entry carries one command, and
   * {@code index * 256 + position} from format 2 on, so that tokens strictly increase over every
   * grant however many an entry carries.
   */
  long token(long index, int position) {
    return LogFormat.token(logFormat, index, position);
  }

  /**
   * A batch of client commands: each applied in order with its own token and reply, each seeing
   * the changes of those before it; one invalid command changes nothing and the others still
   * apply. One store commit holds them all.
   */
  private ApplyResult applyBatch(long term, long index, long now, CommandBatch batch) throws IOException {
    int n = batch.getCommandsCount();
    List<Change> changes = new ArrayList<>();
    List<LeaseEvent> events = new ArrayList<>();
    List<TimedBar> bars = new ArrayList<>(0);
    ReplyBatch.Builder replies = ReplyBatch.newBuilder();
    Map<String, AcquireResponse> requestsInEntry = new HashMap<>();
    entryRequests = requestsInEntry;
    int sequence = 0;
    try {
      for (int position = 0; position < n; position++) {
        LogCommand command = batch.getCommands(position);
        Tx tx = newTx(index, position, now, sequence, command);
        LogReply reply;
        try {
          if (position >= LogFormat.MAX_BATCH) {
            throw new InvalidArgumentException("batch.commands[" + position + "]",
                "an entry carries at most " + LogFormat.MAX_BATCH + " commands");
          }
          if (!LogFormat.batchable(command)) {
            throw new InvalidArgumentException("batch.commands[" + position + "]",
                "only acquire, renew, release and update may be batched, not " + command.getCommandCase());
          }
          reply = dispatch(tx, command);
        } catch (InvalidArgumentException e) {
          tx = newTx(index, position, now, sequence, command);
          reply = invalid(e);
        } catch (RefusedException e) {
          tx = newTx(index, position, now, sequence, command);
          reply = refused(e);
        }
        changes.addAll(tx.changes());
        // Published at once, so the next command sees this one's changes; the store commit below
        // holds them all. If it fails, Ratis stops the server and the state reloads from the store.
        tx.publish();
        if (tx.appliedRequestId != null) {
          requestsInEntry.put(tx.appliedRequestId, tx.appliedRequestReply);
        }
        sequence += tx.keptCount;
        historyCount += tx.keptCount;
        events.addAll(tx.events);
        bars.addAll(tx.bars);
        replies.addReplies(reply);
      }
    } finally {
      entryRequests = Map.of();
    }
    if (now != clockMicros) {
      changes.add(Change.put(Space.META, CLOCK_KEY, ByteBuffer.allocate(8).putLong(now).array()));
    }
    store.commit(new AppliedPosition(term, index), changes);
    finishEntry(index, now, -1);
    return new ApplyResult(index, LogReply.newBuilder().setBatch(replies).build(), events, bars);
  }

  /** The transaction of one command; the caller counts from log format 3 on, as every replica then applies it. */
  private Tx newTx(long index, int position, long now, int sequence, LogCommand command) {
    Tx tx = new Tx(index, token(index, position), now, state, sequence);
    if (logFormat >= LogFormat.AUTH) {
      tx.caller = command.getCaller();
    }
    return tx;
  }

  private LogReply dispatch(Tx tx, LogCommand command) {
    if (Audits.needsAuthFormat(command) && logFormat < LogFormat.AUTH) {
      throw new InvalidArgumentException("command", command.getCommandCase() + " needs log format " + LogFormat.AUTH
          + "; the cluster applies format " + logFormat + " until every member runs code that knows it");
    }
    ApplyAuthorization.check(auth.view(), tx.caller, command);
    return switch (command.getCommandCase()) {
      case ACQUIRE -> LogReply.newBuilder().setAcquire(acquire(tx, command.getAcquire())).build();
      case RENEW -> LogReply.newBuilder().setRenew(renew(tx, command.getRenew())).build();
      case RELEASE -> LogReply.newBuilder().setRelease(release(tx, command.getRelease())).build();
      case UPDATE -> LogReply.newBuilder().setUpdate(update(tx, command.getUpdate())).build();
      case EXPIRE -> LogReply.newBuilder().setExpire(expire(tx, command.getExpire())).build();
      case COMPACT_HISTORY -> LogReply.newBuilder().setCompactHistory(compactHistory(tx, command.getCompactHistory())).build();
      case SET_POLICY -> LogReply.newBuilder().setSetPolicy(admin.setPolicy(tx, command.getSetPolicy())).build();
      case DELETE_POLICY -> LogReply.newBuilder().setDeletePolicy(admin.deletePolicy(tx, command.getDeletePolicy())).build();
      case BAN -> LogReply.newBuilder().setBan(admin.ban(tx, command.getBan())).build();
      case UNBAN -> LogReply.newBuilder().setUnban(admin.unban(tx, command.getUnban())).build();
      case REVOKE -> LogReply.newBuilder().setRevoke(admin.revoke(tx, command.getRevoke())).build();
      case LIFT_BANS -> LogReply.newBuilder().setLiftBans(admin.liftBans(tx, command.getLiftBans())).build();
      case LIFT_LOCK_DELAYS -> LogReply.newBuilder().setLiftLockDelays(admin.liftLockDelays(tx, command.getLiftLockDelays())).build();
      case SET_LOG_FORMAT -> LogReply.newBuilder().setSetLogFormat(setLogFormat(tx, command.getSetLogFormat())).build();
      case ADD_ROLE -> LogReply.newBuilder().setAddRole(auth.addRole(tx, command.getAddRole())).build();
      case REMOVE_ROLE -> LogReply.newBuilder().setRemoveRole(auth.removeRole(tx, command.getRemoveRole())).build();
      case GRANT_ROLE -> LogReply.newBuilder().setGrantRole(auth.grantRole(tx, command.getGrantRole())).build();
      case REVOKE_ROLE -> LogReply.newBuilder().setRevokeRole(auth.revokeRole(tx, command.getRevokeRole())).build();
      case BOOTSTRAP_ADMIN -> LogReply.newBuilder().setBootstrapAdmin(auth.bootstrapAdmin(tx, command.getBootstrapAdmin())).build();
      case AUDIT_RECORD -> LogReply.newBuilder()
          .setAuditRecord(io.leasehold.proto.v1.AuditRecordResponse.newBuilder().setRevision(tx.index)).build();
      // Format 1 knows no batches: applied as no command, as a node that predates them applies it.
      case BATCH -> throw new InvalidArgumentException("batch", "log format " + logFormat + " carries one command an entry");
      case COMMAND_NOT_SET -> throw new InvalidArgumentException("command", "the log entry carries no command");
    };
  }

  private static LogReply refused(RefusedException e) {
    return LogReply.newBuilder()
        .setRefused(io.leasehold.proto.v1.RefusedCommand.newBuilder()
            .setCode(e.kind().grpcCode()).setField(e.field()).setMessage(e.getMessage()))
        .build();
  }

  private static LogReply invalid(InvalidArgumentException e) {
    return LogReply.newBuilder()
        .setInvalid(InvalidCommand.newBuilder().setField(e.field()).setMessage(e.getMessage()))
        .build();
  }

  /** The clock and history bounds an entry leaves in the meta space. */
  private List<Change> entryMeta(long now, Tx tx) {
    List<Change> changes = new ArrayList<>(2);
    if (now != clockMicros) {
      changes.add(Change.put(Space.META, CLOCK_KEY, ByteBuffer.allocate(8).putLong(now).array()));
    }
    if (tx.compactTo >= 0) {
      changes.add(Change.put(Space.META, HISTORY_KEY, HistoryMeta.newBuilder().setCompactRevision(tx.compactTo).build().toByteArray()));
    }
    return changes;
  }

  private void finishEntry(long index, long now, long compactTo) {
    clockMicros = now;
    appliedIndex = index;
    if (compactTo >= 0) {
      compactRevision = compactTo;
    }
  }

  /**
   * Raises the log format (never lowers it). The leader proposes this only once every member
   * runs code that knows the new format, so every replica applies it alike.
   */
  private SetLogFormatResponse setLogFormat(Tx tx, SetLogFormat c) {
    int asked = c.getFormat();
    boolean raises = asked > logFormat && asked <= LogFormat.NEWEST;
    if (raises) {
      tx.extra.add(Change.put(Space.META, FORMAT_KEY, ByteBuffer.allocate(4).putInt(asked).array()));
      tx.afterCommit(() -> logFormat = asked);
    }
    return SetLogFormatResponse.newBuilder().setFormat(raises ? asked : logFormat).setRevision(tx.index).build();
  }

  /** The log format in force as of the last applied entry ({@link LogFormat}). */
  public int logFormat() {
    return logFormat;
  }

  /**
   * An Acquire with a request id applied before is answered as it was then and changes nothing
   * (see {@link AppliedRequests}); any other is decided and, if it has an id, remembered.
   */
  private AcquireResponse acquire(Tx tx, AcquireRequest r) {
    Validation.acquire(r);
    if (!tx.caller.isEmpty() && !tx.caller.equals(r.getHolder())) {
      throw new RefusedException(RefusedException.Kind.PERMISSION_DENIED, "holder",
          "the holder must be the caller's identity " + tx.caller + ", not " + r.getHolder());
    }
    String id = r.getRequestId();
    if (id.isEmpty()) {
      return decideAcquire(tx, r);
    }
    if (state.requests.contains(id)) {
      AcquireResponse sameEntry = entryRequests.get(id);
      if (sameEntry != null) {
        return sameEntry;  // an earlier command of this batch, not in the store until the entry commits
      }
      byte[] stored = store.get(Space.REQUESTS, utf8(id))
          .orElseThrow(() -> new StoreException("applied request " + id + " is in memory but not in the store", null));
      return AppliedRequests.decode(stored).getAcquire();
    }
    AcquireResponse reply = decideAcquire(tx, r);
    tx.requestApplied(id, reply);
    return reply;
  }

  /**
   * Grants a free name, renews it for its holder asking again, or says why not. Policy comes first
   * (the holder's ban, the name pattern, the TTL bounds), then a conflict with another holder, then
   * what only a new grant must pass (the lock-delay, the quotas).
   */
  private AcquireResponse decideAcquire(Tx tx, AcquireRequest r) {
    String name = r.getName();
    PolicyTerms policy = state.policies.forName(name);
    AcquireResponse.Builder reply = AcquireResponse.newBuilder().setRevision(tx.index);
    Optional<Rejection> refused = PolicyGate.banned(state.bans, r.getHolder(), tx.now);
    if (refused.isEmpty()) {
      refused = PolicyGate.pattern(policy, name);
    }
    Optional<LeaseRecord> current = tx.get(name);
    boolean holderAsksAgain = current.isPresent() && current.get().getHolder().equals(r.getHolder());
    // No TTL in the request: a new lease gets the default; the holder asking again keeps its own,
    // so a bare retry never shortens a lease.
    long ttl = r.hasTtl() ? Times.micros(r.getTtl())
        : holderAsksAgain ? current.get().getTtlMicros() : policy.defaultTtlMicros();
    if (refused.isEmpty()) {
      refused = PolicyGate.ttl(policy, ttl);
    }
    if (refused.isEmpty() && current.isPresent() && !holderAsksAgain) {
      LeaseRecord held = current.get();
      long remaining = Math.max(0, LeaseViews.expiresAtMicros(held) - tx.now);
      return reply.setOutcome(Outcome.CONFLICT)
          .setConflict(Conflict.newBuilder()
              .setHolder(held.getHolder())
              .setToken(held.getToken())
              .setRemaining(Times.duration(remaining)))
          .build();
    }
    if (refused.isEmpty()) {
      refused = holderAsksAgain
          ? PolicyGate.quotaForHeld(state.index, policy, name, current.get())
          : PolicyGate.lockDelay(state.lockDelays, name, tx.now).or(() -> PolicyGate.quotaForNew(state.index, policy, name, r.getHolder()));
    }
    if (refused.isPresent()) {
      tx.rejected(refused.get().getReason());
      return reply.setOutcome(Outcome.REJECTED).setRejection(refused.get()).build();
    }
    LeaseRecord lease;
    if (holderAsksAgain) {
      // The holder asks again (a retry, or a restart that kept its identity): same lease, renewed.
      LeaseRecord held = current.get();
      LeaseRecord.Builder b = renewed(tx, held, policy).setTtlMicros(ttl);
      boolean attributesChanged = r.hasAttributes() && !r.getAttributes().equals(held.getAttributes());
      if (attributesChanged) {
        b.setAttributes(r.getAttributes());
      }
      lease = b.build();
      tx.put(name, lease, LeaseEvent.Type.RENEWED);
      if (attributesChanged) {
        tx.event(LeaseEvent.Type.UPDATED, name, lease);
      }
    } else {
      LeaseRecord.Builder b = LeaseRecord.newBuilder()
          .setHolder(state.index.holder(r.getHolder()))  // shared with the holder's other leases
          .setToken(tx.token)
          .setTtlMicros(ttl)
          .setAcquiredAtMicros(tx.now)
          .setRenewedAtMicros(tx.now)
          .setLastRenewRevision(tx.index)
          .setModRevision(tx.index)
          .setHeartbeatMicros(policy.heartbeatMicros().orElse(0))
          .setGraceMicros(policy.graceMicros());
      if (r.hasAttributes()) {
        b.setAttributes(r.getAttributes());
      }
      lease = b.build();
      tx.put(name, lease, LeaseEvent.Type.ACQUIRED);
      tx.clearLockDelay(name);
    }
    return reply.setOutcome(Outcome.GRANTED)
        .setLease(LeaseViews.toLease(name, lease, OptionalLong.empty()))
        .setHeartbeatInterval(Times.duration(LeaseViews.heartbeatMicros(lease)))
        .build();
  }

  /**
   * Renews each item still held with its token, if policy allows: a renewal is checked like an
   * Acquire (ban, pattern, the lease's TTL against the bounds now in force, quotas), and takes on
   * the heartbeat and grace of the policy now in force.
   */
  private RenewResponse renew(Tx tx, RenewRequest r) {
    Validation.renew(r);
    for (int i = 0; i < r.getItemsCount(); i++) {
      if (r.getItems(i).getToken() >= tx.token) {
        neverIssued(tx, "items[" + i + "].token", r.getItems(i).getToken());
      }
    }
    for (int i = 0; i < r.getItemsCount(); i++) {
      ownLease(tx, "items[" + i + "]", r.getItems(i).getName(), r.getItems(i).getToken());
    }
    RenewResponse.Builder reply = RenewResponse.newBuilder().setRevision(tx.index);
    long shortestHeartbeat = Long.MAX_VALUE;
    // Leases renewed together mostly share a TTL and heartbeat: build their Durations once.
    long ttlMicros = -1;
    com.google.protobuf.Duration ttl = null;
    long heartbeatMicros = -1;
    com.google.protobuf.Duration heartbeat = null;
    for (RenewItem item : r.getItemsList()) {
      RenewResult.Builder result = RenewResult.newBuilder().setName(item.getName()).setToken(item.getToken());
      Optional<LeaseRecord> current = tx.get(item.getName());
      if (current.isPresent() && current.get().getToken() == item.getToken()) {
        PolicyTerms policy = state.policies.forName(item.getName());
        Optional<Rejection> refused = PolicyGate.renewal(state, policy, item.getName(), current.get(), tx.now);
        if (refused.isPresent()) {
          tx.rejected(refused.get().getReason());
          reply.addResults(result.setOutcome(Outcome.REJECTED).setRejection(refused.get()));
          continue;
        }
        LeaseRecord lease = renewed(tx, current.get(), policy).build();
        tx.put(item.getName(), lease, LeaseEvent.Type.RENEWED);
        if (lease.getTtlMicros() != ttlMicros) {
          ttlMicros = lease.getTtlMicros();
          ttl = Times.duration(ttlMicros);
        }
        long hb = LeaseViews.heartbeatMicros(lease);
        if (hb != heartbeatMicros) {
          heartbeatMicros = hb;
          heartbeat = Times.duration(hb);
        }
        result.setOutcome(Outcome.RENEWED).setTtl(ttl).setHeartbeatInterval(heartbeat);
        shortestHeartbeat = Math.min(shortestHeartbeat, hb);
      } else {
        result.setOutcome(Outcome.NOT_HELD);
        if (current.isEmpty() && state.counters.expiredRecently(item.getName(), item.getToken())) {
          tx.lateHeartbeat();
        }
      }
      reply.addResults(result);
    }
    if (shortestHeartbeat != Long.MAX_VALUE) {
      reply.setHeartbeatInterval(Times.duration(shortestHeartbeat));
    }
    return reply.build();
  }

  private ReleaseResponse release(Tx tx, ReleaseRequest r) {
    Validation.release(r);
    neverIssued(tx, "token", r.getToken());
    ownLease(tx, "name", r.getName(), r.getToken());
    ReleaseResponse.Builder reply = ReleaseResponse.newBuilder().setRevision(tx.index);
    Optional<LeaseRecord> current = tx.get(r.getName());
    if (current.isEmpty() || current.get().getToken() != r.getToken()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    tx.end(r.getName(), current.get(), LeaseEvent.Type.RELEASED, "");
    return reply.setOutcome(Outcome.RELEASED).build();
  }

  private UpdateResponse update(Tx tx, UpdateRequest r) {
    Validation.update(r);
    neverIssued(tx, "token", r.getToken());
    ownLease(tx, "name", r.getName(), r.getToken());
    UpdateResponse.Builder reply = UpdateResponse.newBuilder().setRevision(tx.index);
    Optional<LeaseRecord> current = tx.get(r.getName());
    if (current.isEmpty() || current.get().getToken() != r.getToken()) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    Attributes attributes = merge(current.get().getAttributes(), r);
    LeaseRecord lease = current.get().toBuilder().setAttributes(attributes).setModRevision(tx.index).build();
    tx.put(r.getName(), lease, LeaseEvent.Type.UPDATED);
    return reply.setOutcome(Outcome.UPDATED).setLease(LeaseViews.toLease(r.getName(), lease, OptionalLong.empty())).build();
  }

  /**
   * Ends leases the leader's ticker found past their deadline, but only those still at the
   * token and renewal the ticker saw: a renewal that raced the proposal wins, and a deposed
   * leader's late proposal changes nothing.
   */
  private ExpireResponse expire(Tx tx, ExpireCommand c) {
    int expired = 0;
    int skipped = 0;
    for (ExpireItem item : c.getItemsList()) {
      Optional<LeaseRecord> current = item.getName().isEmpty() ? Optional.empty() : tx.get(item.getName());
      if (current.isPresent()
          && current.get().getToken() == item.getToken()
          && current.get().getLastRenewRevision() <= item.getLastRenewRevision()) {
        tx.end(item.getName(), current.get(), LeaseEvent.Type.EXPIRED, "");
        expired++;
      } else {
        skipped++;
      }
    }
    return ExpireResponse.newBuilder().setExpired(expired).setSkipped(skipped).setRevision(tx.index).build();
  }

  /** The attributes after an update: all replaced, or only the fields its mask names. */
  private static Attributes merge(Attributes current, UpdateRequest r) {
    if (r.getUpdateMask().getPathsCount() == 0) {
      return r.getAttributes();
    }
    Attributes.Builder merged = current.toBuilder();
    for (String path : r.getUpdateMask().getPathsList()) {
      switch (path) {
        case "address" -> merged.setAddress(r.getAttributes().getAddress());
        case "status" -> merged.setStatus(r.getAttributes().getStatus());
        case "metadata" -> merged.clearMetadata().putAllMetadata(r.getAttributes().getMetadataMap());
        default -> throw new InvalidArgumentException("update_mask", "unknown path " + path);
      }
    }
    return merged.build();
  }

  /**
   * Drops the history below a revision the leader chose from its bounds (count, age). Every
   * replica drops the same events, so every node serves the same history and snapshots agree.
   */
  private CompactHistoryResponse compactHistory(Tx tx, CompactHistory c) {
    long from = compactRevision;
    long below = Math.min(c.getBelowRevision(), tx.index);
    CompactHistoryResponse.Builder reply = CompactHistoryResponse.newBuilder().setRevision(tx.index);
    if (below <= from) {
      return reply.setCompactRevision(from).build();
    }
    byte[] end = Events.key(below, 0);
    List<byte[]> doomed = new ArrayList<>();
    store.read(view -> {
      view.scan(Space.EVENTS, new byte[0], liveFrom(from), (key, value) -> {
        if (java.util.Arrays.compareUnsigned(key, end) >= 0) {
          return false;
        }
        doomed.add(key);
        return true;
      });
      return null;
    });
    doomed.forEach(key -> tx.extra.add(Change.delete(Space.EVENTS, key)));
    tx.compactTo = below;
    tx.removed = doomed.size();
    return reply.setCompactRevision(below).setRemoved(doomed.size()).build();
  }

  private static LeaseRecord.Builder renewed(Tx tx, LeaseRecord lease, PolicyTerms policy) {
    return lease.toBuilder()
        .setRenewedAtMicros(tx.now)
        .setLastRenewRevision(tx.index)
        .setRenewCount(lease.getRenewCount() + 1)
        .setModRevision(tx.index)
        .setHeartbeatMicros(policy.heartbeatMicros().orElse(0))
        .setGraceMicros(policy.graceMicros());
  }

  /**
   * With a caller (authentication on), a lease command changes only the caller's own leases: the
   * token alone, which anyone who reads or watches the name sees, does not suffice.
   */
  private static void ownLease(Tx tx, String field, String name, long token) {
    if (tx.caller.isEmpty()) {
      return;
    }
    Optional<LeaseRecord> current = tx.get(name);
    if (current.isPresent() && current.get().getToken() == token && !current.get().getHolder().equals(tx.caller)) {
      throw new RefusedException(RefusedException.Kind.PERMISSION_DENIED, field,
          "lease " + name + " is held by " + current.get().getHolder() + ", not by the caller " + tx.caller);
    }
  }

  /** A token at or above the one this command would grant cannot have been granted yet: bad input, not a stale lease. */
  private static void neverIssued(Tx tx, String field, long token) {
    if (token >= tx.token) {
      throw new InvalidArgumentException(field, "token " + token + " was never issued (the next token is " + tx.token + ")");
    }
  }

  // ---- reads ----

  /** Answers a read from one consistent view; {@code nowMicros} only fills {@code remaining}. */
  public ReadReply query(ReadQuery query, long nowMicros) {
    return switch (query.getQueryCase()) {
      case GET -> ReadReply.newBuilder().setGet(get(query.getGet(), nowMicros)).build();
      case LIST -> ReadReply.newBuilder().setList(list(query.getList(), nowMicros)).build();
      case GET_POLICY -> ReadReply.newBuilder().setGetPolicy(adminReads.getPolicy(query.getGetPolicy())).build();
      case LIST_POLICIES -> ReadReply.newBuilder().setListPolicies(adminReads.listPolicies(query.getListPolicies())).build();
      case LIST_BANS -> ReadReply.newBuilder().setListBans(adminReads.listBans(query.getListBans())).build();
      case HISTORY -> ReadReply.newBuilder().setHistory(adminReads.history(query.getHistory())).build();
      case LIST_ROLES -> ReadReply.newBuilder().setListRoles(auth.listRoles(query.getListRoles())).build();
      case LIST_GRANTS -> ReadReply.newBuilder().setListGrants(auth.listGrants(query.getListGrants())).build();
      case AUDIT -> ReadReply.newBuilder().setAudit(audit.read(query.getAudit())).build();
      case LOG_FORMAT -> ReadReply.newBuilder()
          .setLogFormat(io.leasehold.proto.v1.LogFormatReply.newBuilder().setNewest(LogFormat.NEWEST).setCurrent(logFormat)).build();
      case CONFIRM_LEADERSHIP -> throw new InvalidArgumentException("query", "confirm_leadership is answered by the server, not the store");
      case QUERY_NOT_SET -> throw new InvalidArgumentException("query", "carries no request");
    };
  }

  public GetResponse get(GetRequest r, long nowMicros) {
    Validation.get(r);
    return store.read(view -> {
      GetResponse.Builder b = GetResponse.newBuilder().setRevision(view.applied().index());
      view.get(Space.LEASES, utf8(r.getName())).ifPresent(bytes -> b.setFound(true)
          .setLease(LeaseViews.toLease(r.getName(), parse(bytes), OptionalLong.of(nowMicros))));
      return b.build();
    });
  }

  public ListResponse list(ListRequest r, long nowMicros) {
    Validation.list(r);
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    return store.read(view -> {
      ListResponse.Builder b = ListResponse.newBuilder().setRevision(view.applied().index());
      view.scan(Space.LEASES, utf8(r.getPrefix()), utf8(r.getStartAfter()), (key, value) -> {
        LeaseRecord lease = parse(value);
        if (r.getWithAddress() && lease.getAttributes().getAddress().isEmpty()) {
          return true;
        }
        if (b.getLeasesCount() == limit) {
          b.setMore(true);
          return false;
        }
        b.addLeases(LeaseViews.toLease(new String(key, StandardCharsets.UTF_8), lease, OptionalLong.of(nowMicros)));
        return true;
      });
      return b.build();
    });
  }

  /** What a history read found: the events are gone below {@code compactRevision}; the view was at {@code revision}. */
  public record HistoryRead(boolean compacted, long compactRevision, long revision) {}

  /**
   * Visits, in one consistent view, every event in the history from {@code fromRevision} on,
   * unless the history no longer reaches back that far ({@link HistoryRead#compacted}).
   */
  public HistoryRead readHistory(long fromRevision, java.util.function.Consumer<Event> visitor) {
    return store.read(view -> {
      long compacted = storedCompactRevision(view.get(Space.META, HISTORY_KEY));
      long revision = view.applied().index();
      if (fromRevision < compacted) {
        return new HistoryRead(true, compacted, revision);
      }
      // Seek straight to the start: the keys of revision fromRevision - 1 all sort below
      // (fromRevision - 1, 0xFFFFFFFF), and sequences never reach that value.
      byte[] after = fromRevision <= 0 ? new byte[0] : Events.key(fromRevision - 1, -1);
      view.scan(Space.EVENTS, new byte[0], after, (key, value) -> {
        visitor.accept(Events.toApi(Events.decode(Events.revisionOf(key), value)));
        return true;
      });
      return new HistoryRead(false, compacted, revision);
    });
  }

  /**
   * The revision below which the history may be dropped to keep at most {@code maxCount} events,
   * none older than {@code notBeforeMicros} (leader-stamped time). The leader proposes it as a
   * CompactHistory; work is proportional to the events that go.
   */
  public long compactionPoint(long maxCount, long notBeforeMicros) {
    return store.read(view -> {
      long excess = historyCount - maxCount;
      long[] point = {storedCompactRevision(view.get(Space.META, HISTORY_KEY))};
      long[] seen = {0};
      view.scan(Space.EVENTS, new byte[0], liveFrom(point[0]), (key, value) -> {
        long revision = Events.revisionOf(key);
        boolean tooMany = seen[0] < excess;
        boolean tooOld = Events.decode(revision, value).timeMicros() < notBeforeMicros;
        if (!tooMany && !tooOld) {
          // Compaction works by revision: this event's whole revision stays.
          point[0] = revision;
          return false;
        }
        seen[0]++;
        point[0] = revision + 1;
        return true;
      });
      // Nothing to drop: the history's start stays. Moving it to the first event would refuse a
      // watch from an earlier revision that had no events (the log format's entry, say) and lost none.
      return seen[0] == 0 ? storedCompactRevision(view.get(Space.META, HISTORY_KEY)) : point[0];
    });
  }

  /** The history's bounds as of the latest applied entry, for the leader's compactor. */
  public HistoryMeta history() {
    return HistoryMeta.newBuilder().setCompactRevision(compactRevision).setCount(historyCount).build();
  }

  /** The live leases as of the latest applied entry; safe to call from any thread. */
  public int liveLeases() {
    return state.liveLeases;
  }

  /** What this replica's apply loop has counted since it started (not replicated). */
  public Counters counters() {
    return state.counters;
  }

  /**
   * Visits every lock-delay and timed ban in one consistent view, for a new leader that must lift
   * them; returns the revision the view reflects. A lock-delay comes with its full delay (the
   * leader gives it all of it again, as it gives every lease a full TTL); a timed ban with what
   * remains of it by the latest stamped time, at least 0 (so the leader lifts it no earlier than
   * the recorded end, as far as stamped time can tell).
   */
  public long forEachTimedBar(java.util.function.Consumer<TimedBar> visitor) {
    return store.read(view -> {
      long stamped = view.get(Space.META, CLOCK_KEY).map(b -> ByteBuffer.wrap(b).getLong()).orElse(0L);
      view.scan(Space.LOCK_DELAYS, new byte[0], new byte[0], (key, value) -> {
        io.leasehold.proto.v1.StoredLockDelay bar = LockDelays.decode(value);
        long hold = Math.max(bar.getDelayMicros(), bar.getUntilMicros() - stamped);
        visitor.accept(TimedBar.set(TimedBar.Kind.LOCK_DELAY, new String(key, StandardCharsets.UTF_8), bar.getRevision(), hold));
        return true;
      });
      view.scan(Space.BANS, new byte[0], new byte[0], (key, value) -> {
        io.leasehold.proto.v1.BanRecord ban = Bans.parse(value);
        if (ban.getUntilMicros() != 0) {
          visitor.accept(TimedBar.set(TimedBar.Kind.BAN, new String(key, StandardCharsets.UTF_8), ban.getRevision(),
              ban.getUntilMicros() - stamped));
        }
        return true;
      });
      return view.applied().index();
    });
  }

  /** Visits every lease in one consistent view; returns the revision the view reflects. */
  public long forEachLease(BiConsumer<String, LeaseRecord> visitor) {
    return store.read(view -> {
      view.scan(Space.LEASES, new byte[0], new byte[0], (key, value) -> {
        visitor.accept(new String(key, StandardCharsets.UTF_8), parse(value));
        return true;
      });
      return view.applied().index();
    });
  }

  /**
   * Where the live history starts, as a scan's exclusive lower bound: every key below the compact
   * revision is deleted, and a scan from the first key would step over all of those tombstones
   * (a second per compaction once a few hundred thousand events had gone).
   */
  private static byte[] liveFrom(long compactRevision) {
    return compactRevision <= 0 ? new byte[0] : Events.key(compactRevision - 1, -1);
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
