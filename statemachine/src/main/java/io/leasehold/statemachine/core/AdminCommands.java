package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.Ban;
import io.leasehold.proto.v1.BanRecord;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.BanResponse;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.DeletePolicyResponse;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LiftBanItem;
import io.leasehold.proto.v1.LiftBans;
import io.leasehold.proto.v1.LiftBansResponse;
import io.leasehold.proto.v1.LiftLockDelayItem;
import io.leasehold.proto.v1.LiftLockDelays;
import io.leasehold.proto.v1.LiftLockDelaysResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RevokeResponse;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.SetPolicyResponse;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.proto.v1.StoredPolicy;
import io.leasehold.proto.v1.UnbanRequest;
import io.leasehold.proto.v1.UnbanResponse;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Applies the operators' commands: policies, bans (and the leader's lifting of timed ones) and
 * revocations. Each validates first, then records its changes in the entry's {@link Tx}; the
 * in-memory state follows after the commit.
 */
final class AdminCommands {
  private final KvStore store;
  private final CoreState state;

  AdminCommands(KvStore store, CoreState state) {
    this.store = store;
    this.state = state;
  }

  /**
   * Sets a namespace's policy (or the default) as a whole. Leases keep their terms until their next
   * renewal.
   */
  SetPolicyResponse setPolicy(Tx tx, SetPolicyRequest r) {
    PolicyTerms terms = AdminValidation.setPolicy(r);
    String namespace = r.getNamespace();
    byte[] stored =
        StoredPolicy.newBuilder()
            .setPolicy(r.getPolicy())
            .setRevision(tx.index)
            .setUpdatedAtMicros(tx.now)
            .build()
            .toByteArray();
    tx.extra.add(
        namespace.isEmpty()
            ? Change.put(Space.META, Policies.DEFAULT_KEY, stored)
            : Change.put(Space.POLICIES, LeaseCore.utf8(namespace), stored));
    tx.afterCommit(() -> state.policies.set(namespace, terms));
    tx.event(
        LeaseEvent.Type.POLICY_CHANGED,
        policyEventName(namespace),
        LeaseRecord.getDefaultInstance());
    return SetPolicyResponse.newBuilder()
        .setEffective(PolicyTerms.effective(r.getPolicy()))
        .setRevision(tx.index)
        .build();
  }

  DeletePolicyResponse deletePolicy(Tx tx, DeletePolicyRequest r) {
    AdminValidation.deletePolicy(r);
    String namespace = r.getNamespace();
    // An operator's command, not the lease hot path: a store read is fine here.
    boolean existed =
        namespace.isEmpty()
            ? store.get(Space.META, Policies.DEFAULT_KEY).isPresent()
            : store.get(Space.POLICIES, LeaseCore.utf8(namespace)).isPresent();
    if (existed) {
      tx.extra.add(
          namespace.isEmpty()
              ? Change.delete(Space.META, Policies.DEFAULT_KEY)
              : Change.delete(Space.POLICIES, LeaseCore.utf8(namespace)));
      tx.afterCommit(() -> state.policies.delete(namespace));
      tx.event(
          LeaseEvent.Type.POLICY_CHANGED,
          policyEventName(namespace),
          LeaseRecord.getDefaultInstance());
    }
    return DeletePolicyResponse.newBuilder().setExisted(existed).setRevision(tx.index).build();
  }

  /**
   * Bans a holder and ends every lease it holds, in this one entry: an event and a history record
   * for each, found through the holder index rather than a scan of every lease.
   */
  BanResponse ban(Tx tx, BanRequest r) {
    AdminValidation.ban(r);
    long until = AdminValidation.banEnd(r, tx.now);
    List<String> names = state.index.namesHeldBy(r.getHolder());
    for (String name : names) {
      if (!state.frozen(name)) { // a moving lease ends where its move takes it (NamespaceMoves)
        tx.end(name, tx.get(name).orElseThrow(), LeaseEvent.Type.BANNED, r.getReason());
      }
    }
    BanRecord ban =
        BanRecord.newBuilder()
            .setReason(r.getReason())
            .setBannedAtMicros(tx.now)
            .setUntilMicros(until)
            .setRevision(tx.index)
            .setLeasesEnded(names.size())
            .build();
    tx.extra.add(Change.put(Space.BANS, LeaseCore.utf8(r.getHolder()), ban.toByteArray()));
    tx.afterCommit(() -> state.bans.put(r.getHolder(), ban));
    // A timed ban is the leader's to lift; a ban without end replaces any timed one it had.
    tx.bars.add(
        until != 0
            ? TimedBar.set(TimedBar.Kind.BAN, r.getHolder(), tx.index, until - tx.now)
            : TimedBar.removed(TimedBar.Kind.BAN, r.getHolder()));
    return BanResponse.newBuilder().setBan(view(r.getHolder(), ban)).setRevision(tx.index).build();
  }

