package io.leasehold.statemachine.store;

/**
 * The key spaces of the state. The RocksDB store keeps each in its own column family;
 * the id is part of the snapshot format and must never be reused.
 */
public enum Space {
  /** Lease name (UTF-8) to {@code LeaseRecord}. */
  LEASES(1, "leases"),
  /** Applied position, leader clock, counters. */
  META(2, "meta"),
  /** Event history: (revision, sequence) big-endian to {@code Event}, bounded by replicated compaction. */
  EVENTS(3, "events");

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
