package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.BanRecord;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** Reads of the leases and timed bars, each from one consistent store view; safe from any thread. */
final class LeaseReads {
  private final KvStore store;

  LeaseReads(KvStore store) {
    this.store = store;
  }

  GetResponse get(GetRequest r, long nowMicros) {
    Validation.get(r);
    return store.read(view -> {
      GetResponse.Builder b = GetResponse.newBuilder().setRevision(view.applied().index());
      view.get(Space.LEASES, LeaseCore.utf8(r.getName())).ifPresent(bytes -> b.setFound(true)
          .setLease(LeaseViews.toLease(r.getName(), LeaseCore.parse(bytes), OptionalLong.of(nowMicros))));
      return b.build();
    });
  }

  ListResponse list(ListRequest r, long nowMicros) {
    Validation.list(r);
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    return store.read(view -> {
      ListResponse.Builder b = ListResponse.newBuilder().setRevision(view.applied().index());
      view.scan(Space.LEASES, LeaseCore.utf8(r.getPrefix()), LeaseCore.utf8(r.getStartAfter()), (key, value) -> {
        LeaseRecord lease = LeaseCore.parse(value);
        if (r.getWithAddress() && lease.getAttributes().getAddress().isEmpty()) {
          return true;
        }
        if (b.getLeasesCount() == limit) {
          b.setMore(true);
          return false;
        }
        b.addLeases(LeaseViews.toLease(new String(key, StandardCharsets.UTF_8), lease, OptionalLong.of(nowMicros)));
        return true;
      });
      return b.build();
    });
  }

  /** Every lock-delay and timed ban, as {@link LeaseCore#forEachTimedBar} says. */
  long forEachTimedBar(Consumer<TimedBar> visitor) {
    return store.read(view -> {
      long stamped = view.get(Space.META, LeaseCore.CLOCK_KEY).map(b -> ByteBuffer.wrap(b).getLong()).orElse(0L);
      view.scan(Space.LOCK_DELAYS, new byte[0], new byte[0], (key, value) -> {
        StoredLockDelay bar = LockDelays.decode(value);
        long hold = Math.max(bar.getDelayMicros(), bar.getUntilMicros() - stamped);
        visitor.accept(TimedBar.set(TimedBar.Kind.LOCK_DELAY, new String(key, StandardCharsets.UTF_8), bar.getRevision(), hold));
        return true;
      });
      view.scan(Space.BANS, new byte[0], new byte[0], (key, value) -> {
        BanRecord ban = Bans.parse(value);
        if (ban.getUntilMicros() != 0) {
          visitor.accept(TimedBar.set(TimedBar.Kind.BAN, new String(key, StandardCharsets.UTF_8), ban.getRevision(),
              ban.getUntilMicros() - stamped));
        }
        return true;
      });
      return view.applied().index();
    });
  }

  /** Visits every lease in one consistent view; returns the revision the view reflects. */
  long forEachLease(BiConsumer<String, LeaseRecord> visitor) {
    return store.read(view -> {
      view.scan(Space.LEASES, new byte[0], new byte[0], (key, value) -> {
        visitor.accept(new String(key, StandardCharsets.UTF_8), LeaseCore.parse(value));
        return true;
      });
      return view.applied().index();
    });
  }
}
