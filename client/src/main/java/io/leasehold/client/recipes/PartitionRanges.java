package io.leasehold.client.recipes;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.zip.CRC32;

/** The arithmetic of a partition group: a key's partition, and each member's contiguous range. */
final class PartitionRanges {
  private PartitionRanges() {}

  /** {@code crc32(UTF-8 key) % n}, the routing table's formula for any partition count. */
  static int partitionOf(String key, int n) {
    CRC32 crc = new CRC32();
    crc.update(key.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % n);
  }

  /**
   * The first partition of member {@code i} of {@code m}: member i owns {@code [first(i), first(i +
   * 1))}.
   */
  static int first(int i, int m, int n) {
    return (int) ((long) i * n / m);
  }

  /**
   * The index of the member whose range holds {@code partition}: the largest i with first(i) at
   * most it.
   */
  static int memberIndex(int partition, int m, int n) {
    return (int) ((((long) partition + 1) * m - 1) / n);
  }

  /** The member that is to own {@code partition} among the sorted {@code members}, if any. */
  static Optional<String> targetOf(int partition, List<String> members, int n) {
    return members.isEmpty()
        ? Optional.empty()
        : Optional.of(members.get(memberIndex(partition, members.size(), n)));
  }
}
