package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.leasehold.statemachine.core.InvalidArgumentException;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.junit.jupiter.api.Test;

class RaftErrorsTest {
  private static final RaftGroupMemberId N2 =
      RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n2"), RaftGroupId.randomId());

  @Test
  void noLeaderCarriesTheSuggestedLeaderAndTheMessage() {
    NotLeaderException e =
        new NotLeaderException(N2, RaftPeer.newBuilder().setId("n1").build(), List.of());
    ConsensusUnavailableException ours =
        assertInstanceOf(
            ConsensusUnavailableException.class, RaftErrors.map(new CompletionException(e)));
    assertEquals(e.getMessage(), ours.getMessage());
    assertSame(e, ours.getCause());
    assertEquals(Optional.of("n1"), ours.leaderId());
  }

  @Test
  void eachKindMapsToItsOwn() {
    for (Throwable unavailable :
        List.of(
            new LeaderNotReadyException(N2),
            new RaftRetryFailureException(
                null, 3, org.apache.ratis.retry.RetryPolicies.noRetry(), null),
            new ReadIndexException("no majority"),
            new ResourceUnavailableException("full"),
            new AlreadyClosedException("closed"),
            new org.apache.ratis.protocol.exceptions.StaleReadException("behind index 7"),
            new org.apache.ratis.protocol.exceptions.GroupMismatchException("not hosted"))) {
      assertInstanceOf(
          ConsensusUnavailableException.class, RaftErrors.map(unavailable), unavailable.toString());
    }
    assertInstanceOf(
        ConsensusTimeoutException.class, RaftErrors.map(new TimeoutIOException("late")));
    assertInstanceOf(
        MembershipChangeInProgressException.class,
        RaftErrors.map(new ReconfigurationInProgressException("busy")));
    assertInstanceOf(
        MembershipChangeException.class, RaftErrors.map(new SetConfigurationException("refused")));
    assertInstanceOf(
        LeadershipTransferException.class, RaftErrors.map(new TransferLeadershipException("slow")));
    LeaderSteppingDownException other = new LeaderSteppingDownException("stepping down");
    ConsensusFailureException failure =
        assertInstanceOf(ConsensusFailureException.class, RaftErrors.map(other));
    assertEquals(other.toString(), failure.toString());
  }

  @Test
  void aStateMachineFaultThatCarriesBadInputOrUnavailabilityIsThat() {
    InvalidArgumentException bad = new InvalidArgumentException("name", "must not be empty");
    assertSame(bad, RaftErrors.map(new StateMachineException("n1: query failed", bad)));
    assertInstanceOf(
        ConsensusUnavailableException.class,
        RaftErrors.map(
            new StateMachineException(
                "n1: query failed",
                new CompletionException(
                    new ReadIndexException("n1 could not confirm with a majority")))));
    assertInstanceOf(
        ConsensusFailureException.class,
        RaftErrors.map(new StateMachineException("n1", new IllegalStateException("bug"))));
  }

  @Test
  void whatWasNeverRaftsPassesAsItWas() throws Exception {
    IOException io = new IOException("this node is stopping");
    assertSame(io, RaftErrors.map(new CompletionException(io)));
    CompletionException wrapped = new CompletionException(new TimeoutException("late"));
    CompletableFuture<Object> f = RaftErrors.mapped(CompletableFuture.failedFuture(wrapped));
    Throwable seen = f.handle((v, e) -> e).get();
    assertSame(wrapped, seen, "a failure that needs no mapping reaches the caller untouched");
    CompletableFuture<Object> g =
        RaftErrors.mapped(CompletableFuture.failedFuture(new AlreadyClosedException("closed")));
    assertInstanceOf(ConsensusUnavailableException.class, g.handle((v, e) -> e).get());
  }
}
