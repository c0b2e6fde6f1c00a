package io.leasehold.server.api;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import io.leasehold.proto.v1.DeadlineExtension;
import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineQueryItem;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.DeadlineSource;
import io.leasehold.proto.v1.LeaderDeadline;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.Session;
import io.leasehold.server.raft.Consensus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The deadline a lease (or session) read shows: the one the leader's expiry ticker acts on.
 *
 * <p>Only the leader decides expiry, on its monotonic clock, and neither the moment it took over
 * (when it gave every lease a full TTL) nor a stall it made up for is in the log: a follower's
 * state cannot tell that a lease was extended. So the node that serves a read asks the leader
 * (itself when it leads) for the deadlines of the leases in the reply, and shows them with {@code
 * DEADLINE_SOURCE_LEADER} and the extensions' reasons. A stale read asks only when this node leads
 * (a stale read is one that must not wait for anyone); when there is no answer in {@link
 * #ASK_TIMEOUT} (no leader, an older one, one still taking over, or too many asks in flight from
 * this node), the read keeps the estimate the store gave it, {@code expires_at + grace_period} with
 * {@code DEADLINE_SOURCE_ESTIMATE}, which the leader never acts before.
 *
 * <p>The asking node counts the leader's remaining time from the moment it asked, so a deadline
 * from a follower is at most one round trip early, never late.
 */
final class LeaseDeadlines {
  static final java.time.Duration ASK_TIMEOUT = java.time.Duration.ofSeconds(1);

  private final Consensus consensus;

  LeaseDeadlines(Consensus consensus) {
    this.consensus = consensus;
  }

  /** The leases with the leader's deadlines where it gave them, in the same order. */
  CompletableFuture<List<Lease>> withDeadlines(List<Lease> leases, boolean stale) {
    return ask(
        leases,
        stale,
        l ->
            DeadlineQueryItem.newBuilder()
                .setName(l.getName())
                .setToken(l.getToken())
                .setSession(l.getSession())
                .build(),
        LeaseDeadlines::apply);
  }

  /** The sessions with the leader's deadlines where it gave them, in the same order. */
  CompletableFuture<List<Session>> withSessionDeadlines(List<Session> sessions, boolean stale) {
    return ask(
        sessions,
        stale,
        s -> DeadlineQueryItem.newBuilder().setSession(s.getId()).build(),
        LeaseDeadlines::apply);
  }

  private interface Apply<T> {
    T apply(T item, LeaderDeadline leader, long askedAtMicros);
  }

  private <T> CompletableFuture<List<T>> ask(
      List<T> items, boolean stale, Function<T, DeadlineQueryItem> question, Apply<T> apply) {
    if (items.isEmpty() || (stale && !consensus.isLeader())) {
      return CompletableFuture.completedFuture(items);
    }
    DeadlineQuery.Builder query = DeadlineQuery.newBuilder();
    items.forEach(i -> query.addItems(question.apply(i)));
    long askedAtMicros = wallClockMicros();
    CompletableFuture<DeadlineReply> answer;
    try {
      answer = consensus.leaderDeadlines(query.build());
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(items);
    }
    return answer
        .orTimeout(ASK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
        .handle(
            (reply, error) -> {
              if (error != null || reply.getItemsCount() != items.size()) {
                return items;
              }
              List<T> out = new ArrayList<>(items.size());
              for (int i = 0; i < items.size(); i++) {
                out.add(apply.apply(items.get(i), reply.getItems(i), askedAtMicros));
              }
              return out;
            });
  }

  /**
   * What a read shows of the leader's deadline: when, how long until then, and why it is later than
   * the estimate.
   */
  record Shown(Timestamp deadline, Duration remaining, List<DeadlineExtension> extensions) {}

  /**
   * The leader's deadline counted from when it was asked; extended as the leader says, each
   * extension with how much later it ends because of it. Empty when the leader keeps no deadline
   * for it. The leader's deadline may count from a renewal newer than the one the read saw ({@code
   * lastRenewRevision}): then its extensions, which explain the gap to the read's estimate, are not
   * the read's.
   */
  static Optional<Shown> shown(
      LeaderDeadline leader, long askedAtMicros, long estimateMicros, long lastRenewRevision) {
    if (!leader.getTracked()) {
      return Optional.empty();
    }
    long deadline = askedAtMicros + leader.getRemainingMicros();
    List<DeadlineExtension> extensions = new ArrayList<>();
    if (leader.getLastRenewRevision() == lastRenewRevision) {
      long extendedBy = Math.max(0, deadline - estimateMicros);
      long stalled = 0;
      for (DeadlineExtension e : leader.getExtensionsList()) {
        if (e.getReason() == DeadlineExtension.Reason.STALL) {
          stalled += micros(e.getBy());
        }
      }
      for (DeadlineExtension e : leader.getExtensionsList()) {
        // A leader change's fresh TTL: what the stalls do not explain.
        extensions.add(
            e.getReason() == DeadlineExtension.Reason.LEADER_CHANGE
                ? e.toBuilder().setBy(duration(Math.max(0, extendedBy - stalled))).build()
                : e);
      }
    }
    return Optional.of(
        new Shown(
            timestamp(deadline), duration(Math.max(0, deadline - wallClockMicros())), extensions));
  }

  static Lease apply(Lease lease, LeaderDeadline leader, long askedAtMicros) {
    long estimate =
        micros(lease.getExpiresAt())
            + (lease.hasGracePeriod() ? micros(lease.getGracePeriod()) : 0);
    return shown(leader, askedAtMicros, estimate, lease.getLastRenewRevision())
        .map(
            s ->
                lease.toBuilder()
                    .setDeadline(s.deadline())
                    .setDeadlineRemaining(s.remaining())
                    .setDeadlineSource(DeadlineSource.DEADLINE_SOURCE_LEADER)
                    .clearExtensions()
                    .addAllExtensions(s.extensions())
                    .build())
        .orElse(lease);
  }

  static Session apply(Session session, LeaderDeadline leader, long askedAtMicros) {
    return shown(
            leader, askedAtMicros, micros(session.getExpiresAt()), session.getLastRenewRevision())
        .map(
            s ->
                session.toBuilder()
                    .setDeadline(s.deadline())
                    .setDeadlineRemaining(s.remaining())
                    .setDeadlineSource(DeadlineSource.DEADLINE_SOURCE_LEADER)
                    .clearExtensions()
                    .addAllExtensions(s.extensions())
                    .build())
        .orElse(session);
  }

  static long wallClockMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static long micros(Timestamp t) {
    return t.getSeconds() * 1_000_000L + t.getNanos() / 1_000;
  }

  private static long micros(Duration d) {
    return d.getSeconds() * 1_000_000L + d.getNanos() / 1_000;
  }

  private static Timestamp timestamp(long micros) {
    return Timestamp.newBuilder()
        .setSeconds(Math.floorDiv(micros, 1_000_000L))
        .setNanos((int) Math.floorMod(micros, 1_000_000L) * 1_000)
        .build();
  }

  private static Duration duration(long micros) {
    return Duration.newBuilder()
        .setSeconds(micros / 1_000_000L)
        .setNanos((int) (micros % 1_000_000L) * 1_000)
        .build();
  }
}
