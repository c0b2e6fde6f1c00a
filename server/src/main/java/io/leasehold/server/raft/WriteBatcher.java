package io.leasehold.server.raft;

import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.statemachine.core.LogFormat;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * Group commit for client writes. A write that finds fewer than {@code maxInFlight} entries of this
 * node in flight goes out at once, alone, so a lone client waits for nothing; the writes that
 * arrive while the limit is reached wait, and go out together as one log entry (up to {@link
 * LogFormat#MAX_BATCH} of them and {@link #MAX_BATCH_BYTES}) as soon as an entry in flight is
 * answered. Under load every Raft cost paid per entry (the request, the append to every log, the
 * sync, the commit, the apply's store commit) is then paid once per batch instead of once per
 * write.
 *
 * <p>Only client lease commands are batched ({@link LogFormat#batchable}), and only once the
 * cluster's log format allows batches; anything else goes out alone, at once.
 *
 * <p>A batch is one Raft request: it is resent whole, with the same ids, until it is answered, and
 * is given up as soon as any of its callers has gone, so that no write is applied after its caller
 * stopped waiting for it (see {@link Replicator}). The writes of a batch whose callers are still
 * there then fail as the request did, with a status that tells them to retry.
 */
final class WriteBatcher {
  /** Sends one command (perhaps a batch) as one Raft request. */
  @FunctionalInterface
  interface Sender {
    /**
     * {@code abandoned} says whether to stop resending: someone who waits for the answer has gone.
     */
    CompletableFuture<LogReply> send(LogCommand command, BooleanSupplier abandoned);
  }

  private record Pending(
      LogCommand command, BooleanSupplier gone, CompletableFuture<LogReply> reply) {}

  /**
   * The most bytes of commands a batch takes on: a command larger than the rest of it waits for the
   * next entry (one larger than this goes alone), so a batch stays far below the largest entry
   * Ratis takes, which only bounds a single request ({@code LeaseholdNode}).
   */
  static final int MAX_BATCH_BYTES = 1 << 20;

  private final Sender sender;
  private final IntSupplier logFormat;
  private final int maxInFlight;
  // Guarded by this.
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  private int inFlight;

  /**
   * @param logFormat the log format this node has applied ({@link LogFormat}); batches go out only
   *     from format 2, which every replica then applies alike
   * @param maxInFlight entries of batched writes this node keeps in flight at once
   */
  WriteBatcher(Sender sender, IntSupplier logFormat, int maxInFlight) {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be at least 1, got " + maxInFlight);
    }
    this.sender = sender;
    this.logFormat = logFormat;
    this.maxInFlight = maxInFlight;
  }

  /** Proposes {@code command}; {@code gone} says whether its caller has stopped waiting. */
  CompletableFuture<LogReply> submit(LogCommand command, BooleanSupplier gone) {
    if (!LogFormat.batchable(command) || logFormat.getAsInt() < LogFormat.BATCHES) {
      return sender.send(command, gone);
    }
    Pending p = new Pending(command, gone, new CompletableFuture<>());
    boolean sendNow;
    synchronized (this) {
      sendNow = inFlight < maxInFlight;
      if (sendNow) {
        inFlight++;
      } else {
        waiting.add(p);
      }
    }
    if (sendNow) {
      send(List.of(p));
    }
    return p.reply;
  }

  /** Writes waiting for an entry in flight to be answered: for tests and metrics. */
  synchronized int waiting() {
    return waiting.size();
  }

  private void send(List<Pending> batch) {
    LogCommand command;
    if (batch.size() == 1) {
      command = batch.get(0).command;
    } else {
      CommandBatch.Builder b = CommandBatch.newBuilder();
      batch.forEach(p -> b.addCommands(p.command));
      command = LogCommand.newBuilder().setBatch(b).build();
    }
    BooleanSupplier anyGone =
        () -> {
          for (Pending p : batch) {
            if (p.gone.getAsBoolean()) {
              return true;
            }
          }
          return false;
        };
    CompletableFuture<LogReply> sent;
    try {
      sent = sender.send(command, anyGone);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete(
        (reply, error) -> {
          // The next batch first: its writes have waited longest, and the answers below may take a
          // while.
          sendNext();
          deliver(batch, reply, error);
        });
  }

  private void sendNext() {
    List<Pending> next = new ArrayList<>();
    synchronized (this) {
      long bytes = 0;
      while (next.size() < LogFormat.MAX_BATCH && !waiting.isEmpty()) {
        Pending p = waiting.peek();
        if (p.gone.getAsBoolean()) {
          waiting.poll();
          p.reply.completeExceptionally(
              new CancellationException("the caller stopped waiting before the write was sent"));
          continue;
        }
        int size = p.command.getSerializedSize();
        if (!next.isEmpty() && bytes + size > MAX_BATCH_BYTES) {
          break;
        }
        waiting.poll();
        next.add(p);
        bytes += size;
      }
      if (next.isEmpty()) {
        inFlight--;
        return;
      }
    }
    send(next);
  }

  private static void deliver(List<Pending> batch, LogReply reply, Throwable error) {
    if (error != null) {
      batch.forEach(p -> p.reply.completeExceptionally(error));
      return;
    }
    if (batch.size() == 1) {
      batch.get(0).reply.complete(reply);
      return;
    }
    if (!reply.hasBatch() || reply.getBatch().getRepliesCount() != batch.size()) {
      IllegalStateException wrong =
          new IllegalStateException(
              "a batch of "
                  + batch.size()
                  + " writes was answered with "
                  + (reply.hasBatch()
                      ? reply.getBatch().getRepliesCount() + " replies"
                      : "a " + reply.getReplyCase() + " reply"));
      batch.forEach(p -> p.reply.completeExceptionally(wrong));
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).reply.complete(reply.getBatch().getReplies(i));
    }
  }
}
