package io.leasehold.client;

import io.leasehold.client.internal.AdminCalls;
import io.leasehold.client.internal.ClientCore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Operators' controls ({@link LeaseholdClient#admin()}): per-namespace policy, bans, revocation and
 * the history of ended leases. Every change is a replicated command; reads are linearizable.
 * Failures are those of the client's other calls ({@link InvalidRequestException} for bad input,
 * {@link ClusterUnavailableException} when no node answered).
 */
public final class LeaseholdAdmin {
  private final AdminCalls calls;

  LeaseholdAdmin(ClientCore core) {
    this.calls = new AdminCalls(core);
  }

  /**
   * The policy of {@code namespace} ({@code ""}: the default policy) and the policy in force there.
   *
   * @param namespace the namespace ({@code ""}: the default policy)
   * @return completes with the namespace's own policy and the one in force
   */
  public CompletableFuture<PolicyInfo> policy(String namespace) {
    return calls.policy(namespace);
  }

  /**
   * Every stored policy: the default ({@code ""}) first, then namespaces in order.
   *
   * @return completes with the stored policies
   */
  public CompletableFuture<List<PolicyInfo>> policies() {
    return calls.policies();
  }

  /**
   * Replaces the policy of {@code namespace} as a whole (fields left unset take the built-in
   * values); completes with the policy now in force there.
   *
   * @param namespace the namespace ({@code ""}: the default policy)
   * @param policy the policy, replacing the namespace's as a whole
   * @return completes with the policy now in force
   */
  public CompletableFuture<Policy> setPolicy(String namespace, Policy policy) {
    return calls.setPolicy(namespace, policy);
  }

  /**
   * Removes the policy of {@code namespace}; completes with whether it had one.
   *
   * @param namespace the namespace ({@code ""}: the default policy)
   * @return completes with whether it had a policy of its own
   */
  public CompletableFuture<Boolean> deletePolicy(String namespace) {
    return calls.deletePolicy(namespace);
  }

  /**
   * Bans {@code holder}: it cannot acquire or renew, and its live leases end at once (reason
   * BANNED). With a duration the ban is lifted by the leader when it is due; without, it holds
   * until {@link #unban}.
   *
   * @param holder the holder identity to ban
   * @param reason why, recorded in the history and the audit
   * @param duration how long the ban holds (empty: until lifted)
   * @return completes with the ban as stored
   */
  public CompletableFuture<BanInfo> ban(String holder, String reason, Optional<Duration> duration) {
    return calls.ban(holder, reason, duration);
  }

  /**
   * Lifts the ban of {@code holder}; completes with whether it was banned.
   *
   * @param holder the banned holder identity
   * @return completes with whether it was banned
   */
  public CompletableFuture<Boolean> unban(String holder) {
    return calls.unban(holder);
  }

  /**
   * Every ban in force, in holder order, read page by page.
   *
   * @return completes with the bans in force
   */
  public CompletableFuture<List<BanInfo>> bans() {
    return calls.bans();
  }

  /**
   * Ends the live lease on {@code name} whoever holds it (reason REVOKED); with a non-zero {@code
   * token}, only if that is the lease's token. Completes with the lease as it was, or empty if no
   * such lease was held.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param reason why, recorded in the history and the audit
   * @param token the lease's fencing token (0: whatever token it has)
   * @return completes with the lease as it was, or empty if no such lease was held
   */
  public CompletableFuture<Optional<LeaseInfo>> revoke(String name, String reason, long token) {
    return calls.revoke(name, reason, token);
  }

  /**
   * The leases on {@code name} that ended, newest first (at most {@code limit}; 0: all that is
   * kept).
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param limit the most entries to return (0: all that are kept)
   * @return completes with the ended leases, newest first
   */
  public CompletableFuture<List<EndedLease>> history(String name, int limit) {
    return calls.history(name, limit);
  }

  /**
   * The leases {@code holder} held that ended, newest first (at most {@code limit}; 0: all that is
   * kept).
   *
   * @param holder the holder identity whose ended leases to list
   * @param limit the most entries to return (0: all that are kept)
   * @return completes with the ended leases, newest first
   */
  public CompletableFuture<List<EndedLease>> historyOfHolder(String holder, int limit) {
    return calls.historyOfHolder(holder, limit);
  }

  /**
   * The live sessions, in id order: every holder's, or one holder's.
   *
   * @param holder whose sessions to list; empty: every holder's
   * @return completes with the sessions (their attached leases are not counted here)
   */
  public CompletableFuture<List<SessionInfo>> sessions(String holder) {
    return calls.sessions(holder);
  }

  /**
   * One session, with the names of the leases attached to it, if it is live.
   *
   * @param id the session's id
   * @return completes with the session, or empty if it expired, was closed or never existed
   */
  public CompletableFuture<Optional<SessionDetail>> session(long id) {
    return calls.session(id);
  }

  /**
   * Closes a session: it and every lease attached to it end in one replicated step (reason
   * SESSION_CLOSED, no lock-delay). With authentication on, only its holder or an admin over every
   * name may.
   *
   * @param id the session's id
   * @return completes with the number of leases that ended with it, or -1 if no such session was
   *     live
   */
  public CompletableFuture<Long> closeSession(long id) {
    return calls.closeSession(id);
  }
}
