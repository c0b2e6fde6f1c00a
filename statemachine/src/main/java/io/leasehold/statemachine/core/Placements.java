package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.PlaceNamespace;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.StoredPlacement;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Which namespaces this group applies commands to (docs/design/multi-raft.md, "Placement"). The
 * meta group (number 0) records where each placed namespace lives and owns every namespace not
 * placed on another group: with no placement, as in every cluster with one group, it owns them all.
 * A lease group owns only the namespaces it adopted. Kept in step with the placements space after
 * each commit by the apply thread; other threads may read it ({@link #get}).
 *
 * <p>A lease group's tokens are its offset plus the format's token of the entry and position. An
 * adoption raises the offset so that every later token is above the floor the adoption carries: the
 * token the namespace's previous group would have granted next, so tokens of one name keep
 * increasing when its namespace comes to this group.
 */
final class Placements {
  static final byte[] OFFSET_KEY = "token-offset".getBytes(StandardCharsets.US_ASCII);

  private final int group;
  private final Map<String, StoredPlacement> byNamespace = new ConcurrentHashMap<>();
  private final java.util.Set<String> frozen;
  private long tokenOffset;

  /** See {@link #version()}: the highest revision of a record, kept as records are applied. */
  private volatile long version;

  /**
   * @param group this group's number: 0 for the meta group, 1 and up for lease groups
   * @param frozen the namespaces a move froze in this group, kept here for the apply thread
   */
  Placements(int group, java.util.Set<String> frozen) {
    this.group = group;
    this.frozen = frozen;
  }

  int group() {
    return group;
  }

  /**
   * The index of the last entry that changed where a namespace lives in this group's table (a
   * placement, a move's switch), as applied; 0 before any. Safe from any thread.
   */
  long version() {
    return version;
  }

  long tokenOffset() {
    return tokenOffset;
  }

  void load(KvStore store) {
    byNamespace.clear();
    version = 0;
    frozen.clear();
    store.read(
        view -> {
          view.scan(
              Space.PLACEMENTS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                String ns = new String(key, StandardCharsets.UTF_8);
                StoredPlacement p = parse(value);
                byNamespace.put(ns, p);
                version = Math.max(version, p.getRevision());
                if (p.getFrozenBy() != 0) {
                  frozen.add(ns);
                }
                return true;
              });
          return null;
        });
    tokenOffset =
        store.get(Space.META, OFFSET_KEY).map(b -> ByteBuffer.wrap(b).getLong()).orElse(0L);
  }

  /** The placement this group has applied for {@code namespace}; safe from any thread. */
  Optional<PlacementResponse> get(String namespace) {
    StoredPlacement p = byNamespace.get(namespace);
    return p == null ? Optional.empty() : Optional.of(response(namespace, p));
  }

  /** The namespaces placed on each group, sorted; safe from any thread. */
  Map<Integer, List<String>> namespacesByGroup() {
    Map<Integer, List<String>> out = new java.util.TreeMap<>();
    new java.util.TreeMap<>(byNamespace)
        .forEach((ns, p) -> out.computeIfAbsent(p.getGroup(), g -> new ArrayList<>()).add(ns));
    return out;
  }

  /** How many namespaces each group holds, as placed so far; safe from any thread. */
  Map<Integer, Integer> namespacesPerGroup() {
    Map<Integer, Integer> out = new java.util.TreeMap<>();
    byNamespace.values().forEach(p -> out.merge(p.getGroup(), 1, Integer::sum));
    return out;
  }

  /** Whether this group applies commands to names of {@code namespace}. */
  boolean owns(String namespace) {
    StoredPlacement p = byNamespace.get(namespace);
    return group == 0 ? p == null || p.getGroup() == 0 : p != null;
  }

  /**
   * Whether a read of {@code namespace} this group answered at {@code revision} is the namespace's
   * live state: the group owned it from that revision at the latest until now, and does not hold it
   * frozen for a move (once the move switches, the copy it froze is not the live state any more).
   * The meta group owns a namespace placed nowhere or on itself. Safe from any thread.
   */
  boolean servesReads(String namespace, long revision) {
    StoredPlacement p = byNamespace.get(namespace);
    if (group == 0) {
      return p == null
          || (p.getGroup() == 0 && p.getFrozenBy() == 0 && p.getRevision() <= revision);
    }
    return p != null && p.getFrozenBy() == 0 && p.getRevision() <= revision;
  }

  /**
   * The first namespace among the names a client's lease command carries that this group does not
   * own; empty if it owns them all, or the command names no lease.
   */
  Optional<String> foreign(LogCommand command) {
    if (group == 0 && byNamespace.isEmpty()) {
      return Optional.empty(); // the common case: one group, which owns everything
    }
    return leaseNames(command).map(LeaseIndex::namespace).filter(ns -> !owns(ns)).findFirst();
  }

  /** The names a client's lease command carries, in order; none for any other command. */
  private static java.util.stream.Stream<String> leaseNames(LogCommand command) {
    return switch (command.getCommandCase()) {
      case ACQUIRE -> java.util.stream.Stream.of(command.getAcquire().getName());
      case RELEASE -> java.util.stream.Stream.of(command.getRelease().getName());
      case UPDATE -> java.util.stream.Stream.of(command.getUpdate().getName());
      case TRANSFER -> java.util.stream.Stream.of(command.getTransfer().getName());
      case ACCEPT_TRANSFER -> java.util.stream.Stream.of(command.getAcceptTransfer().getName());
      case REVOKE -> java.util.stream.Stream.of(command.getRevoke().getName());
      case RENEW -> command.getRenew().getItemsList().stream().map(i -> i.getName());
      case ACQUIRE_MANY -> command.getAcquireMany().getItemsList().stream().map(i -> i.getName());
      default -> java.util.stream.Stream.empty();
    };
  }

  /** The move that froze {@code namespace} in this group; 0 if none did. */
  long frozenBy(String namespace) {
    StoredPlacement p = byNamespace.get(namespace);
    return p == null ? 0 : p.getFrozenBy();
  }

  /**
   * The first namespace among the names a client's lease command carries that a move froze in this
   * group; empty if none.
   */
  Optional<String> moving(LogCommand command) {
    if (frozen.isEmpty()) {
      return Optional.empty();
    }
    return leaseNames(command).map(Placements::namespaceOf).filter(frozen::contains).findFirst();
  }

  /** A name's namespace, or the name itself if it has none (invalid: refused later). */
  private static String namespaceOf(String name) {
    int slash = name.indexOf('/');
    return slash > 0 ? name.substring(0, slash) : name;
  }

  /**
   * A move's source: freezes a namespace this group owns for move {@code move}. The meta group
   * records it on the namespace's record (made at epoch 1 where it had none: the meta group owned
   * it unplaced); a lease group on the record of its adoption.
   */
  void freeze(Tx tx, String ns, long move) {
    StoredPlacement p = byNamespace.get(ns);
    StoredPlacement.Builder b =
        p == null
            ? StoredPlacement.newBuilder().setGroup(group).setEpoch(1).setRevision(tx.index)
            : p.toBuilder();
    put(tx, ns, b.setFrozenBy(move).build());
    tx.afterCommit(() -> frozen.add(ns));
  }

  /** Ends the freeze of move {@code move}; returns false if that move did not freeze it. */
  boolean unfreeze(Tx tx, String ns, long move) {
    StoredPlacement p = byNamespace.get(ns);
    if (p == null || p.getFrozenBy() != move) {
      return false;
    }
    put(tx, ns, p.toBuilder().setFrozenBy(0).build());
    tx.afterCommit(() -> frozen.remove(ns));
    return true;
  }

  /**
   * A lease group forgets a namespace move {@code move} froze here: it no longer owns it. Returns
   * false if that move did not freeze it (dropped already, or never frozen by it).
   */
  boolean drop(Tx tx, String ns, long move) {
    StoredPlacement p = byNamespace.get(ns);
    if (group == 0 || p == null || p.getFrozenBy() != move) {
      return false;
    }
    tx.extra.add(Change.delete(Space.PLACEMENTS, ns.getBytes(StandardCharsets.UTF_8)));
    tx.afterCommit(
        () -> {
          byNamespace.remove(ns);
          frozen.remove(ns);
        });
    return true;
  }

  /**
   * Meta group: places a namespace that has no placement. One the meta group still holds live state
   * of stays here (group 0), as moving state takes a move; the floor is the token this group would
   * grant next, above every token it granted in the namespace.
   *
   * @param holdsState whether the meta group holds live state (a lease, a lock-delay, an offer) in
   *     a namespace
   */
  PlacementResponse place(Tx tx, PlaceNamespace c, Predicate<String> holdsState, long floor) {
    if (group != 0) {
      throw new InvalidArgumentException(
          "place_namespace", "only the meta group places namespaces, not lease group " + group);
    }
    String ns = namespace(c.getNamespace(), "place_namespace.namespace");
    if (c.getGroupsCount() == 0 || c.getGroupsList().stream().anyMatch(g -> g < 1)) {
      throw new InvalidArgumentException(
          "place_namespace.groups", "must name one or more lease groups, each 1 or more");
    }
    StoredPlacement existing = byNamespace.get(ns);
    if (existing != null) {
      return response(ns, existing);
    }
    Map<Integer, Integer> used = namespacesPerGroup();
    int to =
        holdsState.test(ns)
            ? 0
            : c.getGroupsList().stream()
                .min(
                    java.util.Comparator.<Integer>comparingInt(g -> used.getOrDefault(g, 0))
                        .thenComparingInt(g -> g))
                .orElseThrow();
    StoredPlacement placed =
        StoredPlacement.newBuilder()
            .setGroup(to)
            .setEpoch(1)
            .setRevision(tx.index)
            .setFloor(floor)
            .build();
    put(tx, ns, placed);
    return response(ns, placed);
  }

  /**
   * Lease group: owns a namespace from this entry on, at the adoption's epoch, and raises the token
   * offset so that every token from the next entry on is at least the floor.
   *
   * @param nextToken the token, without offset, of the first grant of the entry after this one
   */
  PlacementResponse adopt(Tx tx, AdoptNamespace c, long nextToken) {
    if (group == 0) {
      throw new InvalidArgumentException(
          "adopt_namespace", "the meta group owns every namespace not placed elsewhere");
    }
    String ns = namespace(c.getNamespace(), "adopt_namespace.namespace");
    if (c.getGroup() != group) {
      throw new InvalidArgumentException(
          "adopt_namespace.group", "names group " + c.getGroup() + ", not this group " + group);
    }
    if (c.getEpoch() < 1) {
      throw new InvalidArgumentException("adopt_namespace.epoch", "must be 1 or more");
    }
    if (c.getFloor() < 0) {
      throw new InvalidArgumentException("adopt_namespace.floor", "must not be negative");
    }
    StoredPlacement existing = byNamespace.get(ns);
    if (existing != null && existing.getEpoch() >= c.getEpoch()) {
      return response(ns, existing); // adopted already: a resent adoption changes nothing
    }
    StoredPlacement owned =
        StoredPlacement.newBuilder()
            .setGroup(group)
            .setEpoch(c.getEpoch())
            .setRevision(tx.index)
            .setFloor(c.getFloor())
            .setMovedFrom(c.getFromGroup())
            .setFrozenAt(c.getFrozenAt())
            .build();
    put(tx, ns, owned);
    long needed = c.getFloor() - nextToken;
    if (needed > tokenOffset) {
      tx.extra.add(
          Change.put(Space.META, OFFSET_KEY, ByteBuffer.allocate(8).putLong(needed).array()));
      tx.afterCommit(() -> tokenOffset = needed);
    }
    return response(ns, owned);
  }

  private void put(Tx tx, String ns, StoredPlacement p) {
    tx.extra.add(
        Change.put(Space.PLACEMENTS, ns.getBytes(StandardCharsets.UTF_8), p.toByteArray()));
    tx.afterCommit(
        () -> {
          byNamespace.put(ns, p);
          version = Math.max(version, p.getRevision());
        });
  }

  static String namespace(String ns, String field) {
    if (ns.isEmpty() || ns.indexOf('/') >= 0) {
      throw new InvalidArgumentException(
          field, "must be a namespace: the part of a name before its first '/', not empty");
    }
    return ns;
  }

  static PlacementResponse response(String ns, StoredPlacement p) {
    return PlacementResponse.newBuilder()
        .setNamespace(ns)
        .setGroup(p.getGroup())
        .setEpoch(p.getEpoch())
        .setRevision(p.getRevision())
        .setFloor(p.getFloor())
        .setMove(p.getMove())
        .setMovingTo(p.getMovingTo())
        .setDropFrom(p.getDropFrom())
        .setMovedFrom(p.getMovedFrom())
        .setFrozenAt(p.getFrozenAt())
        .build();
  }

  /** Every placement this group has applied, by namespace; safe from any thread. */
  List<PlacementResponse> all() {
    return new java.util.TreeMap<>(byNamespace)
        .entrySet().stream().map(e -> response(e.getKey(), e.getValue())).toList();
  }

  /**
   * Meta group: records a move of a namespace to a lease group, from the lease group it is placed
   * on or from the meta group itself (a namespace placed here, or never placed: the meta group owns
   * it). The move's id is this entry's index.
   */
  PlacementResponse recordMove(Tx tx, io.leasehold.proto.v1.RecordMove c) {
    if (group != 0) {
      throw new InvalidArgumentException(
          "record_move", "only the meta group records moves, not lease group " + group);
    }
    String ns = namespace(c.getNamespace(), "record_move.namespace");
    if (ns.equals(NamespaceMoves.REGISTRY)) {
      throw new InvalidArgumentException(
          "record_move.namespace",
          "the registry's namespace '"
              + ns
              + "' cannot move: a service's version is its group's revision of its last change");
    }
    if (c.getToGroup() < 1) {
      throw new InvalidArgumentException(
          "record_move.to_group", "must be a lease group, 1 or more");
    }
    StoredPlacement p = byNamespace.get(ns);
    if (p == null) {
      // The meta group owns it unplaced: it moves from here, at epoch 1.
      p = StoredPlacement.newBuilder().setGroup(0).setEpoch(1).setRevision(tx.index).build();
    }
    if (p.getMove() != 0) {
      if (p.getMovingTo() == c.getToGroup()
          || (p.getMovingTo() == 0 && p.getGroup() == c.getToGroup())) {
        return response(ns, p); // the same move, asked again (under way, or done but for the drop)
      }
      throw new InvalidArgumentException(
          "record_move.namespace",
          "namespace '"
              + ns
              + "' is moving already (move "
              + p.getMove()
              + (p.getMovingTo() != 0
                  ? " to group " + p.getMovingTo()
                  : ", waiting for group " + p.getDropFrom() + " to drop it")
              + ")");
    }
    if (p.getGroup() == c.getToGroup()) {
      return response(ns, p); // there already (a retried move that ended): nothing to do
    }
    StoredPlacement moving =
        p.toBuilder().setMove(tx.index).setMovingTo(c.getToGroup()).setDropFrom(0).build();
    put(tx, ns, moving);
    return response(ns, moving);
  }

  /**
   * Meta group: a step of the move the namespace's placement records; any other changes nothing.
   */
  PlacementResponse finishMove(Tx tx, io.leasehold.proto.v1.FinishMove c) {
    if (group != 0) {
      throw new InvalidArgumentException(
          "finish_move", "only the meta group records moves, not lease group " + group);
    }
    String ns = namespace(c.getNamespace(), "finish_move.namespace");
    StoredPlacement p = byNamespace.get(ns);
    if (p == null || p.getMove() == 0 || p.getMove() != c.getMove()) {
      return p == null ? PlacementResponse.newBuilder().setNamespace(ns).build() : response(ns, p);
    }
    StoredPlacement next =
        switch (c.getOutcome()) {
          // From the meta group itself: no other group drops it, the meta group forgets its state
          // in this entry (see LeaseCore), and the move is over.
          case MOVE_DONE ->
              p.getMovingTo() == 0
                  ? p
                  : p.getGroup() == 0
                      ? p.toBuilder()
                          .setGroup(p.getMovingTo())
                          .setEpoch(p.getEpoch() + 1)
                          .setRevision(tx.index)
                          .setMovingTo(0)
                          .setMove(0)
                          .setFrozenBy(0)
                          .build()
                      : p.toBuilder()
                          .setGroup(p.getMovingTo())
                          .setEpoch(p.getEpoch() + 1)
                          .setRevision(tx.index)
                          .setMovingTo(0)
                          .setDropFrom(p.getGroup())
                          .build();
          case MOVE_ABORTED ->
              p.getMovingTo() == 0 ? p : p.toBuilder().setMove(0).setMovingTo(0).build();
          case MOVE_DROPPED ->
              p.getDropFrom() == 0 ? p : p.toBuilder().setMove(0).setDropFrom(0).build();
          default ->
              throw new InvalidArgumentException(
                  "finish_move.outcome", "must be MOVE_DONE, MOVE_ABORTED or MOVE_DROPPED");
        };
    if (next != p) {
      put(tx, ns, next);
      if (p.getFrozenBy() != 0 && next.getFrozenBy() == 0) {
        tx.afterCommit(() -> frozen.remove(ns));
      }
    }
    return response(ns, next);
  }

  static StoredPlacement parse(byte[] bytes) {
    try {
      return StoredPlacement.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt placement record", e);
    }
  }
}
