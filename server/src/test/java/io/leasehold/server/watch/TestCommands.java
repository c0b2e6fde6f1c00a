package io.leasehold.server.watch;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.LogCommand;

/** Log commands for tests that apply entries to a core and hand the results to a hub themselves. */
final class TestCommands {
  private TestCommands() {}

  /**
   * An acquisition of {@code name} by holder "h" for 60 s, as the log entry at {@code index}
   * (leader time: index seconds).
   */
  static LogCommand acquire(String name, long index) {
    return LogCommand.newBuilder()
        .setLeaderTimeMicros(1_000_000 * index)
        .setAcquire(
            AcquireRequest.newBuilder()
                .setName(name)
                .setHolder("h")
                .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60)))
        .build();
  }
}
