package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.SetLogFormatResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * When a linearizable read may go ahead: only after a barrier proposed after it has been applied
 * here.
 */
class ReadBarrierTest {
  private final List<CompletableFuture<LogReply>> proposed = new CopyOnWriteArrayList<>();
  private final List<LogCommand> commands = new CopyOnWriteArrayList<>();
  private final AtomicLong applied = new AtomicLong();
  private final List<Long> behind = new CopyOnWriteArrayList<>();

  private ReadBarrier barrier(Duration timeout) {
    return new ReadBarrier(
        c -> {
          commands.add(c);
          CompletableFuture<LogReply> f = new CompletableFuture<>();
          proposed.add(f);
          return f;
        },
        applied::get,
        behind::add,
        timeout);
  }

  private static LogReply at(long index) {
    return LogReply.newBuilder()
        .setSetLogFormat(SetLogFormatResponse.newBuilder().setRevision(index))
        .build();
  }

  @Test
  void readsThatArriveWhileABarrierIsInFlightWaitForTheNextOne() throws Exception {
    try (ReadBarrier b = barrier(Duration.ofSeconds(10))) {
      CompletableFuture<Long> first = b.await();
      CompletableFuture<Long> second = b.await();
      CompletableFuture<Long> third = b.await();
      assertEquals(1, proposed.size(), "one barrier in flight");
      assertEquals(ReadBarrier.BARRIER, commands.get(0));

      applied.set(10);
      proposed.get(0).complete(at(10));
      assertEquals(10, first.get(5, TimeUnit.SECONDS));
      // The others arrived after the first barrier was proposed: it proves nothing for them.
      assertFalse(
          second.isDone() || third.isDone(), "a barrier proposed before a read does not serve it");
      assertEquals(2, proposed.size(), "the next barrier goes out at once, for both");

      applied.set(11);
      proposed.get(1).complete(at(11));
      assertEquals(11, second.get(5, TimeUnit.SECONDS));
      assertEquals(11, third.get(5, TimeUnit.SECONDS));
      assertEquals(2, proposed.size(), "no barrier is proposed when no read waits");
    }
  }

  @Test
  void aReadWaitsUntilThisNodeHasAppliedItsBarrier() throws Exception {
    try (ReadBarrier b = barrier(Duration.ofSeconds(10))) {
      applied.set(15);
      CompletableFuture<Long> read = b.await();
      proposed.get(0).complete(at(20));
      assertFalse(read.isDone(), "committed at 20, applied here only to 15");
      assertEquals(List.of(20L), behind, "told that this node is behind its barrier");
      applied.set(19);
      b.advanced(19);
      assertFalse(read.isDone());
      applied.set(20);
      b.advanced(20);
      assertEquals(20, read.get(5, TimeUnit.SECONDS));
    }
  }

  @Test
  void aBarrierThatFailsOrComesBackWithoutAnIndexFailsItsReads() {
    try (ReadBarrier b = barrier(Duration.ofSeconds(10))) {
      CompletableFuture<Long> failed = b.await();
      proposed.get(0).completeExceptionally(new IllegalStateException("no leader"));
      assertInstanceOf(
          IllegalStateException.class,
          assertThrows(ExecutionException.class, () -> failed.get(5, TimeUnit.SECONDS)).getCause());

      CompletableFuture<Long> noIndex = b.await();
      proposed.get(1).complete(LogReply.getDefaultInstance());
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> noIndex.get(5, TimeUnit.SECONDS));
      assertTrue(e.getCause().getMessage().contains("without its log index"), e.toString());
    }
  }

  @Test
  void aNodeThatNeverAppliesItsBarrierFailsTheReadAfterTheTimeout() {
    try (ReadBarrier b = barrier(Duration.ofMillis(200))) {
      CompletableFuture<Long> read = b.await();
      proposed.get(0).complete(at(50));
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
      assertInstanceOf(TimeoutException.class, e.getCause());
    }
  }
}
