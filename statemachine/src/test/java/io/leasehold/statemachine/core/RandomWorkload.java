package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.RenewItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

/**
 * A seeded generator of plausible log entries over a small set of names and holders. It follows the
 * state through the events of each applied entry, so that most renewals, releases, updates and
 * expiries use the current token (and the current last_renew_revision), while some use stale or
 * never-issued tokens. Leader times mostly advance and sometimes go backwards (a new leader with a
 * slower clock), which also bumps the term; a few entries replay an already-applied index. Updates
 * are often masked (a random subset of address, metadata and status, now and then with an unknown
 * path), and now and then the history is compacted: below a revision inside it, at or below its
 * compact revision (a no-op), or beyond the entry's own index (capped there). About one entry in
 * twelve is an operator's: a policy set (valid or not) or deleted on a namespace or the default, a
 * ban (without an end, for a while, until a time, now and then in the past), an unban, the leader's
 * lifting of a timed ban, or a revocation. About one in seven is of sessions and transfers (log
 * format 4, raised early in the run): a session created (now and then with a TTL out of bounds),
 * kept alive (mostly live ids, some gone), closed or expired by the leader (mostly at the revision
 * it last saw), an Acquire naming a session (now and then another holder's, or one that is gone),
 * and a Transfer (mostly with the current token, now and then into the new holder's session); those
 * drawn before the format rises apply as invalid no-ops. About one in 25 is an AcquireMany (log
 * format 5, raised a while after format 4) of a few names, some held, some repeated, now and then
 * all or nothing, with a session or a request id.
 */
public final class RandomWorkload {
  /** One log entry to apply. */
  public record Step(long term, long index, LogCommand command) {}

  static final String[] NAMES = {
    "lock/a",
    "lock/b",
    "service/pay/i-1",
    "service/pay/i-2",
    "partition/7",
    "mailbox/$admin@p1",
    "lock/\u00fcber"
  };
  static final String[] HOLDERS = {"runner-1", "runner-2", "proxy-01", "p\u00e9"};
  static final String[] NAMESPACES = {"lock", "service", "partition", "mailbox", ""};
  private static final String[] PATTERNS = {
    "[a-z]+",
    "a|b|7|\\$admin@p1",
    ".*",
    "pay/i-[0-9]+",
    "[^\u00fc]*",
    "(",
    "((a{1000}){1000}){1000}"
  };
  static final Attributes[] ATTRIBUTES = {
    Attributes.getDefaultInstance(),
    Attributes.newBuilder().setAddress("10.0.0.1:80").setStatus("SERVING").build(),
    Attributes.newBuilder()
        .setAddress("10.0.0.2:80")
        .setStatus("DRAINING")
        .putMetadata("zone", "a")
        .build(),
    Attributes.newBuilder().putMetadata("zone", "b").putMetadata("v", "2").build(),
  };

  private final Random rnd;
  private final Random idRnd;

  /** Its own stream, so that adding sessions left the other commands of every seed as they were. */
  private final Random sessionRnd;

  /** The live sessions, with their holder and the revision of their latest keep-alive. */
  private final TreeMap<Long, String> sessionHolders = new TreeMap<>();

  private final java.util.Map<Long, Long> sessionRenewals = new java.util.HashMap<>();
  private final List<Long> sessionsSeen = new ArrayList<>();
  private boolean formatRaised;

  /**
   * Its own stream, so that adding AcquireMany left the other commands of every seed as they were.
   */
  private final Random manyRnd;

  private boolean manyRaised;

  /**
   * Offered transfers: name to (offer revision, holder offered to), as the results reported them.
   */
  private final TreeMap<String, Long> offers = new TreeMap<>();

  private final java.util.Map<String, String> offeredTo = new java.util.HashMap<>();
  private final TreeMap<String, LeaseRecord> live = new TreeMap<>();
  private final List<Long> issued = new ArrayList<>();
  private long term = 1;
  private long index = 0;
  private long time = T0;
  private long compactRevision;

  /** The revision of each holder's latest ban, as the replies reported it. */
  private final java.util.Map<String, Long> banRevisions = new java.util.HashMap<>();

  /**
   * The names barred by a lock-delay, and the revision of the ending that set each, as the results
   * reported them.
   */
  private final TreeMap<String, Long> barred = new TreeMap<>();

