package io.leasehold.statemachine.core;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;

/** Conversions between stored microseconds and protobuf times. */
public final class Times {
  private Times() {}

  public static long micros(Duration d) {
    return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNanos() / 1_000);
  }

  public static long micros(Timestamp t) {
    return Math.addExact(Math.multiplyExact(t.getSeconds(), 1_000_000L), t.getNanos() / 1_000);
  }

  public static long micros(java.time.Duration d) {
    return d.toNanos() / 1_000;
  }

  public static Duration duration(long micros) {
    return Duration.newBuilder()
        .setSeconds(Math.floorDiv(micros, 1_000_000L))
        .setNanos((int) Math.floorMod(micros, 1_000_000L) * 1_000)
        .build();
  }

  public static Timestamp timestamp(long micros) {
    return Timestamp.newBuilder()
        .setSeconds(Math.floorDiv(micros, 1_000_000L))
        .setNanos((int) Math.floorMod(micros, 1_000_000L) * 1_000)
        .build();
  }
}
