package io.leasehold.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A lease this client holds on a name, kept alive by the client's keep-alive loop until it is
 * released, lost, or the client closes.
 *
 * <p>Validity is judged on the client's monotonic clock: the lease is valid until the send time of
 * its last successful renewal + TTL − a drift margin, a deadline never later than the cluster's.
 * Check {@link #isValid()} before acting on the lease, and pass {@link #token()} to every resource
 * you write to, so that a resource can refuse a writer whose lease has ended without it noticing (a
 * GC pause, a slow network): see {@link FencingGuard}.
 *
 * <p>Thread-safe. {@link #close()} releases the lease if it is still held, so a handle fits
 * try-with-resources.
 */
public interface Lease extends AutoCloseable {
  /**
   * The leased name, e.g. {@code mailbox/$admin@proxy-01}.
   *
   * @return the name
   */
  String name();

  /**
   * The holder identity the lease was granted to (the client's).
   *
   * @return the holder identity
   */
  String holder();

  /**
   * The fencing token: the position of the grant in the cluster's log (the entry's index × 4096 +
   * the grant's place in the entry). Strictly larger for every later grant of any name.
   *
   * @return the fencing token
   */
  long token();

  /**
   * The TTL the cluster granted.
   *
   * @return the TTL; the cluster's default if the options gave none
   */
  Duration ttl();

  /**
   * The attributes as of the grant or the last {@link #update} through this handle.
   *
   * @return the address, metadata and status
   */
  LeaseAttributes attributes();

  /**
   * The current state. Moves to LOST as soon as the local deadline passes, even between timer
   * ticks.
   *
   * @return HELD, JEOPARDY, LOST or RELEASED
   */
  LeaseState state();

  /**
   * Whether the lease may still be acted on: HELD or JEOPARDY, and the local deadline not passed.
   *
   * @return whether the lease may be acted on
   */
  boolean isValid();

  /**
   * Time left before the local deadline; zero once the lease is no longer valid.
   *
   * @return the time left, never negative
   */
  Duration remaining();

  /**
   * Why the lease was lost, once it is {@link LeaseState#LOST}.
   *
   * @return why it was lost; empty unless it is LOST
   */
  Optional<LossReason> lossReason();

  /**
   * Why the cluster's policy refuses to renew the lease, while it does (for instance a TTL that a
   * tightened policy no longer allows): the lease is then in JEOPARDY at once and will be lost at
   * its deadline unless a renewal succeeds again. Empty while renewals succeed.
   *
   * @return the refusal, while renewals are refused
   */
  Optional<Rejection> renewalRejection();

  /**
   * Changes the lease's attributes (address, metadata, status) without changing its token.
   * Completes with the attributes now stored, or fails with {@link LeaseLostException} if the
   * cluster no longer holds the lease (the handle is then LOST).
   *
   * @param update what to change; absent parts stay as they are
   * @return completes with the attributes now stored
   * @throws IllegalStateException if the lease was released
   */
  CompletableFuture<LeaseAttributes> update(AttributeUpdate update);

  /**
   * Hands the lease to another holder in one replicated step: the cluster ends this lease (reason
   * TRANSFERRED) and grants {@code toHolder} the name with a new, larger token and the namespace's
   * default TTL, so the name is never free in between and this lease's token is refused from then
   * on. On success this handle becomes LOST with reason {@link LossReason#TRANSFERRED}. Fails with
   * {@link LeaseLostException} if the cluster no longer holds this lease, and with {@link
   * AcquireRejectedException} if the policy refuses the new holder (this lease is then still held).
   *
   * @param toHolder the identity that is to hold the name
   * @return completes with the new holder's lease
   * @throws IllegalStateException if the lease was released
   */
  CompletableFuture<LeaseInfo> transferTo(String toHolder);

  /**
   * Offers the lease to another holder, who must accept within {@code acceptWithin} ({@link
   * LeaseholdClient#acceptTransfer}): until then the lease stays this handle's, held and renewed as
   * before; on acceptance it moves as {@link #transferTo} moves it (this handle then learns it is
   * LOST at its next renewal). The cluster withdraws the offer at its deadline; a later offer or
   * transfer replaces it. Fails with {@link AcquireRejectedException} if the policy refuses the new
   * holder now.
   *
   * @param toHolder the identity the lease is offered to
   * @param acceptWithin how long it has to accept
   * @return completes with the offer's id, for {@link LeaseholdClient#acceptTransfer}
   */
  CompletableFuture<Long> offerTo(String toHolder, Duration acceptWithin);

  /**
   * The session this lease lives with: its TTL and renewals are the session's, and it ends when the
   * session does. 0 when it has a TTL of its own.
   *
   * @return the session's id, or 0
   */
  long session();

  /**
   * Ends the lease: the handle is RELEASED at once (it stops being valid and renewed), and the
   * cluster frees the name. Completes when the cluster has answered; fails with {@link
   * ClusterUnavailableException} if it could not be reached, in which case the lease simply expires
   * there after its TTL. Releasing a LOST lease is allowed (it does nothing more).
   *
   * @return completes when the cluster has answered
   * @throws IllegalStateException if {@code release()} was already called on this handle
   */
  CompletableFuture<Void> release();

  /**
   * Releases the lease if it is still held and waits (bounded by the client's request timeout) for
   * the cluster to answer; does nothing if it was already released or lost. Never throws: a release
   * the cluster did not receive ends with the lease's expiry.
   */
  @Override
  void close();

  /**
   * Adds a listener for this handle's state changes. A listener added after the handle reached a
   * final state is told about that final transition at once.
   *
   * @param listener told of each state change, in order
   */
  void addListener(LeaseListener listener);

  /**
   * Removes a listener; whether it was there.
   *
   * @param listener the listener to remove
   * @return whether it had been added
   */
  boolean removeListener(LeaseListener listener);

  /**
   * Completes (on the callback executor) with the transition into LOST or RELEASED.
   *
   * @return completes with the final transition
   */
  CompletableFuture<LeaseTransition> ended();
}
