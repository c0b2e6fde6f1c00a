package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.HistoryRecord;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.proto.v1.StoredOffer;
import io.leasehold.proto.v1.StoredRequest;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.Space;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The writes and events of one entry, with read-your-writes for commands that touch a name twice.
 * Nothing reaches the store or the in-memory state until the core commits it ({@link #write}) and
 * then publishes it ({@link #publish}); a command found invalid halfway is dropped whole.
 */
final class Tx {
  /** The log index of the entry: the revision of every event and change it makes. */
  final long index;

  /** The fencing token a lease granted by this command gets ({@link LeaseCore#token}). */
  final long token;

  final long now;

  /**
   * The authenticated identity that asked for the command (format 3 on); empty: none, or the node
   * itself.
   */
  final String caller;

  /** Log format 4 on: the store's holder index follows every change of a lease's holder. */
  final boolean indexHolders;

  /** Log format 5 on: each service's version follows every change to its instances. */
  private final boolean versionServices;

  private final CoreState state;
  final Map<String, Optional<LeaseRecord>> writes = new LinkedHashMap<>();
  private final Map<Long, Optional<StoredSession>> sessionWrites = new LinkedHashMap<>(0);

  /** Sessions created, kept alive or ended by this entry, for the leader that expires them. */
  final List<SessionChange> sessionChanges = new ArrayList<>(0);

  final List<LeaseEvent> events = new ArrayList<>();

  /**
   * Changes outside the lease, lock-delay and history spaces (event compaction, policies, bans).
   */
  final List<Change> extra = new ArrayList<>();

  private final Map<String, Optional<StoredLockDelay>> lockDelays = new LinkedHashMap<>();
  private final Map<String, Optional<StoredOffer>> offers = new LinkedHashMap<>(0);

  /** Lock-delays and timed bans set or removed by this entry, for the leader that lifts them. */
  final List<TimedBar> bars = new ArrayList<>(0);

  private final Map<String, LeaseHistory.Pending> nameHistory = new LinkedHashMap<>();
  private final Map<String, LeaseHistory.Pending> holderHistory = new LinkedHashMap<>();
  private final List<Runnable> afterCommit = new ArrayList<>();
  private final int[] counts = new int[LeaseEvent.Type.values().length];
  private Map<RejectReason, Integer> rejections = Map.of();
  private int lateHeartbeats;
  private Optional<Compaction> compaction = Optional.empty();

  /**
   * Where this command's kept events start in the entry's history sequence (after earlier commands
   * of a batch).
   */
  private final int firstSequence;

  private Optional<AppliedRequest> appliedRequest = Optional.empty();

  /** The history below {@code below} dropped by this command: {@code removed} events. */
  record Compaction(long below, long removed) {}

  /** The Acquire request id this command applied, with its reply. */
  record AppliedRequest(String id, AcquireResponse reply) {}

  /**
   * What the command writes to the store, and what the core keeps count of: the history events it
   * kept, the compaction it made, the Acquire request it applied.
   */
  record Written(
      List<Change> changes,
      int kept,
      Optional<Compaction> compaction,
      Optional<AppliedRequest> request) {}

  Tx(
      long index,
      long token,
      long now,
      String caller,
      boolean indexHolders,
      boolean versionServices,
      CoreState state,
      int firstSequence) {
    this.index = index;
    this.token = token;
    this.now = now;
    this.caller = caller;
    this.indexHolders = indexHolders;
    this.versionServices = versionServices;
    this.state = state;
    this.firstSequence = firstSequence;
  }

  Optional<LeaseRecord> get(String name) {
    Optional<LeaseRecord> written = writes.get(name);
    if (written != null) {
      return written;
    }
    return Optional.ofNullable(state.leases.get(name));
  }

  /** The session as this entry left it so far. */
  Optional<StoredSession> session(long id) {
    Optional<StoredSession> written = sessionWrites.get(id);
    return written != null ? written : Optional.ofNullable(state.sessions.get(id));
  }

  /** Creates or renews a session. */
  void putSession(long id, StoredSession session) {
    sessionWrites.put(id, Optional.of(session));
    sessionChanges.add(new SessionChange(id, Optional.of(session)));
  }

  /**
   * Ends a session and every lease attached to it, in this entry: each lease ends with {@code type}
   * (SESSION_EXPIRED or SESSION_CLOSED); returns how many.
   */
  int endSession(long id, LeaseEvent.Type type) {
    sessionWrites.put(id, Optional.empty());
    sessionChanges.add(new SessionChange(id, Optional.empty()));
    int ended = 0;
    for (String name : state.sessions.leasesOf(id)) {
      Optional<LeaseRecord> lease = get(name);
      // A moving lease ends where its move takes it, which finds its session gone
      // (NamespaceMoves).
      if (lease.isPresent() && lease.get().getSession() == id && !state.frozen(name)) {
        end(name, lease.get(), type, "session " + id);
        ended++;
      }
    }
    return ended;
  }

  void put(String name, LeaseRecord lease, LeaseEvent.Type type) {
    writes.put(name, Optional.of(lease));
    event(type, name, lease);
  }

  /**
   * Ends a lease: the name is free (after the namespace's lock-delay, unless it was released), and
   * the lease joins the history of its name and of its holder.
   */
  void end(String name, LeaseRecord ended, LeaseEvent.Type type, String message) {
    writes.put(name, Optional.empty());
    removeOffer(name); // an offer stands only on the lease it was made on
    if (ended.getSession() != 0
        && type != LeaseEvent.Type.SESSION_EXPIRED
        && type != LeaseEvent.Type.SESSION_CLOSED) {
      // Counted for the session's client, which learns of it from its next keep-alive. Not a
      // keep-alive itself: the leader's deadline for the session stays as it is.
      session(ended.getSession())
          .ifPresent(
              s ->
                  sessionWrites.put(
                      ended.getSession(),
                      Optional.of(s.toBuilder().setLeasesEnded(s.getLeasesEnded() + 1).build())));
    }
    event(type, name, ended, message);
    PolicyTerms p = state.policies.forName(name);
    if (type.setsLockDelay() && p.lockDelayMicros() > 0) {
      // The end is an estimate for replies; the bar holds until the leader lifts it.
      lockDelays.put(
          name,
          Optional.of(
              StoredLockDelay.newBuilder()
                  .setUntilMicros(now + p.lockDelayMicros())
                  .setRevision(index)
                  .setDelayMicros(p.lockDelayMicros())
                  .build()));
      bars.add(TimedBar.set(TimedBar.Kind.LOCK_DELAY, name, index, p.lockDelayMicros()));
    }
    byte[] record =
        HistoryRecord.newBuilder()
            .setName(name)
            .setHolder(ended.getHolder())
            .setToken(ended.getToken())
            .setTtlMicros(ended.getTtlMicros())
            .setAcquiredAtMicros(ended.getAcquiredAtMicros())
            .setEndedAtMicros(now)
            .setRenewCount(ended.getRenewCount())
            .setReason(Events.reason(type))
            .setMessage(message)
            .setRevision(index)
            .setSession(ended.getSession())
            .build()
            .toByteArray();
    nameHistory
        .computeIfAbsent(
            name, n -> new LeaseHistory.Pending(state.history.bounds(Space.NAME_HISTORY, n)))
        .add(record, p.historyLimit());
    holderHistory
        .computeIfAbsent(
            ended.getHolder(),
            h -> new LeaseHistory.Pending(state.history.bounds(Space.HOLDER_HISTORY, h)))
        .add(record, state.policies.defaults().historyLimit());
  }

  /** The transfer offered on {@code name}, as this entry left it so far. */
  Optional<StoredOffer> offer(String name) {
    Optional<StoredOffer> written = offers.get(name);
    return written != null ? written : state.offers.get(name);
  }

  /**
   * Offers a transfer of {@code name}, replacing any earlier offer; the leader withdraws it when
   * {@code within} has passed.
   */
  void putOffer(String name, StoredOffer offer) {
    offers.put(name, Optional.of(offer));
    bars.add(TimedBar.set(TimedBar.Kind.OFFER, name, offer.getRevision(), offer.getWithinMicros()));
  }

  /** The offer on {@code name}, if any, is gone (accepted, withdrawn, or its lease ended). */
  void removeOffer(String name) {
    if (offer(name).isPresent()) {
      offers.put(name, Optional.empty());
      bars.add(TimedBar.removed(TimedBar.Kind.OFFER, name));
    }
  }

  /** The lock-delay on {@code name} as this entry left it so far. */
  Optional<StoredLockDelay> lockDelay(String name) {
    Optional<StoredLockDelay> written = lockDelays.get(name);
    return written != null ? written : state.lockDelays.get(name);
  }

  /**
   * The lock-delay on {@code name} goes: the name was granted again (only possible once the bar was
   * lifted; kept for stores that hold a bar nothing lifts), or the leader lifted it.
   */
  void clearLockDelay(String name) {
    if (lockDelay(name).isPresent()) {
      lockDelays.put(name, Optional.empty());
      bars.add(TimedBar.removed(TimedBar.Kind.LOCK_DELAY, name));
    }
  }

  /** A name's ended leases a moved namespace brings, oldest first, after any this group keeps. */
  void adoptHistory(String name, List<HistoryRecord> records) {
    LeaseHistory.Pending p =
        nameHistory.computeIfAbsent(
            name, n -> new LeaseHistory.Pending(state.history.bounds(Space.NAME_HISTORY, n)));
    int limit = state.policies.forName(name).historyLimit();
    records.forEach(r -> p.add(r.toByteArray(), limit));
  }

  /** A name's ended leases go with its namespace, which moved to another group. */
  void forgetHistory(String name) {
    long[] b = state.history.bounds(Space.NAME_HISTORY, name);
    for (long seq = b[0]; seq < b[1]; seq++) {
      extra.add(Change.delete(Space.NAME_HISTORY, LeaseHistory.key(name, seq)));
    }
    afterCommit(() -> state.history.forget(Space.NAME_HISTORY, name));
  }

  /** A lock-delay a moved namespace brings: it holds here until this group's leader lifts it. */
  void putLockDelay(String name, StoredLockDelay bar) {
    lockDelays.put(name, Optional.of(bar));
    bars.add(TimedBar.set(TimedBar.Kind.LOCK_DELAY, name, bar.getRevision(), bar.getDelayMicros()));
  }

  void event(LeaseEvent.Type type, String name, LeaseRecord lease) {
    events.add(new LeaseEvent(type, index, name, lease, now));
    counts[type.ordinal()]++;
  }

  /** Writes a lease whose attributes changed, with its {@link #updated} event. */
  void update(String name, LeaseRecord lease, Attributes previous) {
    writes.put(name, Optional.of(lease));
    updated(name, lease, previous);
  }

  /**
   * An update of a lease's attributes ({@code lease} after it, already written): the event keeps
   * the attributes before it, so a filtered watcher can tell that the lease left its filter.
   */
  void updated(String name, LeaseRecord lease, Attributes previous) {
    events.add(new LeaseEvent(LeaseEvent.Type.UPDATED, index, name, lease, now, "", previous));
    counts[LeaseEvent.Type.UPDATED.ordinal()]++;
  }

  void event(LeaseEvent.Type type, String name, LeaseRecord lease, String message) {
    events.add(new LeaseEvent(type, index, name, lease, now, message));
    counts[type.ordinal()]++;
  }

  /** This command dropped the history below {@code below}, {@code removed} events. */
  void compacted(long below, long removed) {
    compaction = Optional.of(new Compaction(below, removed));
  }

  void rejected(RejectReason reason) {
    if (rejections.isEmpty()) {
      rejections = new EnumMap<>(RejectReason.class);
    }
    rejections.merge(reason, 1, Integer::sum);
  }

  void lateHeartbeat() {
    lateHeartbeats++;
  }

  /**
   * Remembers that the Acquire with {@code id} was applied by this entry and answered {@code
   * reply}, and forgets the oldest ids that are due.
   */
  void requestApplied(String id, AcquireResponse reply) {
    appliedRequest = Optional.of(new AppliedRequest(id, reply));
    remember(id, StoredRequest.newBuilder().setAcquire(reply));
  }

  /** As for an Acquire: remembers the AcquireMany with {@code id} and its reply. */
  void requestApplied(String id, AcquireManyResponse reply) {
    remember(id, StoredRequest.newBuilder().setAcquireMany(reply));
  }

  private void remember(String id, StoredRequest.Builder reply) {
    extra.add(
        Change.put(
            Space.REQUESTS,
            LeaseCore.utf8(id),
            reply.setRevision(index).setAppliedAtMicros(now).build().toByteArray()));
    List<String> forgotten = state.requests.due(now);
    forgotten.forEach(old -> extra.add(Change.delete(Space.REQUESTS, LeaseCore.utf8(old))));
    afterCommit(
        () -> {
          forgotten.forEach(state.requests::remove);
          state.requests.add(id, index, now);
        });
  }

  /** Runs once the entry is committed, to bring in-memory state (policies, bans) in step. */
  void afterCommit(Runnable r) {
    afterCommit.add(r);
  }

  /**
   * The entry's writes: the leases, then the history (its kept events, in order), lock-delays,
   * ended-lease history and the rest. A lease record is serialised once, for its lease write and
   * its event alike.
   */
  Written write() {
    List<Change> changes = new ArrayList<>(writes.size() + events.size() + extra.size() + 2);
    // Renewals are not kept: a batch of them needs no lookup table.
    boolean anyKept = events.stream().anyMatch(Events::kept);
    Map<LeaseRecord, byte[]> serialised = anyKept ? new IdentityHashMap<>() : Map.of();
    writes.forEach(
        (name, lease) -> {
          if (indexHolders) {
            holderIndex(name, state.leases.get(name), lease.orElse(null), changes);
          }
          if (lease.isPresent()) {
            byte[] bytes = lease.get().toByteArray();
            if (anyKept) {
              serialised.put(lease.get(), bytes);
            }
            changes.add(Change.put(Space.LEASES, LeaseCore.utf8(name), bytes));
          } else {
            changes.add(Change.delete(Space.LEASES, LeaseCore.utf8(name)));
          }
        });
    if (versionServices) {
      ServiceVersions.put(ServiceVersions.changedBy(events), index, changes);
    }
    int kept = 0;
    for (LeaseEvent e : events) {
      if (Events.kept(e)) {
        byte[] lease = serialised.computeIfAbsent(e.lease(), LeaseRecord::toByteArray);
        changes.add(
            Change.put(
                Space.EVENTS, Events.key(index, firstSequence + kept++), Events.encode(e, lease)));
      }
    }
    offers.forEach(
        (name, offer) ->
            changes.add(
                offer.isPresent()
                    ? Change.put(Space.OFFERS, LeaseCore.utf8(name), offer.get().toByteArray())
                    : Change.delete(Space.OFFERS, LeaseCore.utf8(name))));
    lockDelays.forEach(
        (name, bar) ->
            changes.add(
                bar.isPresent()
                    ? Change.put(
                        Space.LOCK_DELAYS, LeaseCore.utf8(name), LockDelays.encode(bar.get()))
                    : Change.delete(Space.LOCK_DELAYS, LeaseCore.utf8(name))));
    nameHistory.forEach((name, p) -> p.changes(Space.NAME_HISTORY, name, changes));
    holderHistory.forEach((holder, p) -> p.changes(Space.HOLDER_HISTORY, holder, changes));
    sessionWrites.forEach(
        (id, session) ->
            changes.add(
                session.isPresent()
                    ? Change.put(Space.SESSIONS, Sessions.key(id), session.get().toByteArray())
                    : Change.delete(Space.SESSIONS, Sessions.key(id))));
    changes.addAll(extra);
    return new Written(changes, kept, compaction, appliedRequest);
  }

  /** The holder index's change for one lease write: the entry moves when the holder changes. */
  private static void holderIndex(
      String name, LeaseRecord old, LeaseRecord now, List<Change> changes) {
    boolean sameHolder = old != null && now != null && old.getHolder().equals(now.getHolder());
    if (sameHolder) {
      return;
    }
    if (old != null) {
      changes.add(Change.delete(Space.HOLDER_LEASES, HolderKeys.key(old.getHolder(), name)));
    }
    if (now != null) {
      changes.add(
          Change.put(Space.HOLDER_LEASES, HolderKeys.key(now.getHolder(), name), HolderKeys.EMPTY));
    }
  }

  /** After the commit: the in-memory state catches up with the store, and the counters count. */
  void publish() {
    writes.forEach(
        (name, lease) -> {
          if (lease.isPresent()) {
            LeaseRecord now = lease.get();
            LeaseRecord old = state.leases.put(name, now);
            state.sessions.leaseChanged(name, old, now);
            if (old == null) {
              state.index.add(name, now);
            } else if (old.getToken() != now.getToken()) {
              state.index.remove(name, old);
              state.index.add(name, now);
            }
          } else {
            LeaseRecord old = state.leases.remove(name);
            if (old != null) {
              state.index.remove(name, old);
              state.sessions.leaseChanged(name, old, null);
            }
          }
        });
    sessionWrites.forEach(
        (id, session) -> {
          if (session.isPresent()) {
            state.sessions.put(id, session.get());
          } else {
            state.sessions.remove(id);
          }
        });
    offers.forEach(
        (name, offer) -> {
          if (offer.isPresent()) {
            state.offers.put(name, offer.get());
          } else {
            state.offers.remove(name);
          }
        });
    lockDelays.forEach(
        (name, bar) -> {
          if (bar.isPresent()) {
            state.lockDelays.put(name, bar.get());
          } else {
            state.lockDelays.remove(name);
          }
        });
    nameHistory.forEach((name, p) -> state.history.publish(Space.NAME_HISTORY, name, p));
    holderHistory.forEach((holder, p) -> state.history.publish(Space.HOLDER_HISTORY, holder, p));
    afterCommit.forEach(Runnable::run);

    state.liveLeases = state.leases.size();
    Counters c = state.counters;
    LeaseEvent.Type[] types = LeaseEvent.Type.values();
    for (int i = 0; i < counts.length; i++) {
      if (counts[i] > 0) {
        c.add(types[i], counts[i]);
      }
    }
    if (counts[LeaseEvent.Type.EXPIRED.ordinal()] > 0) {
      for (LeaseEvent e : events) {
        if (e.type() == LeaseEvent.Type.EXPIRED) {
          c.expired(e.name(), e.lease().getToken());
        }
      }
    }
    rejections.forEach(c::rejected);
    if (lateHeartbeats > 0) {
      c.lateHeartbeats(lateHeartbeats);
    }
  }
}
