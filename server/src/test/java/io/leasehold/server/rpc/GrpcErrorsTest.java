package io.leasehold.server.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.leasehold.server.raft.ConsensusFailureException;
import io.leasehold.server.raft.ConsensusTimeoutException;
import io.leasehold.server.raft.ConsensusUnavailableException;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.junit.jupiter.api.Test;

class GrpcErrorsTest {
  @Test
  void aLeaderThatCouldNotConfirmAFollowersReadIsUnavailableNotInternal() {
    Throwable fromLeader =
        new CompletionException(
            new StateMachineException(
                "n1: query failed",
                new CompletionException(
                    new ReadIndexException("n1 could not confirm with a majority"))));
    assertEquals(
        Status.Code.UNAVAILABLE,
        GrpcErrors.toStatus(fromLeader, Optional.empty()).getStatus().getCode());
  }

  @Test
  void anyOtherStateMachineFaultStaysInternal() {
    Throwable fault =
        new StateMachineException("n1: query failed", new IllegalStateException("bug"));
    assertEquals(
        Status.Code.INTERNAL, GrpcErrors.toStatus(fault, Optional.empty()).getStatus().getCode());
  }

  @Test
  void aTimeoutIsUnavailableButNotCalledNoLeaderAndSaysTheWriteMayStillTakeEffect() {
    Throwable timeout =
        new CompletionException(new TimeoutIOException("n1: request #42 timed out after 3s"));
    Status status = GrpcErrors.toStatus(timeout, Optional.of("127.0.0.1:7001")).getStatus();
    assertEquals(Status.Code.UNAVAILABLE, status.getCode());
    assertTrue(
        status
            .getDescription()
            .startsWith(
                "no answer from the cluster in time (a write may still take effect): "
                    + "n1: request #42 timed out after 3s"),
        status.getDescription());
    assertTrue(
        status.getDescription().endsWith("(last known leader at 127.0.0.1:7001)"),
        status.getDescription());
  }

  @Test
  void noLeaderIsStillCalledThat() {
    Throwable notLeader =
        new NotLeaderException(
            org.apache.ratis.protocol.RaftGroupMemberId.valueOf(
                org.apache.ratis.protocol.RaftPeerId.valueOf("n2"),
                org.apache.ratis.protocol.RaftGroupId.randomId()),
            null,
            java.util.List.of());
    Status status = GrpcErrors.toStatus(notLeader, Optional.empty()).getStatus();
    assertEquals(Status.Code.UNAVAILABLE, status.getCode());
    assertTrue(
        status.getDescription().startsWith("no leader reachable with a quorum: "),
        status.getDescription());
  }

  @Test
  void theSeamsOwnExceptionsMapAsRaftsDid() {
    Status unavailable =
        GrpcErrors.toStatus(
                new CompletionException(
                    new ConsensusUnavailableException("n1 is not the leader", null)),
                Optional.of("127.0.0.1:7001"))
            .getStatus();
    assertEquals(Status.Code.UNAVAILABLE, unavailable.getCode());
    assertEquals(
        "no leader reachable with a quorum: n1 is not the leader (last known leader at 127.0.0.1:7001)",
        unavailable.getDescription());
    io.grpc.Metadata trailers =
        Status.trailersFromThrowable(
            GrpcErrors.toStatus(
                new ConsensusUnavailableException("closing", null), Optional.of("127.0.0.1:7001")));
    assertEquals("127.0.0.1:7001", trailers.get(GrpcErrors.LEADER_HINT));

    Status timeout =
        GrpcErrors.toStatus(new ConsensusTimeoutException("n1: timed out", null), Optional.empty())
            .getStatus();
    assertEquals(Status.Code.UNAVAILABLE, timeout.getCode());
    assertEquals(
        "no answer from the cluster in time (a write may still take effect): n1: timed out",
        timeout.getDescription());

    StateMachineException fault =
        new StateMachineException("n1: apply failed", new IllegalStateException("bug"));
    Status internal =
        GrpcErrors.toStatus(new ConsensusFailureException(fault), Optional.empty()).getStatus();
    assertEquals(Status.Code.INTERNAL, internal.getCode());
    assertEquals(
        String.valueOf(fault),
        internal.getDescription(),
        "the description Ratis's own exception gave");
    assertEquals(
        internal.getDescription(),
        GrpcErrors.toStatus(fault, Optional.empty()).getStatus().getDescription());

    Status plainIo =
        GrpcErrors.toStatus(new java.io.IOException("this node is stopping"), Optional.empty())
            .getStatus();
    assertEquals(Status.Code.UNAVAILABLE, plainIo.getCode());
  }

  @Test
  void anInvalidArgumentsDescriptionFitsInAClientsHeaders() {
    String message = "id: " + "\u00e9".repeat(100_000) + " is not a member";
    Status status =
        GrpcErrors.invalid(
                new io.leasehold.statemachine.core.InvalidArgumentException("id", message))
            .getStatus();
    assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode());
    assertTrue(status.getDescription().startsWith("id: "), status.getDescription());
    assertEquals(GrpcErrors.MAX_DESCRIPTION_CHARS, status.getDescription().length());
  }
}
