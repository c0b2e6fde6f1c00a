package io.leasehold.proto;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * The partition of a key: {@code crc32(UTF-8 key) % 256}; the owner of partition n holds {@code
 * partition/<n>}.
 */
public final class Partitions {
  public static final int COUNT = 256;

  private Partitions() {}

  public static int of(String key) {
    CRC32 crc = new CRC32();
    crc.update(key.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % COUNT);
  }

  public static String leaseName(int partition) {
    if (partition < 0 || partition >= COUNT) {
      throw new IllegalArgumentException(
          "partition: must be 0-" + (COUNT - 1) + ", got " + partition);
    }
    return "partition/" + partition;
  }
}
