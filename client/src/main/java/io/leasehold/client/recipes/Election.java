package io.leasehold.client.recipes;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseTransition;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchCompactedException;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Leader election on one lease: the candidate that holds the lease named {@link #name()} leads, and
 * its lease's fencing token is the leadership's token ({@link LeaseholdClient#election}).
 *
 * <pre>{@code
 * Election election = client.election("election/billing");
 * election.addListener(new LeaderListener() {
 *   public void takeLeadership(long token) { scheduler.start(token); }  // fence every write with token
 *   public void revokeLeadership() { scheduler.stop(); }
 * });
 * election.observe(leader -> log.info("leader now {}", leader));  // anyone may observe
 * Lease leadership = election.campaign("10.0.0.7:8080").join();   // waits until this candidate leads
 * while (election.isLeader()) {
 *   store.write(batch, leadership.token());
 * }
 * election.resign().join();                                       // the next candidate leads
 * }</pre>
 *
 * <p>Safety: leadership is the lease, so two candidates never hold it at once on the cluster, and a
 * candidate counts itself leader only while its lease is HELD and within the SDK's validity (the
 * send time of its last successful renewal + TTL − a drift margin, never later than the cluster's
 * deadline): a later leader is granted the name only after the cluster freed it, so the validities
 * of two leaders do not overlap, and the later one's token is larger. {@link #isLeader()} already
 * turns false in JEOPARDY (a renewal is late), before the lease is LOST. What timing cannot cover
 * (a pause after checking {@code isLeader()}) the token covers: send it with every write.
 *
 * <p>A campaign is one attempt: after leadership ends (resigned, lost) the candidate campaigns
 * again by calling {@link #campaign} again. Thread-safe.
 */
public final class Election implements AutoCloseable {
  private final LeaseholdClient client;
  private final String name;
  private final LeaseOptions options;
  private final List<LeaderListener> listeners = new CopyOnWriteArrayList<>();

  // Guarded by this.
  private CompletableFuture<Lease> pending;
  private Lease lease;
  private boolean told; // what the listeners were last told: leading or not

  private Election(LeaseholdClient client, String name, LeaseOptions options) {
    this.client = Objects.requireNonNull(client, "client");
    this.name = Objects.requireNonNull(name, "name");
    this.options = Objects.requireNonNull(options, "options").waitIndefinitely();
  }

  /**
   * An election on the lease {@code name}, whose leadership lives with the client's session.
   *
   * @param client the client campaigning or observing
   * @param name the lease name that stands for the leadership, e.g. {@code election/billing}
   * @return the election
   */
  public static Election of(LeaseholdClient client, String name) {
    return new Election(client, name, LeaseOptions.defaults());
  }

  /**
   * An election whose leadership lease is acquired with {@code options} (e.g. a TTL of its own);
   * any wait bound in them is ignored, since a campaign waits until it leads.
   *
   * @param client the client campaigning or observing
   * @param name the lease name that stands for the leadership
   * @param options the lease options of the leadership
   * @return the election
   */
  public static Election of(LeaseholdClient client, String name, LeaseOptions options) {
    return new Election(client, name, options);
  }

  /**
   * The lease name that stands for the leadership.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * Campaigns without a value. See {@link #campaign(String)}.
   *
   * @return completes with the leadership's lease once this candidate leads
   */
  public CompletableFuture<Lease> campaign() {
    return campaign(options);
  }

  /**
   * Campaigns: waits (through a watch, not polling) until this candidate holds the leadership, and
   * completes with its lease; the lease's token is the leadership's fencing token. {@code value}
   * (e.g. this candidate's address) is stored as the lease's address, where {@link #leader()},
   * observers and routing tables see it. Cancelling the future withdraws the candidacy; a
   * leadership granted as it was cancelled is released.
   *
   * @param value what observers learn about this leader, e.g. its address
   * @return completes with the leadership's lease once this candidate leads
   * @throws IllegalStateException if this election is already campaigning or leading
   */
  public CompletableFuture<Lease> campaign(String value) {
    return campaign(options.withAddress(Objects.requireNonNull(value, "value")));
  }

  private CompletableFuture<Lease> campaign(LeaseOptions withValue) {
    CompletableFuture<Lease> acquiring;
    synchronized (this) {
      if ((pending != null && !pending.isDone()) || (lease != null && !lease.state().isFinal())) {
        throw new IllegalStateException("election " + name + ": already campaigning or leading");
      }
      acquiring = client.acquire(name, withValue);
      pending = acquiring;
      lease = null;
    }
    CompletableFuture<Lease> out = acquiring.thenApply(this::install);
    out.whenComplete(
        (l, e) -> {
          if (out.isCancelled()) {
            acquiring.cancel(false);
          }
        });
    return out;
  }

  private Lease install(Lease won) {
    synchronized (this) {
      if (pending == null) { // resigned while the grant was on its way
        won.release();
        throw new IllegalStateException(
            "election " + name + ": resigned before the leadership was granted");
      }
      lease = won;
    }
    won.addListener(this::onTransition);
    tell();
    return won;
  }

  private void onTransition(LeaseTransition t) {
    tell();
  }

  /** Tells the listeners if leading changed since they were last told. */
  private void tell() {
    long token;
    synchronized (this) {
      boolean now = isLeader();
      if (now == told) {
        return;
      }
      told = now;
      token = now ? lease.token() : 0;
    }
    for (LeaderListener l : listeners) {
      if (token != 0) {
        l.takeLeadership(token);
      } else {
        l.revokeLeadership();
      }
    }
  }

  /**
   * Whether this candidate leads now: its lease is HELD (renewals on time) and within its validity.
   * False as soon as a renewal is late (JEOPARDY), not only once the lease is lost.
   *
   * @return whether this candidate may act as leader
   */
  public synchronized boolean isLeader() {
    return lease != null && lease.state() == LeaseState.HELD && lease.isValid();
  }

  /**
   * The fencing token of this candidate's leadership, while it leads.
   *
   * @return the token, or empty unless {@link #isLeader()}
   */
  public synchronized OptionalLong token() {
    return isLeader() ? OptionalLong.of(lease.token()) : OptionalLong.empty();
  }

  /**
   * The leadership lease this candidate won, while it has one that has not ended (it may be in
   * JEOPARDY: check {@link #isLeader()} before acting).
   *
   * @return the lease, if this candidate won and the lease has not ended
   */
  public synchronized Optional<Lease> leadership() {
    return Optional.ofNullable(lease).filter(l -> !l.state().isFinal());
  }

  /**
   * Gives up: withdraws a campaign under way, or releases the leadership so the next candidate
   * leads. Listeners are told {@link LeaderListener#revokeLeadership()} first if this candidate
   * led. Completes when the cluster has answered (at once if there was nothing to give up).
   *
   * @return completes when the leadership is released
   */
  public CompletableFuture<Void> resign() {
    CompletableFuture<Lease> campaign;
    Lease held;
    synchronized (this) {
      campaign = pending;
      held = lease;
      pending = null;
      lease = null;
    }
    tell();
    if (campaign != null && !campaign.isDone()) {
      campaign.cancel(false);
    }
    if (held == null || held.state().isFinal()) {
      return CompletableFuture.completedFuture(null);
    }
    return held.release();
  }

  /**
   * Asks the cluster who leads now (anyone may ask, candidate or not).
   *
   * @return completes with the leader, or empty while no one leads
   */
  public CompletableFuture<Optional<Leader>> leader() {
    return client.get(name).thenApply(l -> l.map(Election::leaderOf));
  }

  /**
   * Follows the leadership: {@code observer} is told the leader as of now, then every change (a new
   * leader, a new value, no leader), in order, until the returned watch is closed. Anyone may
   * observe, candidate or not. If the observer falls so far behind that the cluster's history no
   * longer holds its place (a long partition of this client), it lists again and is told the leader
   * as of then, if it differs from the last one it was told, and follows on from there.
   *
   * @param observer told of each leader
   * @return completes with the watch once it is set up; close it to stop observing
   */
  public CompletableFuture<Watch> observe(LeaderObserver observer) {
    Observation observation = new Observation(Objects.requireNonNull(observer, "observer"));
    return observation.list().thenApply(v -> observation);
  }

  /**
   * Resigns without waiting for the cluster's answer: the leadership ends at its TTL if the release
   * is lost.
   */
  @Override
  public void close() {
    resign();
  }

  /**
   * Adds a listener for this candidate's leadership; told at once if this candidate leads now.
   *
   * @param listener told when leadership starts and stops
   */
  public void addListener(LeaderListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    OptionalLong now = token();
    if (now.isPresent()) {
      listener.takeLeadership(now.getAsLong());
    }
  }

  /**
   * Removes a listener.
   *
   * @param listener the listener to remove
   * @return whether it had been added
   */
  public boolean removeListener(LeaderListener listener) {
    return listeners.remove(listener);
  }

  private static Leader leaderOf(LeaseInfo info) {
    return new Leader(info.holder(), info.token(), info.attributes().address());
  }

  /**
   * An observer's watch on the leadership name: tells only real changes, and lists again (then
   * watches from the listing) when the cluster's history no longer holds the watch's place.
   */
  private final class Observation implements Watch, WatchListener {
    private static final long RELIST_RETRY_MILLIS = 1000;

    private final LeaderObserver observer;
    // Guarded by this.
    private Optional<Leader> last;
    private Watch current;
    private boolean closed;

    Observation(LeaderObserver observer) {
      this.observer = observer;
    }

    /**
     * Lists the leadership name, tells the observer if it changed, and watches from the listing on.
     */
    CompletableFuture<Void> list() {
      return client
          .list(name)
          .thenAccept(
              listing -> {
                Optional<Leader> now =
                    listing.leases().stream()
                        .filter(l -> l.name().equals(name))
                        .findFirst()
                        .map(Election::leaderOf);
                synchronized (this) {
                  if (closed) {
                    return;
                  }
                  tell(now);
                  current = client.watch(WatchOptions.of(name).withStartAfter(listing), this);
                }
              });
    }

    private void relist() {
      list()
          .exceptionally(
              e -> {
                // The cluster is out of reach for longer than the client's request timeout: try
                // again.
                synchronized (this) {
                  if (!closed) {
                    CompletableFuture.delayedExecutor(RELIST_RETRY_MILLIS, TimeUnit.MILLISECONDS)
                        .execute(this::relist);
                  }
                }
                return null;
              });
    }

    private void tell(Optional<Leader> next) {
      if (last == null || !next.equals(last)) {
        last = next;
        observer.onLeader(next);
      }
    }

    @Override
    public synchronized void onEvent(WatchEvent event) {
      if (closed || !event.name().equals(name)) {
        return; // the prefix also matches longer names
      }
      if (event.endsLease()) {
        tell(Optional.empty());
      } else if (event.lease().isPresent()) {
        tell(event.lease().map(Election::leaderOf));
      }
    }

    @Override
    public void onError(LeaseholdException error) {
      synchronized (this) {
        if (closed) {
          return;
        }
        if (!(error instanceof WatchCompactedException)) {
          closed = true; // refused by the cluster: nothing to resume
          return;
        }
      }
      relist();
    }

    @Override
    public synchronized long revision() {
      return current == null ? 0 : current.revision();
    }

    @Override
    public synchronized boolean isClosed() {
      return closed;
    }

    @Override
    public void close() {
      Watch w;
      synchronized (this) {
        closed = true;
        w = current;
      }
      if (w != null) {
        w.close();
      }
    }
  }
}
