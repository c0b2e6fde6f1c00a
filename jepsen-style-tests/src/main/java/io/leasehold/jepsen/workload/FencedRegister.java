package io.leasehold.jepsen.workload;

import io.leasehold.client.FencingGuard;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.RegisterWrite;
import io.leasehold.jepsen.history.UnfencedWrite;

/**
 * The in-test resources a lock holder writes to: a register that refuses tokens lower than the
 * highest it has seen (the SDK's {@link FencingGuard}), and a log without fencing that accepts
 * everything — what a resource would suffer without tokens. Every write is recorded.
 */
final class FencedRegister {
  private final FencingGuard guard = new FencingGuard();
  private final Recorder recorder;
  private long seq;

  FencedRegister(Recorder recorder) {
    this.recorder = recorder;
  }

  /** Writes as {@code client} with {@code token}; true if the register accepted it. */
  synchronized boolean write(String resource, String client, long token) {
    boolean accepted = guard.tryAdvance(resource, token);
    recorder.registerWrite(
        new RegisterWrite(++seq, resource, client, token, accepted, System.nanoTime()));
    recorder.unfenced(new UnfencedWrite(resource, client, token, System.nanoTime()));
    return accepted;
  }
}
