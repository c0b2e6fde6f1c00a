package io.leasehold.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.Status;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.junit.jupiter.api.Test;

class GrpcErrorsTest {
  @Test
  void aLeaderThatCouldNotConfirmAFollowersReadIsUnavailableNotInternal() {
    Throwable fromLeader = new CompletionException(new StateMachineException("n1: query failed",
        new CompletionException(new ReadIndexException("n1 could not confirm with a majority"))));
    assertEquals(Status.Code.UNAVAILABLE, GrpcErrors.toStatus(fromLeader, Optional.empty()).getStatus().getCode());
  }

  @Test
  void anyOtherStateMachineFaultStaysInternal() {
    Throwable fault = new StateMachineException("n1: query failed", new IllegalStateException("bug"));
    assertEquals(Status.Code.INTERNAL, GrpcErrors.toStatus(fault, Optional.empty()).getStatus().getCode());
  }
}
