package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.leasehold.proto.v1.BanRecord;
import io.leasehold.proto.v1.CopyGlobal;
import io.leasehold.proto.v1.CopyGlobalResponse;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.StoredGrants;
import io.leasehold.proto.v1.StoredPolicy;
import io.leasehold.proto.v1.StoredRole;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.ReadView;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The global state (the default and namespace policies, the bans, the roles and grants) and its
 * copies in lease groups (docs/design/multi-raft.md, "Global state"). The meta group applies every
 * change to it and records the index of the last entry that changed it as its version. A lease
 * group never takes such commands itself: it applies {@link CopyGlobal} entries, each the meta
 * group's whole global state at a version, and keeps the newest it was given. A copy carries state,
 * not a change, so copies sent by different nodes, late or twice, leave every replica of the group
 * with the same state, and a group that missed some versions needs only the next copy.
 *
 * <p>A ban the group did not hold ends the holder's leases in the group in the copy's entry, as the
 * ban's own entry ends them in the meta group. A timed ban is lifted by the meta group's leader,
 * and the lift reaches the group with the next copy; until then the holder stays refused, as it
 * does in the meta group until its leader lifts it.
 */
final class GlobalCopies {
  static final byte[] VERSION_KEY = "global-version".getBytes(StandardCharsets.US_ASCII);

  private final KvStore store;
  private final CoreState state;
  private final AuthCommands auth;
  private volatile long version;

  GlobalCopies(KvStore store, CoreState state, AuthCommands auth) {
    this.store = store;
    this.state = state;
    this.auth = auth;
  }

  /** The commands that change the global state: the meta group's alone. */
  static boolean global(LogCommand c) {
    return switch (c.getCommandCase()) {
      case SET_POLICY,
          DELETE_POLICY,
          BAN,
          UNBAN,
          LIFT_BANS,
          ADD_ROLE,
          REMOVE_ROLE,
          GRANT_ROLE,
          REVOKE_ROLE,
          BOOTSTRAP_ADMIN ->
          true;
      default -> false;
    };
  }

  void load() {
    version = store.get(Space.META, VERSION_KEY).map(b -> ByteBuffer.wrap(b).getLong()).orElse(0L);
  }

  /**
   * In the meta group, the last entry that changed the global state (or raised the log format to
   * the one with lease groups); in a lease group, the version of the copy it holds. Safe from any
   * thread.
   */
  long version() {
    return version;
  }

  /** Meta group: entry {@code index} changed the global state; its version becomes the index. */
  void changed(List<Change> changes, long index) {
    changes.add(Change.put(Space.META, VERSION_KEY, longBytes(index)));
  }

  /** After the commit of an entry {@link #changed} was told of. */
  void committed(long index) {
    version = index;
  }

  /** Meta group: its global state and version, read from one view. */
  CopyGlobal snapshot() {
    return store.read(
        view -> {
          CopyGlobal.Builder copy =
              CopyGlobal.newBuilder()
                  .setVersion(
                      view.get(Space.META, VERSION_KEY)
                          .map(b -> ByteBuffer.wrap(b).getLong())
                          .orElse(0L));
          view.get(Space.META, Policies.DEFAULT_KEY)
              .ifPresent(b -> copy.setDefaultPolicy(Policies.parse(b)));
          copy.putAllPolicies(scan(view, Space.POLICIES, StoredPolicy.parser()));
          copy.putAllBans(scan(view, Space.BANS, BanRecord.parser()));
          copy.putAllRoles(scan(view, Space.AUTH_ROLES, StoredRole.parser()));
          copy.putAllGrants(scan(view, Space.AUTH_GRANTS, StoredGrants.parser()));
          return copy.build();
        });
  }