  /** The holders under a timed ban, and the ban's revision, as the results reported them. */
  private final TreeMap<String, Long> timedBans = new TreeMap<>();

  private static final String[] MASK_PATHS = {"address", "metadata", "status"};

  public RandomWorkload(long seed) {
    this.rnd = new Random(seed);
    // Its own stream, so that adding request ids left every seed's workload otherwise as it was.
    this.idRnd = new Random(~seed);
    this.sessionRnd = new Random(seed * 31 + 7);
    this.manyRnd = new Random(seed * 17 + 3);
  }

  /** The highest index handed out so far. */
  public long index() {
    return index;
  }

  public Step next() {
    // A replay of an index at or below the applied one (Ratis after a restart): must be skipped.
    if (index > 0 && rnd.nextInt(100) < 2) {
      long old = 1 + (long) rnd.nextInt((int) index);
      return new Step(term, old, command().setLeaderTimeMicros(time).build());
    }
    if (rnd.nextInt(100) < 8) {
      time -= rnd.nextInt(5_000_000); // a new leader whose clock is behind
      term++;
    } else {
      time += rnd.nextInt(2_000_000);
    }
    index++;
    long stamp = rnd.nextInt(100) < 2 ? 0 : time; // now and then an entry without a stamp
    return new Step(term, index, command().setLeaderTimeMicros(stamp).build());
  }

  /** The history's compact revision, as the replies of applied compactions reported it. */
  public long compactRevision() {
    return compactRevision;
  }

  /** Follows the state through what an entry produced. */
  public void observe(ApplyResult result) {
    if (result.reply().hasCompactHistory()) {
      compactRevision = result.reply().getCompactHistory().getCompactRevision();
    }
    if (result.reply().hasBan()) {
      banRevisions.put(
          result.reply().getBan().getBan().getHolder(), result.reply().getBan().getRevision());
    }
    if (result.reply().hasTransfer() && result.reply().getTransfer().getOffer() != 0) {
      // The holder it was offered to: known from the command, kept by name with the offer.
      offeredTo.put(lastOfferName, lastOfferTo);
    }
    for (TimedBar b : result.bars()) {
      TreeMap<String, Long> bars =
          b.kind() == TimedBar.Kind.LOCK_DELAY
              ? barred
              : b.kind() == TimedBar.Kind.OFFER ? offers : timedBans;
      if (b.removed()) {
        bars.remove(b.key());
      } else {
        bars.put(b.key(), b.revision());
      }
    }
    for (SessionChange c : result.sessions()) {
      if (c.session().isPresent()) {
        sessionHolders.put(c.id(), c.session().get().getHolder());
        sessionRenewals.put(c.id(), c.session().get().getLastRenewRevision());
        if (!sessionsSeen.contains(c.id())) {
          sessionsSeen.add(c.id());
        }
      } else {
        sessionHolders.remove(c.id());
        sessionRenewals.remove(c.id());
      }
    }
    for (LeaseEvent e : result.events()) {
      switch (e.type()) {
        case ACQUIRED -> {
          live.put(e.name(), e.lease());
          issued.add(e.lease().getToken());
        }
        case RENEWED, UPDATED -> live.put(e.name(), e.lease());
        case RELEASED, EXPIRED, REVOKED, BANNED, TRANSFERRED, SESSION_EXPIRED, SESSION_CLOSED ->
            live.remove(e.name());
        case POLICY_CHANGED -> {}
      }
    }
  }

