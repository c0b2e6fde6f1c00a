package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.DropNamespace;
import io.leasehold.proto.v1.FreezeNamespace;
import io.leasehold.proto.v1.FreezeNamespaceResponse;
import io.leasehold.proto.v1.HistoryRecord;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.NameHistory;
import io.leasehold.proto.v1.NamespaceState;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.StageNamespace;
import io.leasehold.proto.v1.StageNamespaceResponse;
import io.leasehold.proto.v1.StagedPart;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.proto.v1.UnfreezeNamespace;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongUnaryOperator;

/**
 * A namespace's state leaving one group and arriving in another (docs/design/multi-raft.md, "Moving
 * a namespace"): the source's Freeze, which carries the state out, and Unfreeze or Drop, which end
 * the move there; and the destination's adoption of that state.
 *
 * <p>The namespace's live state travels, and so does the ended-lease history of its names, which a
 * history read by name then finds in the destination; a holder's history stays where it was written
 * (reads of it merge every group's).
 *
 * <p>A frozen namespace stays in the source's tables, so stale reads keep answering (linearizable
 * ones wait for the move, {@link LeaseCore#servesReads}), but nothing changes it: client commands
 * are answered Moving ({@link Placements#moving}), and what the group decides on its own (expiry,
 * lock-delay lifts, offer withdrawals, session ends, bans) passes its names by ({@link
 * CoreState#frozen}). The state a Freeze reply carries is thus what the source holds for as long as
 * the move lasts, and what the destination adopts.
 */
final class NamespaceMoves {
  /**
   * The namespace a move cannot carry: a service's version is its group's revision of its last
   * change, which the destination's revisions would not keep increasing.
   */
  static final String REGISTRY = "service";

  private final CoreState state;
  private final Placements placements;
  private final KvStore store;

  /** The token, without any offset, of an entry's first grant: index to token. */
  private final LongUnaryOperator tokenOf;

  NamespaceMoves(CoreState state, KvStore store, Placements placements, LongUnaryOperator tokenOf) {
    this.state = state;
    this.store = store;
    this.placements = placements;
    this.tokenOf = tokenOf;
  }

  /**
   * Freezes a namespace this group owns and answers with its state and the floor: one above every
   * token this group granted. The caller answers WrongGroup for a namespace this group does not
   * own.
   */
  FreezeNamespaceResponse freeze(Tx tx, FreezeNamespace c) {
    String ns = Placements.namespace(c.getNamespace(), "freeze_namespace.namespace");
    if (ns.equals(REGISTRY)) {
      throw new InvalidArgumentException(
          "freeze_namespace.namespace",
          "the registry's namespace '"
              + REGISTRY
              + "' cannot move: a service's version is its group's revision of its last change");
    }
    if (c.getMove() < 1) {
      throw new InvalidArgumentException("freeze_namespace.move", "must be 1 or more");
    }
    long frozenBy = placements.frozenBy(ns);
    if (frozenBy != 0 && frozenBy != c.getMove()) {
      throw new InvalidArgumentException(
          "freeze_namespace.move",
          "namespace '" + ns + "' is frozen by move " + frozenBy + ", not " + c.getMove());
    }
    if (c.getMaxStateBytes() < 0) {
      throw new InvalidArgumentException(
          "freeze_namespace.max_state_bytes", "must not be negative");
    }
    NamespaceState exported = export(ns);
    if (c.getMaxStateBytes() > 0 && exported.getSerializedSize() > c.getMaxStateBytes()) {
      throw new InvalidArgumentException(
          "freeze_namespace.max_state_bytes",
          "namespace '"
              + ns
              + "' holds "
              + exported.getSerializedSize()
              + " bytes of state, above the "
              + c.getMaxStateBytes()
              + " a move carries: it stays where it is");
    }
    if (frozenBy == 0) {
      placements.freeze(tx, ns, c.getMove());
    }
    return FreezeNamespaceResponse.newBuilder()
        .setNamespace(ns)
        .setMove(c.getMove())
        .setFloor(placements.tokenOffset() + tokenOf.applyAsLong(tx.index + 1))
        .setState(exported)
        .setRevision(tx.index)
        .build();
  }

