package io.leasehold.statemachine.store;

/**
 * The key spaces of the state. The RocksDB store keeps each in its own column family; the id is
 * part of the snapshot format and must never be reused.
 */
public enum Space {
  /** Lease name (UTF-8) to {@code LeaseRecord}. */
  LEASES(1, "leases"),
  /** Applied position, leader clock, history bounds, the default policy. */
  META(2, "meta"),
  /**
   * Event history: (revision, sequence) big-endian to {@code Event}, bounded by replicated
   * compaction.
   */
  EVENTS(3, "events"),
  /** Namespace (UTF-8) to {@code StoredPolicy}; the default policy is in META. */
  POLICIES(4, "policies"),
  /** Holder (UTF-8) to {@code BanRecord}. */
  BANS(5, "bans"),
  /**
   * Lease name (UTF-8) to the leader-stamped time (i64 micros, big-endian) until which it cannot be
   * acquired.
   */
  LOCK_DELAYS(6, "lock_delays"),
  /**
   * (name, 0x00, i64 sequence) to {@code HistoryRecord}: the last leases of each name that ended.
   */
  NAME_HISTORY(7, "name_history"),
  /**
   * (holder, 0x00, i64 sequence) to {@code HistoryRecord}: the last leases of each holder that
   * ended.
   */
  HOLDER_HISTORY(8, "holder_history"),
  /**
   * Request id (UTF-8) to {@code StoredRequest}: the Acquires applied with an id, kept for a while.
   */
  REQUESTS(9, "requests"),
  /**
   * Role name (UTF-8) to {@code StoredRole}: the roles operators added (the built-in ones are not
   * stored).
   */
  AUTH_ROLES(10, "auth_roles"),
  /** Identity (UTF-8) to {@code StoredGrants}: the roles each identity holds. */
  AUTH_GRANTS(11, "auth_grants"),
  /**
   * (revision, i32 sequence) big-endian to {@code AuditEntry}: the newest admin and auth actions.
   */
  AUDIT(12, "audit"),
  /** Session id (i64 big-endian) to {@code StoredSession}: the live sessions (log format 4 on). */
  SESSIONS(13, "sessions"),
  /**
   * (holder, 0x00, name) to nothing: the live leases by holder, for List by holder. Written from
   * log format 4 on; the entry that raises the format to 4 fills it with the leases live then.
   */
  HOLDER_LEASES(14, "holder_leases"),
  /**
   * Lease name (UTF-8) to {@code StoredOffer}: transfers offered and not yet accepted (log format 4
   * on).
   */
  OFFERS(15, "offers"),
  /**
   * Service (UTF-8) to the revision (i64 big-endian) of the last change to its instances, the
   * leases named service/&lt;service&gt;/&lt;instance&gt;: its version. Written from log format 5
   * on; the entry that raises the format to 5 gives every service live then its own index.
   */
  SERVICE_VERSIONS(16, "service_versions"),
  /**
   * Namespace (UTF-8) to {@code StoredPlacement} (log format 6 on): in the meta group, the lease
   * group each placed namespace lives in; in a lease group, the namespaces it owns.
   */
  PLACEMENTS(17, "placements");

  private final int id;
  private final String columnFamily;

  Space(int id, String columnFamily) {
    this.id = id;
    this.columnFamily = columnFamily;
  }

  public int id() {
    return id;
  }

  public String columnFamily() {
    return columnFamily;
  }

  public static Space byId(int id) {
    for (Space s : values()) {
      if (s.id == id) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown key space id " + id);
  }
}