  /**
   * Lease group: takes a copy newer than the one it holds in its place. Only what differs is
   * written; the in-memory policies, bans and roles are read again after the commit.
   */
  CopyGlobalResponse apply(Tx tx, CopyGlobal c) {
    if (c.getVersion() <= 0) {
      throw new InvalidArgumentException("copy_global.version", "must be 1 or more");
    }
    validateKeys(c);
    if (c.getVersion() <= version) {
      return CopyGlobalResponse.newBuilder().setVersion(version).setApplied(false).build();
    }
    CopyGlobal held = snapshot();
    Optional<StoredPolicy> heldDefault =
        held.hasDefaultPolicy() ? Optional.of(held.getDefaultPolicy()) : Optional.empty();
    Optional<StoredPolicy> newDefault =
        c.hasDefaultPolicy() ? Optional.of(c.getDefaultPolicy()) : Optional.empty();
    if (!heldDefault.equals(newDefault)) {
      tx.extra.add(
          newDefault.isPresent()
              ? Change.put(Space.META, Policies.DEFAULT_KEY, newDefault.get().toByteArray())
              : Change.delete(Space.META, Policies.DEFAULT_KEY));
      tx.event(
          LeaseEvent.Type.POLICY_CHANGED,
          AdminCommands.policyEventName(""),
          LeaseRecord.getDefaultInstance());
    }
    for (String ns : replace(tx, Space.POLICIES, held.getPoliciesMap(), c.getPoliciesMap())) {
      tx.event(
          LeaseEvent.Type.POLICY_CHANGED,
          AdminCommands.policyEventName(ns),
          LeaseRecord.getDefaultInstance());
    }
    int bansAdded = 0;
    long ended = 0;
    for (String holder : replace(tx, Space.BANS, held.getBansMap(), c.getBansMap())) {
      BanRecord ban = c.getBansMap().get(holder);
      BanRecord before = held.getBansMap().get(holder);
      if (ban == null || (before != null && before.getRevision() == ban.getRevision())) {
        continue; // lifted, or the same ban
      }
      bansAdded++;
      for (String name : state.index.namesHeldBy(holder)) {
        if (!state.frozen(name)) { // a moving lease ends where its move takes it (NamespaceMoves)
          tx.end(name, tx.get(name).orElseThrow(), LeaseEvent.Type.BANNED, ban.getReason());
          ended++;
        }
      }
    }
    replace(tx, Space.AUTH_ROLES, held.getRolesMap(), c.getRolesMap());
    replace(tx, Space.AUTH_GRANTS, held.getGrantsMap(), c.getGrantsMap());
    tx.extra.add(Change.put(Space.META, VERSION_KEY, longBytes(c.getVersion())));
    tx.afterCommit(
        () -> {
          state.policies.load(store);
          state.bans.load(store);
          auth.load();
          version = c.getVersion();
        });
    return CopyGlobalResponse.newBuilder()
        .setVersion(c.getVersion())
        .setApplied(true)
        .setBansAdded(bansAdded)
        .setLeasesEnded(ended)
        .build();
  }

  /**
   * Writes the records of {@code now} that {@code held} lacks or holds otherwise, and deletes those
   * it holds that {@code now} lacks. Returns the keys that changed, sorted.
   */
  private static <M extends Message> TreeSet<String> replace(
      Tx tx, Space space, Map<String, M> held, Map<String, M> now) {
    TreeSet<String> changed = new TreeSet<>();
    new TreeMap<>(now)
        .forEach(
            (key, record) -> {
              if (!record.equals(held.get(key))) {
                tx.extra.add(Change.put(space, LeaseCore.utf8(key), record.toByteArray()));
                changed.add(key);
              }
            });
    for (String key : new TreeSet<>(held.keySet())) {
      if (!now.containsKey(key)) {
        tx.extra.add(Change.delete(space, LeaseCore.utf8(key)));
        changed.add(key);
      }
    }
    return changed;
  }

  private static void validateKeys(CopyGlobal c) {
    for (String ns : c.getPoliciesMap().keySet()) {
      if (ns.isEmpty() || ns.indexOf('/') >= 0) {
        throw new InvalidArgumentException(
            "copy_global.policies", "keys must be namespaces, not empty and without '/': " + ns);
      }
    }
    empty("copy_global.bans", c.getBansMap());
    empty("copy_global.roles", c.getRolesMap());
    empty("copy_global.grants", c.getGrantsMap());
  }

  private static void empty(String field, Map<String, ?> m) {
    if (m.containsKey("")) {
      throw new InvalidArgumentException(field, "keys must not be empty");
    }
  }

  private static <M extends Message> SortedMap<String, M> scan(
      ReadView view, Space space, Parser<M> parser) {
    SortedMap<String, M> out = new TreeMap<>();
    view.scan(
        space,
        new byte[0],
        new byte[0],
        (key, value) -> {
          try {
            out.put(new String(key, StandardCharsets.UTF_8), parser.parseFrom(value));
          } catch (InvalidProtocolBufferException e) {
            throw new StoreException("corrupt record in " + space.columnFamily(), e);
          }
          return true;
        });
    return out;
  }

  private static byte[] longBytes(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }
}