  /**
   * The destination keeps a part of a move's state aside until the adoption (format 7 on). Parts of
   * an earlier move of the namespace are forgotten first; a group that owns the namespace already
   * (the move's adoption applied, and the coordinator is going over its steps again) keeps nothing.
   */
  StageNamespaceResponse stage(Tx tx, StageNamespace c) {
    String ns = Placements.namespace(c.getNamespace(), "stage_namespace.namespace");
    if (placements.group() == 0) {
      throw new InvalidArgumentException(
          "stage_namespace", "a move stages its state in the lease group it goes to");
    }
    if (c.getMove() < 1) {
      throw new InvalidArgumentException("stage_namespace.move", "must be 1 or more");
    }
    if (c.getPart() < 0) {
      throw new InvalidArgumentException("stage_namespace.part", "must not be negative");
    }
    if (!c.getDiscard() && c.getPartBytes() < 1) {
      throw new InvalidArgumentException("stage_namespace.part_bytes", "must be 1 or more");
    }
    StageNamespaceResponse.Builder answer =
        StageNamespaceResponse.newBuilder().setNamespace(ns).setMove(c.getMove());
    if (placements.owns(ns)) {
      return answer.setParts(0).build();
    }
    Map<Layout, StagedPart> staged = staged(ns);
    Layout mine = new Layout(c.getPartBytes(), c.getPart());
    int kept = 0;
    for (Map.Entry<Layout, StagedPart> e : staged.entrySet()) {
      if (c.getDiscard() || e.getValue().getMove() != c.getMove()) {
        tx.extra.add(Change.delete(Space.META, stagedKey(ns, e.getKey())));
      } else if (e.getKey().partBytes() == mine.partBytes() && !e.getKey().equals(mine)) {
        kept++;
      }
    }
    if (c.getDiscard()) {
      return answer.setParts(0).build();
    }
    for (String name : names(c.getState())) {
      if (!name.startsWith(ns + "/")) {
        throw new InvalidArgumentException(
            "stage_namespace.state", "'" + name + "' is not in '" + ns + "'");
      }
    }
    tx.extra.add(
        Change.put(
            Space.META,
            stagedKey(ns, mine),
            StagedPart.newBuilder()
                .setMove(c.getMove())
                .setState(c.getState())
                .build()
                .toByteArray()));
    return answer.setParts(kept + 1).build();
  }

  /**
   * The state an adoption makes live: its own, merged with the parts it names (format 7 on), which
   * this entry forgets. A part missing, or staged for another move, makes the adoption invalid.
   */
  NamespaceState adopted(Tx tx, AdoptNamespace c) {
    if (c.getStagedParts() < 0) {
      throw new InvalidArgumentException("adopt_namespace.staged_parts", "must not be negative");
    }
    if (c.getStagedParts() == 0) {
      return c.getState();
    }
    Map<Layout, StagedPart> staged = staged(c.getNamespace());
    NamespaceState.Builder state = NamespaceState.newBuilder();
    for (int part = 0; part < c.getStagedParts(); part++) {
      StagedPart p = staged.get(new Layout(c.getStagedPartBytes(), part));
      if (p == null || p.getMove() != c.getMove()) {
        throw new InvalidArgumentException(
            "adopt_namespace.staged_parts",
            "part "
                + part
                + " of "
                + c.getStagedPartBytes()
                + " bytes of move "
                + c.getMove()
                + " of namespace '"
                + c.getNamespace()
                + "' is not staged here");
      }
      state.mergeFrom(p.getState());
    }
    NamespaceState merged = state.mergeFrom(c.getState()).build();
    int entries = entries(merged);
    if (entries != c.getStagedEntries()) {
      throw new InvalidArgumentException(
          "adopt_namespace.staged_parts",
          "the parts of move "
              + c.getMove()
              + " of namespace '"
              + c.getNamespace()
              + "' hold "
              + entries
              + " entries, not the "
              + c.getStagedEntries()
              + " the adoption names");
    }
    staged
        .keySet()
        .forEach(
            part -> tx.extra.add(Change.delete(Space.META, stagedKey(c.getNamespace(), part))));
    return merged;
  }

  /** How many entries a state holds: leases, lock-delays, offers, sessions, names' histories. */
  static int entries(NamespaceState s) {
    return s.getLeasesCount()
        + s.getLockDelaysCount()
        + s.getOffersCount()
        + s.getSessionsCount()
        + s.getHistoryCount();
  }

  /** A staged part's place: the layout it was cut with, and its number in it. */
  record Layout(int partBytes, int part) {}

  /** The parts staged for {@code ns} in this group, by layout and number. */
  private Map<Layout, StagedPart> staged(String ns) {
    byte[] prefix = stagedPrefix(ns);
    Map<Layout, StagedPart> parts = new java.util.HashMap<>();
    store.read(
        view -> {
          view.scan(
              Space.META,
              prefix,
              new byte[0],
              (key, value) -> {
                ByteBuffer at = ByteBuffer.wrap(key, prefix.length, 8);
                Layout part = new Layout(at.getInt(), at.getInt());
                try {
                  parts.put(part, StagedPart.parseFrom(value));
                } catch (InvalidProtocolBufferException e) {
                  throw new IllegalStateException("staged part " + part + " of " + ns, e);
                }
                return true;
              });
          return null;
        });
    return parts;
  }

