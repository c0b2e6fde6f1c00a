package io.leasehold.client.recipes;

import io.leasehold.client.AttributeUpdate;
import io.leasehold.client.Conflict;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseTransition;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Rejected;
import io.leasehold.client.internal.SerialExecutor;
import io.leasehold.client.internal.SharedExecutors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A member of a partition group ({@link LeaseholdClient#partitions}): the members of a group share
 * partitions {@code 0..n-1}, each owning a contiguous, balanced range (⌊n/m⌋ or ⌈n/m⌉ partitions
 * for m members), and the partitions move when members join or leave.
 *
 * <p>Membership is a lease {@code <namespace>/<group>/members/<id>} (the id is the client's holder
 * identity; its metadata records n); ownership of partition k is an exclusive lease {@code
 * <namespace>/<group>/p/<k>}, carrying the member's address. Each member keeps one List+Watch view
 * of the group and reconciles on every change: it hands each partition outside its range to the
 * live member whose range it is in by a <em>transfer</em> (one replicated step, a larger token, the
 * name never free), acquires the free partitions of its range, and takes up the partitions handed
 * to it. It calls {@link PartitionListener#onRevoked} before the handoff is sent, and also as soon
 * as a partition's lease is in JEOPARDY or LOST; since ownership is a lease, two members never hold
 * one partition at once whatever the timing.
 *
 * <pre>{@code
 * try (LeaseholdClient client = LeaseholdClient.builder()
 *         .endpoints("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400")
 *         .holder("runner-7")
 *         .build()) {
 *   PartitionListener work = new PartitionListener() {
 *     public void onAssigned(int partition, long token) { consumers.start(partition, token); }
 *     public void onRevoked(int partition) { consumers.stop(partition); }
 *   };
 *   try (PartitionMember member = client.partitions("orders", 64, work,
 *           PartitionOptions.defaults().withAddress("10.0.1.7:8980")).join()) {
 *     // Route a key to whoever owns its partition (crc32(key) % 64).
 *     Optional<PartitionOwner> owner = member.ownerOf("customer-42");
 *     // This member's partitions and the fencing tokens to write with.
 *     SortedMap<Integer, Long> mine = member.owned();
 *     awaitShutdown();
 *   } // close(): hands its partitions to the others, then leaves the group
 * }
 * }</pre>
 *
 * <p>A client may be a member of a group once. Every member of a group must use the same n: joining
 * with another fails. Thread-safe; the listener is called one call at a time, in order, on the
 * SDK's shared callback threads (a member has no thread of its own).
 */
public final class PartitionMember implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PartitionMember.class);

  /** The most partitions a group may have: each is a lease, reconciled on every change. */
  public static final int MAX_PARTITIONS = 65_536;

  private final LeaseholdClient client;
  private final String group;
  private final int count;
  private final PartitionListener listener;
  private final PartitionOptions options;
  private final String me;

  /**
   * The JVM's SDK threads: the member's steps run one at a time on them, its timers on their timer.
   */
  private final SharedExecutors shared = SharedExecutors.acquire();

  private final SerialExecutor loop = new SerialExecutor(shared.callbacks());
  private final Executor loopExecutor = this::onLoop;
  private volatile boolean loopStopped;
  private ScheduledFuture<?> ticks;
  private final PartitionView view;
  private final AtomicBoolean reconcileQueued = new AtomicBoolean();
  private final CompletableFuture<Void> left = new CompletableFuture<>();
  private final Map<Integer, Lease> assigned = new ConcurrentHashMap<>();
  // The rest is touched on the loop only (one step at a time).
  private final Map<Integer, Owned> owned = new HashMap<>();
  private final Set<Integer> busy = new HashSet<>();
  private final Map<Integer, Long> givenAway = new HashMap<>();
  private Lease membership;
  private boolean membershipBusy;
  private boolean leaving;
  private boolean membershipReleased;
  private boolean running;
  private boolean stopped;
  private ScheduledFuture<?> leaveDeadline;

  /**
   * A partition lease this member holds; {@code handingOff} once revoked for a handoff or release.
   */
  private static final class Owned {
    final Lease lease;
    boolean assigned;
    boolean handingOff;

    Owned(Lease lease) {
      this.lease = lease;
    }
  }

  private PartitionMember(
      LeaseholdClient client,
      String group,
      int count,
      PartitionListener listener,
      PartitionOptions options) {
    this.client = client;
    this.group = group;
    this.count = count;
    this.listener = listener;
    this.options = options;
    this.me = client.holder();
    this.view =
        new PartitionView(
            client,
            prefix(options, group),
            this::requestReconcile,
            shared.timer(),
            options.reconcileInterval().toMillis());
  }

  /**
   * {@link #join(LeaseholdClient, String, int, PartitionListener, PartitionOptions)} with default
   * options.
   *
   * @param client the client whose holder identity is the member's id
   * @param group the group's name (not starting or ending with {@code /})
   * @param n the number of partitions, the same for every member
   * @param listener told when this member starts and stops owning a partition
   * @return completes with the member once it joined
   */
  public static CompletableFuture<PartitionMember> join(
      LeaseholdClient client, String group, int n, PartitionListener listener) {
    return join(client, group, n, listener, PartitionOptions.defaults());
  }

  /**
   * Joins {@code group} as {@code client}'s holder identity and starts taking a share of its
   * partitions. Fails with {@link IllegalArgumentException} if live members of the group use
   * another number of partitions, and with {@link IllegalStateException} if this client is already
   * a member of the group.
   *
   * @param client the client whose holder identity is the member's id
   * @param group the group's name (not starting or ending with {@code /})
   * @param n the number of partitions, the same for every member
   * @param listener told when this member starts and stops owning a partition
   * @param options namespace, address and timings
   * @return completes with the member once it joined
   */
  public static CompletableFuture<PartitionMember> join(
      LeaseholdClient client,
      String group,
      int n,
      PartitionListener listener,
      PartitionOptions options) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(options, "options");
    if (group.isEmpty() || group.startsWith("/") || group.endsWith("/")) {
      throw new IllegalArgumentException(
          "group: must be non-empty and not start or end with /, got \"" + group + "\"");
    }
    if (n < 1 || n > MAX_PARTITIONS) {
      throw new IllegalArgumentException("n: must be 1-" + MAX_PARTITIONS + ", got " + n);
    }
    return new PartitionMember(client, group, n, listener, options).start();
  }

  private CompletableFuture<PartitionMember> start() {
    CompletableFuture<PartitionMember> joined =
        client
            .list(prefix(options, group) + PartitionView.MEMBERS)
            .thenCompose(
                listing -> {
                  for (LeaseInfo m : listing.leases()) {
                    Optional<Integer> theirs = PartitionView.partitionCount(m);
                    if (!theirs.equals(Optional.of(count)) && !m.holder().equals(me)) {
                      throw mismatch(
                          m.holder() + " (" + theirs.map(String::valueOf).orElse("none") + ")");
                    }
                  }
                  return client.tryAcquire(memberName(), memberOptions());
                })
            .thenComposeAsync(
                result -> {
                  if (result instanceof Granted granted) {
                    adoptMembership(granted.lease());
                    return view.start();
                  }
                  if (result instanceof Conflict conflict && conflict.holder().equals(me)) {
                    throw new IllegalStateException(
                        "this client (" + me + ") is already a member of partition group " + group);
                  }
                  if (result instanceof Rejected rejected) {
                    throw new IllegalStateException(
                        "joining partition group "
                            + group
                            + " was refused: "
                            + rejected.rejection().message());
                  }
                  throw new IllegalStateException(
                      "the membership "
                          + memberName()
                          + " is held by "
                          + ((Conflict) result).holder());
                },
                loopExecutor)
            .thenApplyAsync(
                v -> {
                  List<String> others = view.disagreeing(count);
                  if (!others.isEmpty()) {
                    throw mismatch(String.join(", ", others));
                  }
                  running = true;
                  scheduleTicks();
                  requestReconcile();
                  log.info("joined partition group {} as {} ({} partitions)", group, me, count);
                  return this;
                },
                loopExecutor);
    joined.whenCompleteAsync(
        (m, err) -> {
          if (err != null) {
            Lease mine = membership;
            if (mine != null) {
              safe(mine::release);
            }
            stopNow();
          }
        },
        loopExecutor);
    return joined;
  }

  private IllegalArgumentException mismatch(String others) {
    return new IllegalArgumentException(
        "partition group "
            + group
            + " has "
            + count
            + " partitions for this member, but live members"
            + " use another count: "
            + others
            + "; every member of a group must use the same number of partitions");
  }

  private void scheduleTicks() {
    long every = options.reconcileInterval().toMillis();
    ticks =
        shared
            .timer()
            .scheduleWithFixedDelay(this::requestReconcile, every, every, TimeUnit.MILLISECONDS);
  }

  /**
   * The group's name.
   *
   * @return the group
   */
  public String group() {
    return group;
  }

  /**
   * The number of partitions, n.
   *
   * @return the partition count
   */
  public int partitionCount() {
    return count;
  }

  /**
   * This member's id: its client's holder identity.
   *
   * @return the member id
   */
  public String memberId() {
    return me;
  }

  /**
   * The live members of the group as this member's view shows them, sorted (the order that gives
   * each its range).
   *
   * @return the members' ids
   */
  public List<String> members() {
    return view.members(count);
  }

  /**
   * The partitions this member owns now, with the fencing token of each: those assigned to it whose
   * lease is still valid on the client's clock at this call.
   *
   * @return partition to fencing token, in partition order
   */
  public SortedMap<Integer, Long> owned() {
    SortedMap<Integer, Long> out = new TreeMap<>();
    assigned.forEach(
        (k, lease) -> {
          if (lease.isValid()) {
            out.put(k, lease.token());
          }
        });
    return Collections.unmodifiableSortedMap(out);
  }

  /**
   * The partition of {@code key}: {@code crc32(UTF-8 key) % n}, as the routing table computes it
   * for 256 partitions.
   *
   * @param key the key
   * @return its partition, {@code 0..n-1}
   */
  public int partitionOf(String key) {
    return PartitionRanges.partitionOf(Objects.requireNonNull(key, "key"), count);
  }

  /**
   * The owner of {@code key}'s partition in this member's view, for routing.
   *
   * @param key the key
   * @return the owner, or empty if nobody holds the partition now (it is moving or being taken)
   */
  public Optional<PartitionOwner> ownerOf(String key) {
    return owner(partitionOf(key));
  }

  /**
   * The owner of {@code partition} in this member's view.
   *
   * @param partition the partition, {@code 0..n-1}
   * @return the owner, or empty if nobody holds the partition now
   */
  public Optional<PartitionOwner> owner(int partition) {
    if (partition < 0 || partition >= count) {
      throw new IllegalArgumentException(
          "partition: must be 0-" + (count - 1) + ", got " + partition);
    }
    return view.partition(partition)
        .map(l -> new PartitionOwner(partition, l.holder(), l.attributes().address(), l.token()));
  }

  /**
   * Leaves the group: ends the membership (so the others count this member out), hands each
   * partition to the member whose range it now falls in (or releases it if no member is left), then
   * stops. Partitions not handed over within the leave timeout are released. Idempotent.
   *
   * @return completes once this member owns nothing and has stopped
   */
  public CompletableFuture<Void> leave() {
    onLoop(
        () -> {
          if (stopped || leaving) {
            return;
          }
          leaving = true;
          log.info("leaving partition group {} as {}", group, me);
          leaveDeadline =
              shared
                  .timer()
                  .schedule(
                      () -> onLoop(this::leaveTimedOut),
                      options.leaveTimeout().toMillis(),
                      TimeUnit.MILLISECONDS);
          Lease m = membership;
          if (m == null || m.state().isFinal()) {
            membershipReleased = true;
            reconcile();
            return;
          }
          // Hand over only once the membership's end is applied: a member that sees a handoff has
          // then already counted this one out, and will not hand the partition back.
          safe(m::release)
              .whenCompleteAsync(
                  (v, err) -> {
                    membershipReleased = true;
                    reconcile();
                  },
                  loopExecutor);
        });
    return left.copy();
  }

  /**
   * {@link #leave()} and waits for it, up to the leave timeout and a second more; then stops
   * whatever is left (its leases end with the client's session or their TTL).
   */
  @Override
  public void close() {
    try {
      leave()
          .get(
              options.leaveTimeout().plus(Duration.ofSeconds(1)).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      onLoop(this::stopNow);
    } catch (ExecutionException | TimeoutException e) {
      onLoop(this::stopNow);
    }
  }

  private void requestReconcile() {
    if (reconcileQueued.compareAndSet(false, true)) {
      onLoop(
          () -> {
            reconcileQueued.set(false);
            reconcile();
          });
    }
  }

  /** Moves this member's holdings one step toward its range in the current view. */
  private void reconcile() {
    if (stopped || !running) {
      return;
    }
    if (client.isClosed()) {
      stopNow();
      return;
    }
    boolean member = !leaving && membership != null && !membership.state().isFinal();
    if (!leaving && !member && membership != null && !membershipBusy) {
      rejoin();
    }
    List<String> members = new ArrayList<>(view.members(count));
    if (!member) {
      members.remove(me);
    }
    boolean mayHandOff = !leaving || membershipReleased;
    for (int k = 0; k < count; k++) {
      if (busy.contains(k)) {
        continue;
      }
      Optional<String> target = PartitionRanges.targetOf(k, members, count);
      boolean mine = target.filter(me::equals).isPresent();
      Owned o = owned.get(k);
      if (o != null) {
        if (o.lease.state().isFinal()) {
          revoke(k, o);
          forget(k, o);
        } else if (mine && o.handingOff) {
          release(
              k,
              o); // a handoff failed and the partition is ours again: start over with a new token
        } else if (mine) {
          if (!o.assigned && o.lease.state() == LeaseState.HELD) {
            assign(k, o);
          }
        } else if (mayHandOff && target.isPresent()) {
          handOff(k, o, target.get());
        } else if (mayHandOff && leaving) {
          release(k, o);
        }
        continue;
      }
      Optional<LeaseInfo> held = view.partition(k);
      if (held.isEmpty()) {
        if (mine) {
          acquire(k, false);
        }
      } else if (held.get().holder().equals(me)
          && held.get().token() > givenAway.getOrDefault(k, 0L)) {
        acquire(
            k, true); // handed to this member: acquiring a name its holder holds returns that lease
      }
    }
    if (leaving && membershipReleased && owned.isEmpty() && busy.isEmpty()) {
      finish();
    }
  }

  private void acquire(int k, boolean takeUp) {
    busy.add(k);
    LeaseOptions opts =
        options
            .address()
            .map(a -> LeaseOptions.defaults().withAddress(a))
            .orElse(LeaseOptions.defaults());
    safe(() -> client.tryAcquire(view.partitionName(k), opts))
        .whenCompleteAsync(
            (result, err) -> {
              busy.remove(k);
              if (result instanceof Granted granted) {
                Lease lease = granted.lease();
                if (stopped) {
                  safe(lease::release);
                  return;
                }
                adopt(k, lease);
                // A transferred lease does not carry the giver's attributes: put this member's
                // address on it.
                options
                    .address()
                    .filter(a -> takeUp && !lease.attributes().address().equals(Optional.of(a)))
                    .ifPresent(a -> safe(() -> lease.update(AttributeUpdate.address(a))));
              } else if (err != null) {
                log.debug(
                    "acquiring partition {} of {} failed, retrying: {}", k, group, err.toString());
              }
              requestReconcile();
            },
            loopExecutor);
  }

  private void adopt(int k, Lease lease) {
    Owned o = new Owned(lease);
    owned.put(k, o);
    lease.addListener(t -> onLoop(() -> transition(k, o, t)));
  }

  private void transition(int k, Owned o, LeaseTransition t) {
    if (owned.get(k) != o) {
      return;
    }
    if (t.to() != LeaseState.HELD) {
      revoke(k, o); // JEOPARDY or worse: the lease may not be valid for long; stop using it now
    }
    if (t.to().isFinal() && !busy.contains(k)) {
      forget(k, o);
    }
    requestReconcile();
  }

  private void handOff(int k, Owned o, String target) {
    busy.add(k);
    revoke(k, o);
    o.handingOff = true;
    log.debug("handing partition {} of {} to {}", k, group, target);
    safe(() -> o.lease.transferTo(target))
        .whenCompleteAsync(
            (info, err) -> {
              busy.remove(k);
              if (err == null || o.lease.state().isFinal()) {
                forget(k, o);
              } else {
                log.debug(
                    "handing partition {} of {} to {} failed, retrying: {}",
                    k,
                    group,
                    target,
                    err.toString());
              }
              requestReconcile();
            },
            loopExecutor);
  }

  private void release(int k, Owned o) {
    busy.add(k);
    revoke(k, o);
    o.handingOff = true;
    safe(o.lease::release)
        .whenCompleteAsync(
            (v, err) -> {
              busy.remove(k);
              if (err == null || o.lease.state().isFinal()) {
                forget(k, o);
              }
              requestReconcile();
            },
            loopExecutor);
  }

  private void assign(int k, Owned o) {
    o.assigned = true;
    assigned.put(k, o.lease);
    try {
      listener.onAssigned(k, o.lease.token());
    } catch (RuntimeException e) {
      log.warn("onAssigned({}) of partition group {} threw", k, group, e);
    }
  }

  private void revoke(int k, Owned o) {
    if (!o.assigned) {
      return;
    }
    o.assigned = false;
    assigned.remove(k, o.lease);
    try {
      listener.onRevoked(k);
    } catch (RuntimeException e) {
      log.warn("onRevoked({}) of partition group {} threw", k, group, e);
    }
  }

  /**
   * Drops a lease this member no longer holds, remembering its token so a stale view does not bring
   * it back.
   */
  private void forget(int k, Owned o) {
    if (owned.remove(k, o)) {
      givenAway.merge(k, o.lease.token(), Math::max);
    }
  }

  private void adoptMembership(Lease lease) {
    membership = lease;
    lease.addListener(t -> requestReconcile());
  }

  private void rejoin() {
    membershipBusy = true;
    safe(() -> client.tryAcquire(memberName(), memberOptions()))
        .whenCompleteAsync(
            (result, err) -> {
              membershipBusy = false;
              if (result instanceof Granted granted && !stopped && !leaving) {
                log.info("rejoined partition group {} as {}", group, me);
                adoptMembership(granted.lease());
              } else if (result instanceof Granted granted) {
                safe(granted.lease()::release);
              }
              requestReconcile();
            },
            loopExecutor);
  }

  private void leaveTimedOut() {
    if (stopped) {
      return;
    }
    log.info(
        "leaving partition group {}: {} partitions not handed over in time, releasing them",
        group,
        owned.size());
    for (Map.Entry<Integer, Owned> e : new ArrayList<>(owned.entrySet())) {
      revoke(e.getKey(), e.getValue());
      safe(e.getValue().lease::release);
    }
    owned.clear();
    finish();
  }

  private void finish() {
    stopNow();
    log.info("left partition group {} as {}", group, me);
  }

  /**
   * Stops at once: revokes every partition (their leases end with the client or their TTL) and the
   * loop.
   */
  private void stopNow() {
    if (stopped) {
      return;
    }
    stopped = true;
    for (Map.Entry<Integer, Owned> e : owned.entrySet()) {
      revoke(e.getKey(), e.getValue());
    }
    if (leaveDeadline != null) {
      leaveDeadline.cancel(false);
    }
    if (ticks != null) {
      ticks.cancel(false);
    }
    view.close();
    loopStopped = true;
    shared.release();
    left.complete(null);
  }

  /**
   * Runs {@code task} on the member's loop, or here once the member has stopped (so completions
   * still clean up).
   */
  private void onLoop(Runnable task) {
    if (loopStopped) {
      task.run();
    } else {
      loop.execute(task);
    }
  }

  private LeaseOptions memberOptions() {
    LeaseOptions o =
        LeaseOptions.defaults().withMetadata(PartitionView.COUNT_KEY, String.valueOf(count));
    return options.address().map(o::withAddress).orElse(o);
  }

  private String memberName() {
    return prefix(options, group) + PartitionView.MEMBERS + me;
  }

  private static String prefix(PartitionOptions options, String group) {
    return options.namespace() + "/" + group + "/";
  }

  private static <T> CompletableFuture<T> safe(Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
