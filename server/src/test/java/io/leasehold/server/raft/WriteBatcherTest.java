package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReplyBatch;
import io.leasehold.statemachine.core.LogFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class WriteBatcherTest {
  /** What the batcher sent, each with the future the test completes as Raft would. */
  record Sent(LogCommand command, BooleanSupplier abandoned, CompletableFuture<LogReply> reply) {}

  final List<Sent> sent = new ArrayList<>();
  final AtomicInteger format = new AtomicInteger(LogFormat.BATCHES);
  final WriteBatcher batcher =
      new WriteBatcher(
          (command, abandoned) -> {
            Sent s = new Sent(command, abandoned, new CompletableFuture<>());
            sent.add(s);
            return s.reply;
          },
          format::get,
          1);

  static LogCommand acquire(String name) {
    return LogCommand.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setName(name).setHolder("h"))
        .build();
  }

  static LogReply granted(String name) {
    return LogReply.newBuilder()
        .setAcquire(AcquireResponse.newBuilder().setRevision(name.hashCode()))
        .build();
  }

  /** Answers a batch as the state machine does: one reply a command, in order. */
  static LogReply answer(LogCommand command) {
    if (!command.hasBatch()) {
      return granted(command.getAcquire().getName());
    }
    ReplyBatch.Builder b = ReplyBatch.newBuilder();
    command
        .getBatch()
        .getCommandsList()
        .forEach(c -> b.addReplies(granted(c.getAcquire().getName())));
    return LogReply.newBuilder().setBatch(b).build();
  }

  static final BooleanSupplier WAITING = () -> false;

  @Test
  void aLoneWriteGoesOutAtOnceAlone() {
    CompletableFuture<LogReply> r = batcher.submit(acquire("a"), WAITING);
    assertEquals(1, sent.size());
    assertEquals(acquire("a"), sent.get(0).command);
    sent.get(0).reply.complete(answer(sent.get(0).command));
    assertEquals(granted("a"), r.join());
  }

  @Test
  void writesThatArriveWhileOneIsInFlightGoOutTogetherAndEachGetsItsOwnReply() {
    CompletableFuture<LogReply> first = batcher.submit(acquire("a"), WAITING);
    List<CompletableFuture<LogReply>> waiting = new ArrayList<>();
    for (String n : List.of("b", "c", "d")) {
      waiting.add(batcher.submit(acquire(n), WAITING));
    }
    assertEquals(1, sent.size(), "the others wait for the one in flight");
    assertEquals(3, batcher.waiting());

    sent.get(0).reply.complete(answer(sent.get(0).command));
    assertEquals(granted("a"), first.join());
    assertEquals(2, sent.size());
    LogCommand batch = sent.get(1).command;
    assertTrue(batch.hasBatch());
    assertEquals(
        List.of(acquire("b"), acquire("c"), acquire("d")), batch.getBatch().getCommandsList());

    sent.get(1).reply.complete(answer(batch));
    assertEquals(granted("b"), waiting.get(0).join());
    assertEquals(granted("c"), waiting.get(1).join());
    assertEquals(granted("d"), waiting.get(2).join());
    assertEquals(0, batcher.waiting());
  }

  @Test
  void aBatchCarriesAtMostMaxBatchCommands() {
    batcher.submit(acquire("first"), WAITING);
    for (int i = 0; i < LogFormat.MAX_BATCH + 10; i++) {
      batcher.submit(acquire("n" + i), WAITING);
    }
    sent.get(0).reply.complete(answer(sent.get(0).command));
    assertEquals(LogFormat.MAX_BATCH, sent.get(1).command.getBatch().getCommandsCount());
    sent.get(1).reply.complete(answer(sent.get(1).command));
    assertEquals(10, sent.get(2).command.getBatch().getCommandsCount());
  }

  @Test
  void underLogFormatOneEveryWriteGoesOutAlone() {
    format.set(LogFormat.FIRST);
    batcher.submit(acquire("a"), WAITING);
    batcher.submit(acquire("b"), WAITING);
    assertEquals(2, sent.size());
    assertFalse(sent.get(1).command.hasBatch());
  }

  @Test
  void commandsThatAreNotBatchedGoOutAtOnce() {
    batcher.submit(acquire("a"), WAITING);
    LogCommand ban = LogCommand.newBuilder().setBan(BanRequest.newBuilder().setHolder("x")).build();
    batcher.submit(ban, WAITING);
    assertEquals(2, sent.size());
    assertEquals(ban, sent.get(1).command);
  }

  @Test
  void aWriteWhoseCallerLeftBeforeItWasSentIsNeverSent() {
    batcher.submit(acquire("a"), WAITING);
    AtomicBoolean gone = new AtomicBoolean();
    CompletableFuture<LogReply> abandoned = batcher.submit(acquire("b"), gone::get);
    CompletableFuture<LogReply> kept = batcher.submit(acquire("c"), WAITING);
    gone.set(true);
    sent.get(0).reply.complete(answer(sent.get(0).command));
    assertEquals(acquire("c"), sent.get(1).command, "only the write someone waits for");
    org.junit.jupiter.api.Assertions.assertThrows(CancellationException.class, abandoned::join);
    sent.get(1).reply.complete(answer(sent.get(1).command));
    assertEquals(granted("c"), kept.join());
  }

  @Test
  void aBatchIsAbandonedAsSoonAsAnyOfItsCallersLeaves() {
    batcher.submit(acquire("a"), WAITING);
    AtomicBoolean gone = new AtomicBoolean();
    batcher.submit(acquire("b"), WAITING);
    batcher.submit(acquire("c"), gone::get);
    sent.get(0).reply.complete(answer(sent.get(0).command));
    Sent batch = sent.get(1);
    assertFalse(batch.abandoned.getAsBoolean());
    gone.set(true);
    assertTrue(
        batch.abandoned.getAsBoolean(), "no resend once a caller of the batch stopped waiting");
  }

  @Test
  void aFailedBatchFailsEveryWriteInItAndTheNextBatchStillGoes() {
    batcher.submit(acquire("a"), WAITING);
    CompletableFuture<LogReply> b = batcher.submit(acquire("b"), WAITING);
    CompletableFuture<LogReply> c = batcher.submit(acquire("c"), WAITING);
    sent.get(0).reply.complete(answer(sent.get(0).command));
    CompletableFuture<LogReply> d = batcher.submit(acquire("d"), WAITING);
    IllegalStateException boom = new IllegalStateException("no leader");
    sent.get(1).reply.completeExceptionally(boom);
    assertSame(
        boom,
        org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, b::join)
            .getCause());
    assertSame(
        boom,
        org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, c::join)
            .getCause());
    assertEquals(acquire("d"), sent.get(2).command);
    sent.get(2).reply.complete(answer(sent.get(2).command));
    assertEquals(granted("d"), d.join());
  }

  @Test
  void aBatchAnsweredWithTheWrongNumberOfRepliesFailsRatherThanMisdelivers() {
    batcher.submit(acquire("a"), WAITING);
    CompletableFuture<LogReply> b = batcher.submit(acquire("b"), WAITING);
    batcher.submit(acquire("c"), WAITING);
    sent.get(0).reply.complete(answer(sent.get(0).command));
    sent.get(1)
        .reply
        .complete(
            LogReply.newBuilder()
                .setBatch(ReplyBatch.newBuilder().addReplies(granted("b")))
                .build());
    assertInstanceOf(
        IllegalStateException.class,
        org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, b::join)
            .getCause());
  }
}