  /** Where a part of a move of {@code ns} waits, in {@link Space#META}. */
  static byte[] stagedKey(String ns, Layout part) {
    byte[] prefix = stagedPrefix(ns);
    return ByteBuffer.allocate(prefix.length + 8)
        .put(prefix)
        .putInt(part.partBytes())
        .putInt(part.part())
        .array();
  }

  private static byte[] stagedPrefix(String ns) {
    return ("staged/" + ns + "\0").getBytes(StandardCharsets.UTF_8);
  }

  /** Every name a state carries, for the check that they are all in its namespace. */
  private static java.util.Set<String> names(NamespaceState state) {
    java.util.Set<String> names = new java.util.HashSet<>(state.getLeasesMap().keySet());
    names.addAll(state.getLockDelaysMap().keySet());
    names.addAll(state.getOffersMap().keySet());
    names.addAll(state.getHistoryMap().keySet());
    return names;
  }

  /** The live state of {@code ns} in this group, as of the entry being applied. */
  private NamespaceState export(String ns) {
    String prefix = ns + "/";
    NamespaceState.Builder b = NamespaceState.newBuilder();
    state.leases.forEach(
        (name, lease) -> {
          if (name.startsWith(prefix)) {
            b.putLeases(name, lease);
            if (lease.getSession() != 0) {
              StoredSession s = state.sessions.get(lease.getSession());
              if (s != null) {
                b.putSessions(lease.getSession(), s);
              }
            }
          }
        });
    b.putAllLockDelays(state.lockDelays.withPrefix(prefix));
    b.putAllOffers(state.offers.withPrefix(prefix));
    // The ended leases of its names, as stored (the entry being applied ends none of them).
    Map<String, NameHistory.Builder> history = new java.util.TreeMap<>();
    store.read(
        view -> {
          view.scan(
              Space.NAME_HISTORY,
              prefix.getBytes(StandardCharsets.UTF_8),
              new byte[0],
              (key, value) -> {
                HistoryRecord r = LeaseHistory.parse(value);
                history.computeIfAbsent(r.getName(), n -> NameHistory.newBuilder()).addRecords(r);
                return true;
              });
          return null;
        });
    history.forEach((name, h) -> b.putHistory(name, h.build()));
    return b.build();
  }

  /**
   * Ends a move in its source before its destination adopted the namespace: the group applies
   * commands to it again. Its leases' deadlines start again on the leader (the ticker tracks them
   * anew on this reply), and a lease whose session ended or whose holder was banned meanwhile ends
   * now, as it would have then.
   */
  PlacementResponse unfreeze(Tx tx, UnfreezeNamespace c) {
    String ns = Placements.namespace(c.getNamespace(), "unfreeze_namespace.namespace");
    if (c.getMove() < 1) {
      throw new InvalidArgumentException("unfreeze_namespace.move", "must be 1 or more");
    }
    if (placements.unfreeze(tx, ns, c.getMove())) {
      endWhatEndedMeanwhile(tx, ns);
    }
    return placements.get(ns).orElse(unplaced(ns));
  }

  /**
   * A move's last step in a lease group that was its source: the namespace's state goes without
   * ending anything (it lives on in the destination), and the group no longer owns it. Dropping
   * again changes nothing.
   */
  PlacementResponse drop(Tx tx, DropNamespace c) {
    String ns = Placements.namespace(c.getNamespace(), "drop_namespace.namespace");
    if (c.getMove() < 1) {
      throw new InvalidArgumentException("drop_namespace.move", "must be 1 or more");
    }
    if (placements.group() == 0) {
      throw new InvalidArgumentException(
          "drop_namespace",
          "the meta group forgets a namespace it moved away when it places it on its new group");
    }
    if (placements.drop(tx, ns, c.getMove())) {
      forget(tx, ns);
    }
    return placements.get(ns).orElse(unplaced(ns));
  }

  /**
   * The state of {@code ns} in this group goes, without ending anything: it lives on in the group
   * that adopted it. A lease group's drop; the meta group's own move's end, in the entry that
   * places the namespace on its new group.
   */
  void forget(Tx tx, String ns) {
    String prefix = ns + "/";
    state.leases.forEach(
        (name, lease) -> {
          if (name.startsWith(prefix)) {
            tx.writes.put(name, Optional.empty());
          }
        });
    state.lockDelays.withPrefix(prefix).keySet().forEach(tx::clearLockDelay);
    state.offers.withPrefix(prefix).keySet().forEach(tx::removeOffer);
    state.history.ownersWithPrefix(Space.NAME_HISTORY, prefix).forEach(tx::forgetHistory);
  }