  UnbanResponse unban(Tx tx, UnbanRequest r) {
    AdminValidation.unban(r);
    boolean banned = state.bans.get(r.getHolder()).isPresent();
    if (banned) {
      tx.extra.add(Change.delete(Space.BANS, LeaseCore.utf8(r.getHolder())));
      tx.afterCommit(() -> state.bans.remove(r.getHolder()));
      tx.bars.add(TimedBar.removed(TimedBar.Kind.BAN, r.getHolder()));
    }
    return UnbanResponse.newBuilder().setWasBanned(banned).setRevision(tx.index).build();
  }

  /**
   * Lifts the timed bans the leader found due on its monotonic clock, but only a ban that is still
   * the one it saw (same revision): a ban set again meanwhile stays, and a deposed leader's late
   * proposal changes nothing. No stamped time is compared: the leader decides when time has passed.
   */
  LiftBansResponse liftBans(Tx tx, LiftBans c) {
    AdminValidation.liftBans(c);
    int lifted = 0;
    Set<String> seen = new HashSet<>();
    for (LiftBanItem item : c.getItemsList()) {
      Optional<BanRecord> ban = state.bans.get(item.getHolder());
      if (seen.add(item.getHolder())
          && ban.isPresent()
          && ban.get().getRevision() == item.getRevision()
          && ban.get().getUntilMicros() != 0) {
        tx.extra.add(Change.delete(Space.BANS, LeaseCore.utf8(item.getHolder())));
        tx.afterCommit(() -> state.bans.remove(item.getHolder()));
        tx.bars.add(TimedBar.removed(TimedBar.Kind.BAN, item.getHolder()));
        lifted++;
      }
    }
    return LiftBansResponse.newBuilder()
        .setLifted(lifted)
        .setSkipped(c.getItemsCount() - lifted)
        .setRevision(tx.index)
        .build();
  }

  /**
   * Lifts the lock-delays the leader found due on its monotonic clock, each only if the name's bar
   * is still the one set by the ending at the item's revision (the Expire guard's counterpart): a
   * name granted and barred again meanwhile keeps its new bar, and a deposed leader's late proposal
   * changes nothing.
   */
  LiftLockDelaysResponse liftLockDelays(Tx tx, LiftLockDelays c) {
    AdminValidation.liftLockDelays(c);
    int lifted = 0;
    for (LiftLockDelayItem item : c.getItemsList()) {
      Optional<StoredLockDelay> bar = tx.lockDelay(item.getName());
      if (bar.isPresent()
          && bar.get().getRevision() == item.getRevision()
          && !state.frozen(item.getName())) {
        tx.clearLockDelay(item.getName());
        lifted++;
      }
    }
    return LiftLockDelaysResponse.newBuilder()
        .setLifted(lifted)
        .setSkipped(c.getItemsCount() - lifted)
        .setRevision(tx.index)
        .build();
  }

  /** Ends a live lease whoever holds it (only the one with {@code token}, if given). */
  RevokeResponse revoke(Tx tx, RevokeRequest r) {
    AdminValidation.revoke(r);
    if (r.getToken() >= tx.token) {
      throw new InvalidArgumentException(
          "token",
          "token " + r.getToken() + " was never issued (the next token is " + tx.token + ")");
    }
    RevokeResponse.Builder reply = RevokeResponse.newBuilder().setRevision(tx.index);
    Optional<LeaseRecord> current = tx.get(r.getName());
    if (current.isEmpty() || (r.getToken() != 0 && current.get().getToken() != r.getToken())) {
      return reply.setOutcome(Outcome.NOT_HELD).build();
    }
    tx.end(r.getName(), current.get(), LeaseEvent.Type.REVOKED, r.getReason());
    return reply
        .setOutcome(Outcome.REVOKED)
        .setLease(LeaseViews.toLease(r.getName(), current.get(), OptionalLong.empty()))
        .build();
  }

  /** Watchers under "namespace/" see their namespace's policy change; the default's is named "". */
  static String policyEventName(String namespace) {
    return namespace.isEmpty() ? "" : namespace + "/";
  }

  static Ban view(String holder, BanRecord b) {
    Ban.Builder v =
        Ban.newBuilder()
            .setHolder(holder)
            .setReason(b.getReason())
            .setBannedAt(Times.timestamp(b.getBannedAtMicros()))
            .setRevision(b.getRevision())
            .setLeasesEnded(b.getLeasesEnded());
    if (b.getUntilMicros() != 0) {
      v.setUntil(Times.timestamp(b.getUntilMicros()));
    }
    return v.build();
  }
}