  private LogCommand.Builder command() {
    if (!formatRaised && index > 20 && sessionRnd.nextInt(20) == 0) {
      formatRaised = true;
      return LogCommand.newBuilder()
          .setSetLogFormat(
              io.leasehold.proto.v1.SetLogFormat.newBuilder().setFormat(LogFormat.SESSIONS));
    }
    if (formatRaised && !manyRaised && manyRnd.nextInt(15) == 0) {
      manyRaised = true;
      return LogCommand.newBuilder()
          .setSetLogFormat(
              io.leasehold.proto.v1.SetLogFormat.newBuilder().setFormat(LogFormat.MANY));
    }
    if (manyRnd.nextInt(25) == 0) {
      return acquireMany();
    }
    if (!offers.isEmpty() && sessionRnd.nextInt(100) < 25) {
      return offerCommand();
    }
    if (sessionRnd.nextInt(100) < 15) {
      return sessionCommand();
    }
    if (rnd.nextInt(100) < 8) {
      return admin();
    }
    if (!barred.isEmpty() && rnd.nextInt(100) < 6) {
      return liftLockDelays();
    }
    if (!timedBans.isEmpty() && rnd.nextInt(100) < 8) {
      // The leader lifting a timed ban it found due (mostly the current one).
      List<String> holders = new ArrayList<>(timedBans.keySet());
      String holder = holders.get(rnd.nextInt(holders.size()));
      return LogCommand.newBuilder()
          .setLiftBans(
              io.leasehold.proto.v1.LiftBans.newBuilder()
                  .addItems(
                      io.leasehold.proto.v1.LiftBanItem.newBuilder()
                          .setHolder(holder)
                          .setRevision(timedBans.get(holder) - (rnd.nextInt(6) == 0 ? 1 : 0))));
    }
    int roll = rnd.nextInt(100);
    LogCommand.Builder c = LogCommand.newBuilder();
    if (roll < 30) {
      c.setAcquire(acquire());
    } else if (roll < 54) {
      int n = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 5 : 2);
      List<RenewItem> items = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String name = heldName();
        items.add(RenewItem.newBuilder().setName(name).setToken(token(name)).build());
      }
      c.setRenew(io.leasehold.proto.v1.RenewRequest.newBuilder().addAllItems(items));
    } else if (roll < 68) {
      String name = heldName();
      c.setRelease(
          io.leasehold.proto.v1.ReleaseRequest.newBuilder().setName(name).setToken(token(name)));
    } else if (roll < 80) {
      c.setUpdate(update());
    } else if (roll < 94) {
      int n = 1 + rnd.nextInt(3);
      io.leasehold.proto.v1.ExpireCommand.Builder e =
          io.leasehold.proto.v1.ExpireCommand.newBuilder();
      for (int i = 0; i < n; i++) {
        e.addItems(expiry(heldName()));
      }
      c.setExpire(e);
    } else if (roll < 96) {
      c.setCompactHistory(
          io.leasehold.proto.v1.CompactHistory.newBuilder().setBelowRevision(compactBelow()));
    } else if (roll < 98) {
      // Garbage that reached the log: must be applied as an invalid no-op everywhere.
      c.setAcquire(
          AcquireRequest.newBuilder()
              .setName(rnd.nextBoolean() ? "" : "no-slash")
              .setHolder(holder()));
    }
    // else: a LogCommand without a command
    return c;
  }

  private LogCommand.Builder sessionCommand() {
    int roll = sessionRnd.nextInt(100);
    LogCommand.Builder c = LogCommand.newBuilder();
    if (roll < 12 || sessionsSeen.isEmpty()) {
      int ttl = sessionRnd.nextInt(10) == 0 ? 1 : 2 + sessionRnd.nextInt(30);
      c.setCreateSession(
          io.leasehold.proto.v1.CreateSessionRequest.newBuilder()
              .setHolder(HOLDERS[sessionRnd.nextInt(HOLDERS.length)])
              .setTtl(Duration.newBuilder().setSeconds(ttl)));
    } else if (roll < 24) {
      io.leasehold.proto.v1.KeepAliveRequest.Builder k =
          io.leasehold.proto.v1.KeepAliveRequest.newBuilder();
      java.util.Set<Long> ids = new java.util.TreeSet<>();
      for (int i = 1 + sessionRnd.nextInt(3); i > 0; i--) {
        ids.add(someSession());
      }
      c.setKeepAlive(k.addAllSessions(ids));
    } else if (roll < 32) {
      c.setCloseSession(
          io.leasehold.proto.v1.CloseSessionRequest.newBuilder().setSession(sessionWithLeases()));
    } else if (roll < 40) {
      long id = sessionWithLeases();
      long seen = sessionRenewals.getOrDefault(id, 1L) - (sessionRnd.nextInt(5) == 0 ? 1 : 0);
      c.setExpire(
          io.leasehold.proto.v1.ExpireCommand.newBuilder()
              .addSessions(
                  io.leasehold.proto.v1.ExpireSessionItem.newBuilder()
                      .setSession(id)
                      .setLastRenewRevision(seen)));
    } else if (roll < 82) {
      // Mostly a free name, into a live session of its holder.
      long id = someSession();
      String owner = sessionHolders.get(id);
      String holder =
          owner != null && sessionRnd.nextInt(5) != 0
              ? owner
              : HOLDERS[sessionRnd.nextInt(HOLDERS.length)];
      List<String> free = new ArrayList<>();
      for (String n : NAMES) {
        if (!live.containsKey(n)) {
          free.add(n);
        }
      }
      String name =
          !free.isEmpty() && sessionRnd.nextInt(4) != 0
              ? free.get(sessionRnd.nextInt(free.size()))
              : NAMES[sessionRnd.nextInt(NAMES.length)];
      c.setAcquire(AcquireRequest.newBuilder().setName(name).setHolder(holder).setSession(id));
    } else {
      // Mostly a live lease with its current token.
      List<String> held = new ArrayList<>(live.keySet());
      String name =
          !held.isEmpty() && sessionRnd.nextInt(5) != 0
              ? held.get(sessionRnd.nextInt(held.size()))
              : NAMES[sessionRnd.nextInt(NAMES.length)];
      LeaseRecord current = live.get(name);
      long token =
          current == null || sessionRnd.nextInt(6) == 0
              ? 1 + sessionRnd.nextInt(1000)
              : current.getToken();
      io.leasehold.proto.v1.TransferRequest.Builder t =
          io.leasehold.proto.v1.TransferRequest.newBuilder()
              .setName(name)
              .setToken(token)
              .setToHolder(HOLDERS[sessionRnd.nextInt(HOLDERS.length)]);
      if (sessionRnd.nextInt(3) == 0 && !sessionHolders.isEmpty()) {
        Long id =
            sessionHolders.keySet().stream()
                .skip(sessionRnd.nextInt(sessionHolders.size()))
                .findFirst()
                .orElseThrow();
        t.setToHolder(sessionHolders.get(id)).setSession(id);
      }
      if (sessionRnd.nextInt(3) == 0) {
        t.setAcceptWithin(Duration.newBuilder().setSeconds(1 + sessionRnd.nextInt(20)));
        lastOfferName = name;
        lastOfferTo = t.getToHolder();
      }
      c.setTransfer(t);
    }
    return c;
  }

  private String lastOfferName = "";
  private String lastOfferTo = "";

  /**
   * An offer taken up (mostly by the holder it was made to), or withdrawn by the leader (mostly the
   * current one).
   */
  private LogCommand.Builder offerCommand() {
    List<String> names = new ArrayList<>(offers.keySet());
    String name = names.get(sessionRnd.nextInt(names.size()));
    long revision = offers.get(name) - (sessionRnd.nextInt(6) == 0 ? 1 : 0);
    if (sessionRnd.nextInt(10) < 7) {
      String holder =
          sessionRnd.nextInt(5) == 0
              ? HOLDERS[sessionRnd.nextInt(HOLDERS.length)]
              : offeredTo.getOrDefault(name, "");
      return LogCommand.newBuilder()
          .setAcceptTransfer(
              io.leasehold.proto.v1.AcceptTransferRequest.newBuilder()
                  .setName(name)
                  .setOffer(revision)
                  .setHolder(holder));
    }
    return LogCommand.newBuilder()
        .setWithdrawOffers(
            io.leasehold.proto.v1.WithdrawOffers.newBuilder()
                .addItems(
                    io.leasehold.proto.v1.WithdrawOfferItem.newBuilder()
                        .setName(name)
                        .setRevision(revision)));
  }

  /** Mostly a live session with leases attached, if there is one. */
  private long sessionWithLeases() {
    List<Long> attached = new ArrayList<>();
    for (LeaseRecord l : live.values()) {
      if (l.getSession() != 0 && sessionHolders.containsKey(l.getSession())) {
        attached.add(l.getSession());
      }
    }
    return !attached.isEmpty() && sessionRnd.nextInt(4) != 0
        ? attached.get(sessionRnd.nextInt(attached.size()))
        : someSession();
  }

  /** Mostly a live session; now and then one that ended (or none was ever made: id 1). */
  private long someSession() {
    if (!sessionHolders.isEmpty() && sessionRnd.nextInt(5) != 0) {
      return sessionHolders.keySet().stream()
          .skip(sessionRnd.nextInt(sessionHolders.size()))
          .findFirst()
          .orElseThrow();
    }
    return sessionsSeen.isEmpty() ? 1 : sessionsSeen.get(sessionRnd.nextInt(sessionsSeen.size()));
  }

  /** Acquires sent with a request id, oldest first. */
  private final List<AcquireRequest> sentWithIds = new ArrayList<>();

  /**
   * An AcquireMany of a few names by one holder: mostly distinct (a repeated name makes it invalid
   * everywhere), now and then all or nothing, in a session, or with a request id seen before.
   */
  private LogCommand.Builder acquireMany() {
    io.leasehold.proto.v1.AcquireManyRequest.Builder m =
        io.leasehold.proto.v1.AcquireManyRequest.newBuilder()
            .setHolder(HOLDERS[manyRnd.nextInt(HOLDERS.length)]);
    int n = 1 + manyRnd.nextInt(4);
    java.util.Set<String> names = new java.util.LinkedHashSet<>();
    for (int i = 0; i < n; i++) {
      names.add(NAMES[manyRnd.nextInt(NAMES.length)]);
    }
    for (String name : names) {
      io.leasehold.proto.v1.AcquireManyItem.Builder item =
          io.leasehold.proto.v1.AcquireManyItem.newBuilder().setName(name);
      if (manyRnd.nextBoolean()) {
        item.setAttributes(ATTRIBUTES[manyRnd.nextInt(ATTRIBUTES.length)]);
      }
      m.addItems(item);
    }
    if (manyRnd.nextInt(10) == 0) {
      m.addItems(m.getItems(0)); // a repeated name: invalid
    }
    m.setAllOrNothing(manyRnd.nextInt(3) == 0);
    int r = manyRnd.nextInt(10);
    if (r == 0 && !sessionHolders.isEmpty()) {
      var session = sessionHolders.firstEntry();
      m.setHolder(session.getValue()).setSession(session.getKey());
    } else if (r < 7) {
      m.setTtl(Duration.newBuilder().setSeconds(2 + manyRnd.nextInt(30)));
    }
    if (manyRnd.nextInt(5) == 0) {
      m.setRequestId("many-" + manyRnd.nextInt(4));
    }
    return LogCommand.newBuilder().setAcquireMany(m);
  }

  private AcquireRequest.Builder acquire() {
    String name = name();
    LeaseRecord current = live.get(name);
    // Often the current holder retries; otherwise anyone.
    String holder = current != null && rnd.nextInt(3) == 0 ? current.getHolder() : holder();
    AcquireRequest.Builder a = AcquireRequest.newBuilder().setName(name).setHolder(holder);
    int t = rnd.nextInt(100);
    if (t < 70) {
      a.setTtl(
          Duration.newBuilder()
              .setSeconds(2 + rnd.nextInt(59))
              .setNanos(rnd.nextInt(4) * 250_000_000));
    } else if (t < 90) {
      // unset: the default TTL
    } else if (t < 95) {
      a.setTtl(Duration.newBuilder().setSeconds(1));
    } else {
      a.setTtl(Duration.newBuilder().setSeconds(25 * 3600));
    }
    if (rnd.nextBoolean()) {
      a.setAttributes(ATTRIBUTES[rnd.nextInt(ATTRIBUTES.length)]);
    }
    int r = idRnd.nextInt(100);
    if (r < 3 && !sentWithIds.isEmpty()) {
      // A late first attempt of a call that was retried: the same request, id and all.
      return sentWithIds
          .get(sentWithIds.size() - 1 - idRnd.nextInt(Math.min(20, sentWithIds.size())))
          .toBuilder();
    }
    if (r < 40) {
      a.setRequestId("call-" + sentWithIds.size());
      sentWithIds.add(a.build());
    }
    return a;
  }

  /**
   * The leader lifting lock-delays (it decides when on its own clock; here, at random): mostly the
   * current bar, now and then a stale revision (a repeat, a deposed leader) or a name not barred.
   */
  private LogCommand.Builder liftLockDelays() {
    io.leasehold.proto.v1.LiftLockDelays.Builder lift =
        io.leasehold.proto.v1.LiftLockDelays.newBuilder();
    int n = 1 + rnd.nextInt(3);
    List<String> names = new ArrayList<>(barred.keySet());
    for (int i = 0; i < n; i++) {
      String name = rnd.nextInt(10) == 0 ? heldName() : names.get(rnd.nextInt(names.size()));
      long revision = barred.getOrDefault(name, 1L) - (rnd.nextInt(6) == 0 ? 1 : 0);
      lift.addItems(
          io.leasehold.proto.v1.LiftLockDelayItem.newBuilder().setName(name).setRevision(revision));
    }
    return LogCommand.newBuilder().setLiftLockDelays(lift);
  }

  private LogCommand.Builder admin() {
    int roll = rnd.nextInt(100);
    LogCommand.Builder c = LogCommand.newBuilder();
    if (roll < 30) {
      c.setSetPolicy(
          io.leasehold.proto.v1.SetPolicyRequest.newBuilder()
              .setNamespace(namespace())
              .setPolicy(policy()));
    } else if (roll < 45) {
      c.setDeletePolicy(
          io.leasehold.proto.v1.DeletePolicyRequest.newBuilder().setNamespace(namespace()));
    } else if (roll < 60) {
      // Mostly someone who holds leases now, mostly for a short while (bans without an end are
      // rare).
      LeaseRecord victim = live.isEmpty() || rnd.nextInt(10) < 3 ? null : live.get(heldName());
      io.leasehold.proto.v1.BanRequest.Builder b =
          io.leasehold.proto.v1.BanRequest.newBuilder()
              .setHolder(victim != null ? victim.getHolder() : holder())
              .setReason(rnd.nextBoolean() ? "" : "abuse #" + rnd.nextInt(10));
      int until = rnd.nextInt(10);
      if (until < 6) {
        b.setDuration(Duration.newBuilder().setSeconds(1 + rnd.nextInt(10)));
      } else if (until < 9) {
        // An absolute end: mostly ahead of the leader's time, now and then behind it (invalid).
        long at = time + (rnd.nextInt(10) == 0 ? -5_000_000 : 1_000_000 + rnd.nextInt(10_000_000));
        b.setUntil(
            com.google.protobuf.Timestamp.newBuilder()
                .setSeconds(at / 1_000_000)
                .setNanos((int) (at % 1_000_000) * 1000));
      }
      c.setBan(b);
    } else if (roll < 70) {
      c.setUnban(io.leasehold.proto.v1.UnbanRequest.newBuilder().setHolder(holder()));
    } else if (roll < 80) {
      String holder = holder();
      long revision = banRevisions.getOrDefault(holder, 1L) - (rnd.nextInt(5) == 0 ? 1 : 0);
      c.setLiftBans(
          io.leasehold.proto.v1.LiftBans.newBuilder()
              .addItems(
                  io.leasehold.proto.v1.LiftBanItem.newBuilder()
                      .setHolder(holder)
                      .setRevision(revision)));
    } else {
      String name = heldName();
      long token = rnd.nextInt(4) == 0 ? 0 : token(name);
      c.setRevoke(
          io.leasehold.proto.v1.RevokeRequest.newBuilder()
              .setName(name)
              .setToken(token)
              .setReason("op " + rnd.nextInt(3)));
    }
    return c;
  }

  /**
   * Each field now and then; the TTL fields always consistent (2–5 s ≤ 5–30 s ≤ 30–120 s); a
   * pattern now and then invalid.
   */
  private io.leasehold.proto.v1.Policy.Builder policy() {
    io.leasehold.proto.v1.Policy.Builder p = io.leasehold.proto.v1.Policy.newBuilder();
    if (rnd.nextInt(3) == 0) {
      p.setMinTtl(Duration.newBuilder().setSeconds(2 + rnd.nextInt(4)));
    }
    if (rnd.nextInt(3) == 0) {
      p.setMaxTtl(Duration.newBuilder().setSeconds(30 + rnd.nextInt(91)));
    }
    if (rnd.nextInt(3) == 0) {
      p.setDefaultTtl(Duration.newBuilder().setSeconds(5 + rnd.nextInt(26)));
    }
    if (rnd.nextInt(4) == 0) {
      p.setHeartbeatInterval(Duration.newBuilder().setNanos(250_000_000 * (1 + rnd.nextInt(4))));
    }
    if (rnd.nextInt(4) == 0) {
      p.setNamePattern(PATTERNS[rnd.nextInt(PATTERNS.length)]);
    }
    if (rnd.nextInt(4) == 0) {
      p.setGracePeriod(Duration.newBuilder().setSeconds(rnd.nextInt(4)));
    }
    if (rnd.nextInt(3) == 0) {
      p.setLockDelay(Duration.newBuilder().setSeconds(1 + rnd.nextInt(10)));
    }
    if (rnd.nextInt(5) == 0) {
      p.setMaxLeasesPerHolder(1 + rnd.nextInt(3));
    }
    if (rnd.nextInt(5) == 0) {
      p.setMaxLeasesPerNamespace(1 + rnd.nextInt(3));
    }
    if (rnd.nextInt(3) == 0) {
      p.setHistoryLimit(1 + rnd.nextInt(4));
    }
    return p;
  }

  private String namespace() {
    return NAMESPACES[rnd.nextInt(NAMESPACES.length)];
  }

  /** Half the updates replace every attribute; most others name a random non-empty subset. */
  private io.leasehold.proto.v1.UpdateRequest.Builder update() {
    String name = heldName();
    io.leasehold.proto.v1.UpdateRequest.Builder u =
        io.leasehold.proto.v1.UpdateRequest.newBuilder().setName(name).setToken(token(name));
    int roll = rnd.nextInt(100);
    if (roll < 50) {
      return u.setAttributes(ATTRIBUTES[rnd.nextInt(ATTRIBUTES.length)]);
    }
    List<String> paths = new ArrayList<>(List.of(MASK_PATHS));
    java.util.Collections.shuffle(paths, rnd);
    com.google.protobuf.FieldMask.Builder mask =
        com.google.protobuf.FieldMask.newBuilder()
            .addAllPaths(paths.subList(0, 1 + rnd.nextInt(paths.size())));
    if (roll >= 96) {
      // A path the API should have refused: invalid everywhere.
      mask.addPaths(rnd.nextBoolean() ? "zone" : "Address");
    }
    u.setUpdateMask(mask);
    if (rnd.nextInt(5) != 0) {
      u.setAttributes(ATTRIBUTES[rnd.nextInt(ATTRIBUTES.length)]);
    }
    return u;
  }

  /**
   * Mostly inside the older half of the history (as a leader bounding it would); else a no-op
   * bound, or one at or beyond this entry (capped at its index: everything goes).
   */
  private long compactBelow() {
    int roll = rnd.nextInt(100);
    if (roll < 55) {
      return compactRevision + 1 + rnd.nextInt((int) Math.max(1, (index - compactRevision) / 2));
    }
    if (roll < 85) {
      return compactRevision - rnd.nextInt(3);
    }
    return index + rnd.nextInt(50);
  }

  private ExpireItem expiry(String name) {
    LeaseRecord current = live.get(name);
    int roll = rnd.nextInt(100);
    if (current != null && roll < 60) {
      return ExpireItem.newBuilder()
          .setName(name)
          .setToken(current.getToken())
          .setLastRenewRevision(current.getLastRenewRevision())
          .build();
    }
    if (current != null && roll < 80) {
      // The ticker saw an older renewal: must be skipped.
      return ExpireItem.newBuilder()
          .setName(name)
          .setToken(current.getToken())
          .setLastRenewRevision(current.getLastRenewRevision() - 1 - rnd.nextInt(3))
          .build();
    }
    long token = token(name);
    return ExpireItem.newBuilder()
        .setName(name)
        .setToken(token)
        .setLastRenewRevision(token + rnd.nextInt(50))
        .build();
  }

  /** Mostly the current token; else a stale one; rarely one never issued (bad input). */
  private long token(String name) {
    LeaseRecord current = live.get(name);
    int roll = rnd.nextInt(100);
    if (current != null && roll < 85) {
      return current.getToken();
    }
    if (roll < 98 && !issued.isEmpty()) {
      return issued.get(rnd.nextInt(issued.size()));
    }
    return roll < 99 ? index + rnd.nextInt(3) : 1 + rnd.nextInt((int) Math.max(1, index));
  }

  private String name() {
    return NAMES[rnd.nextInt(NAMES.length)];
  }

  /** Mostly a name that is held now (as a client renews what it holds); sometimes any name. */
  private String heldName() {
    if (!live.isEmpty() && rnd.nextInt(100) < 85) {
      int k = rnd.nextInt(live.size());
      return live.navigableKeySet().stream().skip(k).findFirst().orElseThrow();
    }
    return name();
  }

  private String holder() {
    return HOLDERS[rnd.nextInt(HOLDERS.length)];
  }
}
