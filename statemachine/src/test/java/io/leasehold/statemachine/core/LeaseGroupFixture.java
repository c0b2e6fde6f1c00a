package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;

import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.store.KvStore;
import java.io.IOException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A core fixture with a lease group beside the meta group's {@link #core}
 * (docs/design/multi-raft.md): lease group 1, on a store of its own, applying log format 6 and
 * owning namespace {@code lock}.
 */
abstract class LeaseGroupFixture extends CoreFixture {
  protected KvStore groupStore;
  protected LeaseCore group;
  private long groupIndex;

  @BeforeEach
  void openGroup() throws IOException {
    groupStore = newStore(tempDir.resolve("group-1"));
    group = new LeaseCore(groupStore, 1);
    toGroup(format());
    toGroup(
        LogCommand.newBuilder()
            .setAdoptNamespace(
                AdoptNamespace.newBuilder().setNamespace("lock").setEpoch(1).setGroup(1)));
  }

  @AfterEach
  void closeGroup() {
    if (groupStore != null) {
      groupStore.close();
    }
  }

  /** Raises a core to log format 6. */
  protected static LogCommand.Builder format() {
    return LogCommand.newBuilder()
        .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.GROUPS));
  }

  /** Applies {@code command} as the lease group's next entry, stamped {@code timeMicros}. */
  protected ApplyResult toGroup(LogCommand.Builder command, long timeMicros) throws IOException {
    return group.apply(TERM, ++groupIndex, command.setLeaderTimeMicros(timeMicros).build());
  }

  protected LogReply toGroup(LogCommand.Builder command) throws IOException {
    return toGroup(command, T0).reply();
  }
}
