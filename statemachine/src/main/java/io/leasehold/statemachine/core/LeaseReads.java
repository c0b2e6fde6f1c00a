package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.BanRecord;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.GetSessionResponse;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.ListSessionsResponse;
import io.leasehold.proto.v1.ServiceReply;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.proto.v1.StoredOffer;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.ReadView;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Reads of the leases and timed bars, each from one consistent store view; safe from any thread.
 */
final class LeaseReads {
  private final KvStore store;

  LeaseReads(KvStore store) {
    this.store = store;
  }

  GetResponse get(GetRequest r, long nowMicros) {
    Validation.get(r);
    return store.read(
        view -> {
          GetResponse.Builder b = GetResponse.newBuilder().setRevision(view.applied().index());
          view.get(Space.LEASES, LeaseCore.utf8(r.getName()))
              .ifPresent(
                  bytes ->
                      b.setFound(true)
                          .setLease(view(view, r.getName(), LeaseCore.parse(bytes), nowMicros)));
          return b.build();
        });
  }

  /** A lease as read, with its session's TTL and renewal if it has one. */
  private static Lease view(ReadView view, String name, LeaseRecord lease, long nowMicros) {
    StoredSession session =
        lease.getSession() == 0
            ? null
            : view.get(Space.SESSIONS, Sessions.key(lease.getSession()))
                .map(Sessions::parse)
                .orElse(null);
    return LeaseViews.toLease(name, lease, session, OptionalLong.of(nowMicros));
  }

  ListResponse list(ListRequest r, long nowMicros, int logFormat) {
    Validation.list(r);
    if (!r.getHolder().isEmpty()) {
      if (logFormat < LogFormat.SESSIONS) {
        throw new InvalidArgumentException(
            "holder",
            "listing by holder needs log format "
                + LogFormat.SESSIONS
                + "; the cluster applies format "
                + logFormat
                + " until every member runs code that knows it");
      }
      return listByHolder(r, nowMicros);
    }
    return store.read(view -> listed(view, r, nowMicros).build());
  }

  /** One page of the leases under the request's prefix, read from {@code view}. */
  private static ListResponse.Builder listed(ReadView view, ListRequest r, long nowMicros) {
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    ListResponse.Builder b = ListResponse.newBuilder().setRevision(view.applied().index());
    view.scan(
        Space.LEASES,
        LeaseCore.utf8(r.getPrefix()),
        LeaseCore.utf8(r.getStartAfter()),
        (key, value) -> {
          LeaseRecord lease = LeaseCore.parse(value);
          if (r.getWithAddress() && lease.getAttributes().getAddress().isEmpty()) {
            return true;
          }
          if (b.getLeasesCount() == limit) {
            b.setMore(true);
            return false;
          }
          b.addLeases(view(view, new String(key, StandardCharsets.UTF_8), lease, nowMicros));
          return true;
        });
    return b;
  }

  /**
   * The leases under {@code service/<service>/} (the first {@link Limits#MAX_LIST_LIMIT}) and the
   * service's version ({@link ServiceVersions}), from one view.
   */
  ServiceReply service(String service, long nowMicros) {
    if (service.isEmpty() || service.indexOf('/') >= 0) {
      throw new InvalidArgumentException("service", "must be a non-empty name without '/'");
    }
    ListRequest prefix =
        ListRequest.newBuilder().setPrefix(RegistryNames.servicePrefix(service)).build();
    return store.read(
        view -> {
          ListResponse.Builder b = listed(view, prefix, nowMicros);
          long version =
              view.get(Space.SERVICE_VERSIONS, LeaseCore.utf8(service))
                  .map(ServiceVersions::decode)
                  .orElse(0L);
          return ServiceReply.newBuilder().setList(b).setVersion(version).build();
        });
  }

  /**
   * One holder's leases from the holder index, in name order; prefix and start_after apply to the
   * names.
   */
  private ListResponse listByHolder(ListRequest r, long nowMicros) {
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    byte[] prefix = HolderKeys.prefix(r.getHolder());
    return store.read(
        view -> {
          ListResponse.Builder b = ListResponse.newBuilder().setRevision(view.applied().index());
          byte[] from = HolderKeys.key(r.getHolder(), r.getPrefix());
          byte[] after =
              r.getStartAfter().isEmpty()
                  ? new byte[0]
                  : HolderKeys.key(r.getHolder(), r.getStartAfter());
          view.scan(
              Space.HOLDER_LEASES,
              from,
              after,
              (key, value) -> {
                String name = HolderKeys.name(key, prefix.length);
                Optional<byte[]> bytes = view.get(Space.LEASES, LeaseCore.utf8(name));
                if (bytes.isEmpty()) {
                  throw new StoreException(
                      "holder index names " + name + ", which is not a live lease", null);
                }
                LeaseRecord lease = LeaseCore.parse(bytes.get());
                if (r.getWithAddress() && lease.getAttributes().getAddress().isEmpty()) {
                  return true;
                }
                if (b.getLeasesCount() == limit) {
                  b.setMore(true);
                  return false;
                }
                b.addLeases(view(view, name, lease, nowMicros));
                return true;
              });
          return b.build();
        });
  }

