package io.leasehold.jepsen.workload;

/** Client threads that drive the cluster and record what they see, until stopped. */
public interface Workload {
  String name();

  void start(WorkloadContext ctx);

  /**
   * Stops the threads and waits for them; leaves the history complete (open operations stay open).
   */
  void stop();
}