  /**
   * The destination's half of an adoption that carries a move's state: the state becomes live in
   * this entry, without events (watchers saw it in the source). Leases keep their tokens and
   * attributes; their guards are this group's (renewed at this entry, as the source's revisions
   * mean nothing here), and the ticker gives them a full TTL from the leader on this reply. Each
   * session they are attached to gets a part here if the group has none; a part whose session has
   * ended since is ended by the group's sweep, with its leases.
   */
  void adoptState(Tx tx, AdoptNamespace c, NamespaceState moved) {
    String prefix = c.getNamespace() + "/";
    for (Map.Entry<String, LeaseRecord> e : moved.getLeasesMap().entrySet()) {
      String name = e.getKey();
      if (!name.startsWith(prefix)) {
        throw new InvalidArgumentException(
            "adopt_namespace.state.leases", "'" + name + "' is not in '" + c.getNamespace() + "'");
      }
      LeaseRecord lease = e.getValue();
      tx.writes.put(
          name,
          Optional.of(
              lease.toBuilder()
                  .setHolder(state.index.holder(lease.getHolder()))
                  .setLastRenewRevision(tx.index)
                  .setModRevision(tx.index)
                  .build()));
    }
    for (Map.Entry<Long, StoredSession> e : moved.getSessionsMap().entrySet()) {
      if (tx.session(e.getKey()).isEmpty()) {
        StoredSession s = e.getValue();
        tx.putSession(
            e.getKey(),
            StoredSession.newBuilder()
                .setHolder(state.index.holder(s.getHolder()))
                .setTtlMicros(s.getTtlMicros())
                .setCreatedAtMicros(tx.now)
                .setRenewedAtMicros(tx.now)
                .setLastRenewRevision(tx.index)
                .setHeartbeatMicros(s.getHeartbeatMicros())
                .setPart(true)
                .build());
      }
    }
    for (Map.Entry<String, StoredLockDelay> e : moved.getLockDelaysMap().entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        throw new InvalidArgumentException(
            "adopt_namespace.state.lock_delays",
            "'" + e.getKey() + "' is not in '" + c.getNamespace() + "'");
      }
      tx.putLockDelay(e.getKey(), e.getValue());
    }
    moved
        .getOffersMap()
        .forEach(
            (name, offer) -> {
              if (!name.startsWith(prefix)) {
                throw new InvalidArgumentException(
                    "adopt_namespace.state.offers",
                    "'" + name + "' is not in '" + c.getNamespace() + "'");
              }
              tx.putOffer(name, offer);
            });
    moved
        .getHistoryMap()
        .forEach(
            (name, h) -> {
              if (!name.startsWith(prefix)) {
                throw new InvalidArgumentException(
                    "adopt_namespace.state.history",
                    "'" + name + "' is not in '" + c.getNamespace() + "'");
              }
              tx.adoptHistory(name, h.getRecordsList());
            });
    endWhatEndedMeanwhile(tx, c.getNamespace());
  }

  /**
   * Ends the leases of {@code ns}, as this entry leaves them so far, whose holder this group holds
   * banned or whose session it no longer holds: what the group passed by while the namespace was
   * frozen, or what the destination decided while the source held it frozen.
   */
  private void endWhatEndedMeanwhile(Tx tx, String ns) {
    String prefix = ns + "/";
    java.util.TreeMap<String, LeaseRecord> live = new java.util.TreeMap<>();
    state.leases.forEach(
        (name, lease) -> {
          if (name.startsWith(prefix)) {
            live.put(name, lease);
          }
        });
    tx.writes.forEach(
        (name, lease) -> {
          if (name.startsWith(prefix)) {
            if (lease.isPresent()) {
              live.put(name, lease.get());
            } else {
              live.remove(name);
            }
          }
        });
    live.forEach(
        (name, lease) -> {
          Optional<io.leasehold.proto.v1.BanRecord> ban = state.bans.get(lease.getHolder());
          if (ban.isPresent()) {
            tx.end(name, lease, LeaseEvent.Type.BANNED, ban.get().getReason());
          } else if (lease.getSession() != 0 && tx.session(lease.getSession()).isEmpty()) {
            tx.end(name, lease, LeaseEvent.Type.SESSION_EXPIRED, "session " + lease.getSession());
          }
        });
  }

  private static PlacementResponse unplaced(String ns) {
    return PlacementResponse.newBuilder().setNamespace(ns).build();
  }
}