  GetSessionResponse getSession(GetSessionRequest r, long nowMicros) {
    Validation.getSession(r);
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    return store.read(
        view -> {
          GetSessionResponse.Builder b =
              GetSessionResponse.newBuilder().setRevision(view.applied().index());
          Optional<StoredSession> session =
              view.get(Space.SESSIONS, Sessions.key(r.getSession())).map(Sessions::parse);
          if (session.isEmpty()) {
            return b.build();
          }
          // The attached leases are among the holder's: the holder index finds them without a scan
          // of every lease.
          long[] attached = {0};
          byte[] prefix = HolderKeys.prefix(session.get().getHolder());
          view.scan(
              Space.HOLDER_LEASES,
              prefix,
              new byte[0],
              (key, value) -> {
                String name = HolderKeys.name(key, prefix.length);
                Optional<byte[]> bytes = view.get(Space.LEASES, LeaseCore.utf8(name));
                if (bytes.isPresent()
                    && LeaseCore.parse(bytes.get()).getSession() == r.getSession()) {
                  attached[0]++;
                  if (b.getLeasesCount() < limit) {
                    b.addLeases(name);
                  } else {
                    b.setMore(true);
                  }
                }
                return true;
              });
          return b.setFound(true)
              .setSession(
                  LeaseViews.toSession(
                      r.getSession(), session.get(), attached[0], OptionalLong.of(nowMicros)))
              .build();
        });
  }

  /**
   * Sessions in id order; with a holder, only its own. The attached count is left out (0): Get has
   * it.
   */
  ListSessionsResponse listSessions(ListSessionsRequest r, long nowMicros) {
    Validation.listSessions(r);
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    return store.read(
        view -> {
          ListSessionsResponse.Builder b =
              ListSessionsResponse.newBuilder().setRevision(view.applied().index());
          byte[] after = r.getStartAfter() == 0 ? new byte[0] : Sessions.key(r.getStartAfter());
          view.scan(
              Space.SESSIONS,
              new byte[0],
              after,
              (key, value) -> {
                StoredSession s = Sessions.parse(value);
                if (!r.getHolder().isEmpty() && !r.getHolder().equals(s.getHolder())) {
                  return true;
                }
                if (b.getSessionsCount() == limit) {
                  b.setMore(true);
                  return false;
                }
                b.addSessions(
                    LeaseViews.toSession(Sessions.id(key), s, 0, OptionalLong.of(nowMicros)));
                return true;
              });
          return b.build();
        });
  }

  /** Visits every session in one consistent view; returns the revision the view reflects. */
  long forEachSession(BiConsumer<Long, StoredSession> visitor) {
    return store.read(
        view -> {
          view.scan(
              Space.SESSIONS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                visitor.accept(Sessions.id(key), Sessions.parse(value));
                return true;
              });
          return view.applied().index();
        });
  }

  /** Every lock-delay and timed ban, as {@link LeaseCore#forEachTimedBar} says. */
  long forEachTimedBar(Consumer<TimedBar> visitor) {
    return store.read(
        view -> {
          long stamped =
              view.get(Space.META, LeaseCore.CLOCK_KEY)
                  .map(b -> ByteBuffer.wrap(b).getLong())
                  .orElse(0L);
          view.scan(
              Space.LOCK_DELAYS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                StoredLockDelay bar = LockDelays.decode(value);
                long hold = Math.max(bar.getDelayMicros(), bar.getUntilMicros() - stamped);
                visitor.accept(
                    TimedBar.set(
                        TimedBar.Kind.LOCK_DELAY,
                        new String(key, StandardCharsets.UTF_8),
                        bar.getRevision(),
                        hold));
                return true;
              });
          view.scan(
              Space.OFFERS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                // An offer gets its whole acceptance window again, as a lock-delay gets its whole
                // delay.
                StoredOffer offer = Offers.parse(value);
                visitor.accept(
                    TimedBar.set(
                        TimedBar.Kind.OFFER,
                        new String(key, StandardCharsets.UTF_8),
                        offer.getRevision(),
                        offer.getWithinMicros()));
                return true;
              });
          view.scan(
              Space.BANS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                BanRecord ban = Bans.parse(value);
                if (ban.getUntilMicros() != 0) {
                  visitor.accept(
                      TimedBar.set(
                          TimedBar.Kind.BAN,
                          new String(key, StandardCharsets.UTF_8),
                          ban.getRevision(),
                          ban.getUntilMicros() - stamped));
                }
                return true;
              });
          return view.applied().index();
        });
  }

  /** Visits every lease in one consistent view; returns the revision the view reflects. */
  long forEachLease(BiConsumer<String, LeaseRecord> visitor) {
    return store.read(
        view -> {
          view.scan(
              Space.LEASES,
              new byte[0],
              new byte[0],
              (key, value) -> {
                visitor.accept(new String(key, StandardCharsets.UTF_8), LeaseCore.parse(value));
                return true;
              });
          return view.applied().index();
        });
  }
}
