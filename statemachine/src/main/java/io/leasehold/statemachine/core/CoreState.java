package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * What the apply loop keeps in memory, in step with the store after each commit, so that applying
 * an entry reads no store: the live leases and their index, the compiled policies, the bans, the
 * lock-delays and the history's sequence bounds. Rebuilt from the store by {@link #load} when the
 * core starts or a snapshot replaced the store. Apply thread only, except where a class says
 * otherwise.
 */
final class CoreState {
  /** Every live lease (a RocksDB read per lease touched was half the cost of a renewal). */
  final LeaseTable leases = new LeaseTable();

  final LeaseIndex index = new LeaseIndex();
  final Policies policies = new Policies();
  final Bans bans = new Bans();
  final LockDelays lockDelays = new LockDelays();
  final LeaseHistory history = new LeaseHistory();
  final Counters counters = new Counters();
  final AppliedRequests requests = new AppliedRequests();
  final Sessions sessions = new Sessions();
  final Offers offers = new Offers();

  /** {@code leases.size()}, for readers on other threads (the metrics endpoint). */
  volatile int liveLeases;

  /**
   * The namespaces a move froze in this group (kept by {@link Placements}): nothing the group
   * decides changes their state until the move ends.
   */
  final java.util.Set<String> frozen = new java.util.HashSet<>(0);

  /** Whether {@code name} is in a namespace a move froze in this group. */
  boolean frozen(String name) {
    if (frozen.isEmpty()) {
      return false;
    }
    int slash = name.indexOf('/');
    return slash > 0 && frozen.contains(name.substring(0, slash));
  }

  void load(KvStore store) {
    leases.clear();
    index.clear();
    sessions.load(store);
    List<Map.Entry<String, LeaseRecord>> loaded = new ArrayList<>();
    store.read(
        view -> {
          view.scan(
              Space.LEASES,
              new byte[0],
              new byte[0],
              (key, value) -> {
                loaded.add(
                    Map.entry(new String(key, StandardCharsets.UTF_8), LeaseCore.parse(value)));
                return true;
              });
          return null;
        });
    // In grant order, as the apply thread adds them: the index then only appends.
    loaded.sort(Comparator.comparingLong(e -> e.getValue().getToken()));
    for (Map.Entry<String, LeaseRecord> e : loaded) {
      LeaseRecord lease = e.getValue();
      String holder = index.holder(lease.getHolder());
      if (holder != lease.getHolder()) {
        lease =
            lease.toBuilder()
                .setHolder(holder)
                .build(); // one string per holder, as applied leases share it
      }
      leases.put(e.getKey(), lease);
      index.add(e.getKey(), lease);
      sessions.leaseChanged(e.getKey(), null, lease);
    }
    liveLeases = leases.size();
    policies.load(store);
    bans.load(store);
    lockDelays.load(store);
    offers.load(store);
    history.load(store);
    requests.load(store);
  }
}
