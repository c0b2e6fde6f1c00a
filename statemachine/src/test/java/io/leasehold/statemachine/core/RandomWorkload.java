package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
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
 * A seeded generator of plausible log entries over a small set of names and holders. It follows
 * the state through the events of each applied entry, so that most renewals, releases, updates
 * and expiries use the current token (and the current last_renew_revision), while some use stale
 * or never-issued tokens. Leader times mostly advance and sometimes go backwards (a new leader
 * with a slower clock), which also bumps the term; a few entries replay an already-applied index.
 * Updates are often masked (a random subset of address, metadata and status, now and then with an
 * unknown path), and now and then the history is compacted: below a revision inside it, at or
 * below its compact revision (a no-op), or beyond the entry's own index (capped there).
 */
public final class RandomWorkload {
  /** One log entry to apply. */
  public record Step(long term, long index, LogCommand command) {}

  static final String[] NAMES = {
      "lock/a", "lock/b", "service/pay/i-1", "service/pay/i-2", "partition/7", "mailbox/$admin@p1", "lock/\u00fcber"};
  static final String[] HOLDERS = {"runner-1", "runner-2", "proxy-01", "p\u00e9"};
  static final Attributes[] ATTRIBUTES = {
      Attributes.getDefaultInstance(),
      Attributes.newBuilder().setAddress("10.0.0.1:80").setStatus("SERVING").build(),
      Attributes.newBuilder().setAddress("10.0.0.2:80").setStatus("DRAINING").putMetadata("zone", "a").build(),
      Attributes.newBuilder().putMetadata("zone", "b").putMetadata("v", "2").build(),
  };

  private final Random rnd;
  private final TreeMap<String, LeaseRecord> live = new TreeMap<>();
  private final List<Long> issued = new ArrayList<>();
  private long term = 1;
  private long index = 0;
  private long time = T0;
  private long compactRevision;
  private static final String[] MASK_PATHS = {"address", "metadata", "status"};

  public RandomWorkload(long seed) {
    this.rnd = new Random(seed);
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
      time -= rnd.nextInt(5_000_000);       // a new leader whose clock is behind
      term++;
    } else {
      time += rnd.nextInt(2_000_000);
    }
    index++;
    long stamp = rnd.nextInt(100) < 2 ? 0 : time;  // now and then an entry without a stamp
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
    for (LeaseEvent e : result.events()) {
      switch (e.type()) {
        case ACQUIRED -> {
          live.put(e.name(), e.lease());
          issued.add(e.lease().getToken());
        }
        case RENEWED, UPDATED -> live.put(e.name(), e.lease());
        case RELEASED, EXPIRED -> live.remove(e.name());
      }
    }
  }

  private LogCommand.Builder command() {
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
      c.setRelease(io.leasehold.proto.v1.ReleaseRequest.newBuilder().setName(name).setToken(token(name)));
    } else if (roll < 80) {
      c.setUpdate(update());
    } else if (roll < 94) {
      int n = 1 + rnd.nextInt(3);
      io.leasehold.proto.v1.ExpireCommand.Builder e = io.leasehold.proto.v1.ExpireCommand.newBuilder();
      for (int i = 0; i < n; i++) {
        e.addItems(expiry(heldName()));
      }
      c.setExpire(e);
    } else if (roll < 96) {
      c.setCompactHistory(io.leasehold.proto.v1.CompactHistory.newBuilder().setBelowRevision(compactBelow()));
    } else if (roll < 98) {
      // Garbage that reached the log: must be applied as an invalid no-op everywhere.
      c.setAcquire(AcquireRequest.newBuilder().setName(rnd.nextBoolean() ? "" : "no-slash").setHolder(holder()));
    }
    // else: a LogCommand without a command
    return c;
  }

  private AcquireRequest.Builder acquire() {
    String name = name();
    LeaseRecord current = live.get(name);
    // Often the current holder retries; otherwise anyone.
    String holder = current != null && rnd.nextInt(3) == 0 ? current.getHolder() : holder();
    AcquireRequest.Builder a = AcquireRequest.newBuilder().setName(name).setHolder(holder);
    int t = rnd.nextInt(100);
    if (t < 70) {
      a.setTtl(Duration.newBuilder().setSeconds(2 + rnd.nextInt(59)).setNanos(rnd.nextInt(4) * 250_000_000));
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
    return a;
  }

  /** Half the updates replace every attribute; most others name a random non-empty subset. */
  private io.leasehold.proto.v1.UpdateRequest.Builder update() {
    String name = heldName();
    io.leasehold.proto.v1.UpdateRequest.Builder u = io.leasehold.proto.v1.UpdateRequest.newBuilder()
        .setName(name).setToken(token(name));
    int roll = rnd.nextInt(100);
    if (roll < 50) {
      return u.setAttributes(ATTRIBUTES[rnd.nextInt(ATTRIBUTES.length)]);
    }
    List<String> paths = new ArrayList<>(List.of(MASK_PATHS));
    java.util.Collections.shuffle(paths, rnd);
    com.google.protobuf.FieldMask.Builder mask = com.google.protobuf.FieldMask.newBuilder()
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
      return ExpireItem.newBuilder().setName(name).setToken(current.getToken())
          .setLastRenewRevision(current.getLastRenewRevision()).build();
    }
    if (current != null && roll < 80) {
      // The ticker saw an older renewal: must be skipped.
      return ExpireItem.newBuilder().setName(name).setToken(current.getToken())
          .setLastRenewRevision(current.getLastRenewRevision() - 1 - rnd.nextInt(3)).build();
    }
    long token = token(name);
    return ExpireItem.newBuilder().setName(name).setToken(token).setLastRenewRevision(token + rnd.nextInt(50)).build();
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
