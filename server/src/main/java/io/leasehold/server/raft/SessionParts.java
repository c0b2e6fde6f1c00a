package io.leasehold.server.raft;

import io.leasehold.proto.v1.CloseSessionResponse;
import io.leasehold.proto.v1.CreateSessionPart;
import io.leasehold.proto.v1.EndSessionParts;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResponse;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.statemachine.core.LeaseCore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's session lives in the meta group; a lease group holds a <em>part</em> of it once a
 * lease in one of its namespaces is attached to it (docs/design/multi-raft.md, "Sessions"). The
 * meta group alone decides when a session ends (its leader's ticker, or a close); a part never
 * expires on its own clock, and ends, with its leases, once the meta group no longer holds the
 * session. So a client keeps one session and one keep-alive however many groups its leases are in,
 * and a lease attached in a lease group never ends before its session does.
 *
 * <ul>
 *   <li>Before a lease is attached in a lease group, the session is renewed in the meta group (so
 *       it lasts a whole TTL from the attachment, as an attachment in the meta group would make it)
 *       and the group is given a part of it, made from the session as the meta group holds it.
 *   <li>A keep-alive is applied by the meta group, then sent to each lease group this node's
 *       replica shows a part in, so that the parts' reads stay current and the reply counts every
 *       group's attached and ended leases.
 *   <li>A close ends the session in the meta group, then its parts in every lease group.
 *   <li>Every {@link GlobalSync#SWEEP}, each lease group's leader ends the parts whose sessions the
 *       meta group, as its node applied it, no longer holds: the expired ones, and closes whose
 *       second step did not reach the group.
 * </ul>
 */
final class SessionParts {
  private static final Logger LOG = LoggerFactory.getLogger(SessionParts.class);

  /** Parts a sweep ends in one entry at most. */
  static final int MAX_SWEPT = 1_000;

  private final Supplier<LeaseCore> meta;
  private final Function<LogCommand, CompletableFuture<LogReply>> proposeToMeta;
  private final Supplier<CompletableFuture<?>> metaCaughtUp;
  private final LeaseGroups groups;

  /** The parts this node made in groups it does not host, most recent first. */
  private final PartsMade partsMade = new PartsMade();

  /** The groups a sweep has an ending in flight in: one at a time each. */
  private final Set<Integer> sweeping = ConcurrentHashMap.newKeySet();

  SessionParts(
      Supplier<LeaseCore> meta,
      Function<LogCommand, CompletableFuture<LogReply>> proposeToMeta,
      Supplier<CompletableFuture<?>> metaCaughtUp,
      LeaseGroups groups) {
    this.meta = meta;
    this.proposeToMeta = proposeToMeta;
    this.metaCaughtUp = metaCaughtUp;
    this.groups = groups;
  }

  /** The session a command attaches a lease to, or 0. */
  static long attaches(LogCommand c) {
    return switch (c.getCommandCase()) {
      case ACQUIRE -> c.getAcquire().getSession();
      case ACQUIRE_MANY -> c.getAcquireMany().getSession();
      case TRANSFER -> c.getTransfer().getSession();
      default -> 0;
    };
  }

  /**
   * Before {@code command} attaches a lease to {@code session} in {@code group}: a grant renews the
   * session in the meta group (as its caller), and the group gets a part of the session if it has
   * none. A session the meta group no longer holds gets no part, and any part of it left in the
   * group is ended first, so the group refuses the attachment as the meta group would.
   */
  CompletableFuture<Void> prepare(GroupDoor group, LogCommand command, long session) {
    CompletableFuture<Boolean> ended;
    if (command.getCommandCase() == LogCommand.CommandCase.TRANSFER) {
      // The caller is the lease's holder, not the session's: nothing to renew on its behalf.
      ended = metaCaughtUp.get().thenApply(caughtUp -> meta.get().sessionEnded(session));
    } else {
      LogCommand keepAlive =
          LogCommand.newBuilder()
              .setCaller(command.getCaller())
              .setKeepAlive(KeepAliveRequest.newBuilder().addSessions(session))
              .build();
      ended =
          proposeToMeta
              .apply(keepAlive)
              .thenApply(
                  reply ->
                      reply.hasKeepAlive()
                          && reply.getKeepAlive().getResults(0).getOutcome() == Outcome.NOT_HELD);
    }
    return ended.thenCompose(
        gone -> {
          if (gone) {
            return end(group, List.of(session), false).thenApply(reply -> null);
          }
          if (hasPart(group, session)) {
            return CompletableFuture.completedFuture(null);
          }
          // The part is made from the meta group's record, as this node holds it once caught up.
          return metaCaughtUp
              .get()
              .thenCompose(
                  caughtUp -> {
                    Optional<StoredSession> s = meta.get().storedSession(session);
                    if (s.isEmpty()) {
                      return end(group, List.of(session), false).thenApply(reply -> null);
                    }
                    LogCommand create =
                        LogCommand.newBuilder()
                            .setCreateSessionPart(
                                CreateSessionPart.newBuilder()
                                    .setSession(session)
                                    .setHolder(s.get().getHolder())
                                    .setTtlMicros(s.get().getTtlMicros())
                                    .setHeartbeatMicros(s.get().getHeartbeatMicros()))
                            .build();
                    return group
                        .raiseFormat(meta.get().logFormat())
                        .thenCompose(raised -> group.propose(create))
                        .thenApply(
                            reply -> {
                              if (reply.hasSessionParts() && group.localCore().isEmpty()) {
                                partsMade.add(group.number(), session);
                              }
                              if (!reply.hasSessionParts()) {
                                throw new java.util.concurrent.CompletionException(
                                    new ConsensusUnavailableException(
                                        "lease group "
                                            + group.number()
                                            + " did not take a part of session "
                                            + session
                                            + ": "
                                            + reply,
                                        null));
                              }
                              return null;
                            });
                  });
        });
  }

  /**
   * The meta group's reply to a keep-alive, once each lease group this node's replica shows a part
   * of a renewed session in has renewed it too; the counts of attached and ended leases then cover
   * every group. A group that cannot take it now changes nothing: its parts last as long as their
   * sessions in any case, and the next keep-alive counts them.
   */
  CompletableFuture<LogReply> afterKeepAlive(LogReply reply) {
    if (!reply.hasKeepAlive() || !groups.any()) {
      return CompletableFuture.completedFuture(reply);
    }
    List<Long> renewed =
        reply.getKeepAlive().getResultsList().stream()
            .filter(r -> r.getOutcome() == Outcome.RENEWED)
            .map(KeepAliveResult::getSession)
            .toList();
    if (renewed.isEmpty()) {
      return CompletableFuture.completedFuture(reply);
    }
    List<CompletableFuture<KeepAliveResponse>> parts = new ArrayList<>();
    for (int number : groups.all()) {
      Optional<GroupDoor> g = groups.door(number);
      if (g.isEmpty()) {
        continue;
      }
      // A group this node does not host may hold parts other nodes made: it is sent every
      // renewed session, and answers for those it holds a part of.
      List<Long> here =
          g.get().localCore().isEmpty()
              ? renewed
              : renewed.stream().filter(id -> hasPart(g.get(), id)).toList();
      if (here.isEmpty()) {
        continue;
      }
      LogCommand keepAlive =
          LogCommand.newBuilder()
              .setKeepAlive(KeepAliveRequest.newBuilder().addAllSessions(here))
              .build();
      parts.add(
          g.get()
              .propose(keepAlive)
              .handle(
                  (r, error) -> {
                    if (error != null || !r.hasKeepAlive()) {
                      LOG.debug(
                          "lease group {}: session parts not renewed: {}",
                          number,
                          error != null ? error.toString() : r);
                      return KeepAliveResponse.getDefaultInstance();
                    }
                    return r.getKeepAlive();
                  }));
    }
    if (parts.isEmpty()) {
      return CompletableFuture.completedFuture(reply);
    }
    return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
        .thenApply(
            ignored -> {
              Map<Long, long[]> counts = new HashMap<>();
              for (CompletableFuture<KeepAliveResponse> part : parts) {
                for (KeepAliveResult r : part.join().getResultsList()) {
                  if (r.getOutcome() == Outcome.RENEWED) {
                    long[] c = counts.computeIfAbsent(r.getSession(), id -> new long[2]);
                    c[0] += r.getLeases();
                    c[1] += r.getLeasesEnded();
                  }
                }
              }
              KeepAliveResponse.Builder merged = reply.getKeepAlive().toBuilder();
              for (KeepAliveResult.Builder r : merged.getResultsBuilderList()) {
                long[] c = counts.get(r.getSession());
                if (c != null && r.getOutcome() == Outcome.RENEWED) {
                  r.setLeases(r.getLeases() + c[0]).setLeasesEnded(r.getLeasesEnded() + c[1]);
                }
              }
              return reply.toBuilder().setKeepAlive(merged).build();
            });
  }

  /**
   * The meta group's reply to a close, once the session's parts have ended in every lease group
   * (their leases counted in the reply). A group that cannot take it now ends them on its leader's
   * next sweep.
   */
  CompletableFuture<LogReply> afterClose(long session, LogReply reply) {
    if (!reply.hasCloseSession()
        || reply.getCloseSession().getOutcome() != Outcome.CLOSED
        || !groups.any()) {
      return CompletableFuture.completedFuture(reply);
    }
    List<CompletableFuture<Long>> ended = new ArrayList<>();
    for (int number : groups.all()) {
      groups
          .door(number)
          .ifPresent(
              g ->
                  ended.add(
                      end(g, List.of(session), true)
                          .handle(
                              (r, error) -> {
                                if (error != null) {
                                  LOG.debug(
                                      "lease group {}: parts of closed session {} left to the"
                                          + " sweep: {}",
                                      number,
                                      session,
                                      error.toString());
                                  return 0L;
                                }
                                return r.getSessionParts().getLeasesEnded();
                              })));
    }
    return CompletableFuture.allOf(ended.toArray(CompletableFuture[]::new))
        .thenApply(
            ignored -> {
              long leases = ended.stream().mapToLong(CompletableFuture::join).sum();
              CloseSessionResponse close = reply.getCloseSession();
              return reply.toBuilder()
                  .setCloseSession(
                      close.toBuilder().setLeasesEnded(close.getLeasesEnded() + leases))
                  .build();
            });
  }

  /**
   * On each lease group this node leads: ends the parts whose sessions the meta group, as this node
   * applied it, holds no longer (a lagging meta replica ends nothing early: sessions never come
   * back).
   */
  void sweep() {
    LeaseCore metaCore = meta.get();
    for (int number : groups.hostedNumbers()) {
      Optional<LeaseGroup> g = groups.hosted(number);
      if (g.isEmpty() || !g.get().isLeader() || sweeping.contains(number)) {
        continue;
      }
      List<Long> gone = new ArrayList<>();
      g.get()
          .machine()
          .core()
          .forEachSession(
              (id, s) -> {
                if (s.getPart() && gone.size() < MAX_SWEPT && metaCore.sessionEnded(id)) {
                  gone.add(id);
                }
              });
      if (gone.isEmpty() || !sweeping.add(number)) {
        continue;
      }
      end(g.get(), gone, false)
          .whenComplete(
              (reply, error) -> {
                sweeping.remove(number);
                if (error != null) {
                  LOG.debug(
                      "lease group {}: ended sessions' parts not ended yet: {}", number, error);
                }
              });
    }
  }

  /**
   * Whether {@code group} holds a part of {@code session}: as this node's replica shows it, or, for
   * a group it does not host, as far as this node made the part (sessions never come back, so a
   * part once made lasts as long as its session).
   */
  private boolean hasPart(GroupDoor group, long session) {
    return group
        .localCore()
        .map(core -> core.storedSession(session).map(StoredSession::getPart).orElse(false))
        .orElseGet(() -> partsMade.contains(group.number(), session));
  }

  private CompletableFuture<LogReply> end(GroupDoor group, List<Long> sessions, boolean closed) {
    LogCommand end =
        LogCommand.newBuilder()
            .setEndSessionParts(
                EndSessionParts.newBuilder().addAllSessions(sessions).setClosed(closed))
            .build();
    return group.raiseFormat(meta.get().logFormat()).thenCompose(raised -> group.propose(end));
  }

  /**
   * Parts this node made in groups it reaches through their members, so that the next attachment of
   * the same session there sends no second CreateSessionPart. Bounded: a part forgotten is made
   * again, which changes nothing in the group.
   */
  private static final class PartsMade {
    private static final int MAX = 10_000;

    private record Part(int group, long session) {}

    private final Map<Part, Boolean> made =
        java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(16, 0.75f, true) {
              @Override
              protected boolean removeEldestEntry(Map.Entry<Part, Boolean> eldest) {
                return size() > MAX;
              }
            });

    void add(int group, long session) {
      made.put(new Part(group, session), Boolean.TRUE);
    }

    boolean contains(int group, long session) {
      return made.containsKey(new Part(group, session));
    }
  }
}
