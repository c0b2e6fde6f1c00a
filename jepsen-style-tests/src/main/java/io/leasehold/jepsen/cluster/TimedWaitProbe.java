package io.leasehold.jepsen.cluster;

/**
 * Run in a JVM with libfaketime preloaded: prints how many 50 ms timed waits fit in half a second.
 * About 10 when timed waits work; hundreds of thousands when the preload broke them (the JVM then
 * spins on every timed wait, as Ratis's and gRPC's threads would).
 */
public final class TimedWaitProbe {
  private TimedWaitProbe() {}

  public static void main(String[] args) throws InterruptedException {
    Object lock = new Object();
    long start = System.nanoTime();
    int waits = 0;
    while (System.nanoTime() - start < 500_000_000L) {
      synchronized (lock) {
        lock.wait(50);
      }
      waits++;
    }
    System.out.println(waits);
  }
}
