package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The live sessions and the leases attached to each, kept in step with the SESSIONS space and the
 * leases' {@code session} field. Closing or expiring a session ends its leases without a scan: each
 * session's leases are kept in token order ({@link TokenOrder}, no object per lease). Apply thread
 * only.
 */
final class Sessions {
  private final Map<Long, StoredSession> byId = new HashMap<>();
  private final Map<Long, TokenOrder> attached = new HashMap<>();

  StoredSession get(long id) {
    return byId.get(id);
  }

  void put(long id, StoredSession session) {
    byId.put(id, session);
  }

  void remove(long id) {
    byId.remove(id);
  }

  int size() {
    return byId.size();
  }

  /** Follows a lease write: the lease leaves its old session (if any) and joins its new one. */
  void leaseChanged(String name, LeaseRecord old, LeaseRecord now) {
    if (old != null
        && old.getSession() != 0
        && (now == null
            || now.getToken() != old.getToken()
            || now.getSession() != old.getSession())) {
      TokenOrder g = attached.get(old.getSession());
      if (g != null) {
        g.remove(old.getToken());
        if (g.isEmpty()) {
          attached.remove(old.getSession());
        }
      }
    }
    if (now != null
        && now.getSession() != 0
        && (old == null
            || old.getToken() != now.getToken()
            || old.getSession() != now.getSession())) {
      attached
          .computeIfAbsent(now.getSession(), id -> new TokenOrder(""))
          .add(now.getToken(), name);
    }
  }

  /** The names of the leases attached to a session, oldest grant first. */
  List<String> leasesOf(long id) {
    TokenOrder g = attached.get(id);
    if (g == null) {
      return List.of();
    }
    List<String> names = new ArrayList<>(g.size());
    g.forEach((name, token) -> names.add(name));
    return names;
  }

  int attachedTo(long id) {
    TokenOrder g = attached.get(id);
    return g == null ? 0 : g.size();
  }

  /**
   * Reloads the sessions from the store; the attachments come from the leases ({@link
   * #leaseChanged}).
   */
  void load(KvStore store) {
    byId.clear();
    attached.clear();
    store.read(
        view -> {
          view.scan(
              Space.SESSIONS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                byId.put(id(key), parse(value));
                return true;
              });
          return null;
        });
  }

  static byte[] key(long id) {
    return ByteBuffer.allocate(8).putLong(id).array();
  }

  static long id(byte[] key) {
    return ByteBuffer.wrap(key).getLong();
  }

  static StoredSession parse(byte[] bytes) {
    try {
      return StoredSession.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt session record", e);
    }
  }
}
