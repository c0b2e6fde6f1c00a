package io.leasehold.jepsen.run;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.history.Op;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short fault schedule with mutual TLS, part of {@code mvn verify}: three server processes with
 * TLS on the client, metrics and Raft ports and client certificates required, every workload's
 * clients each presenting a certificate of its own whose CN is the holder it acts as; a killed, an
 * isolated and a paused leader; then every checker.
 */
class MutualTlsScheduleIT {
  @TempDir Path certs;

  @Test
  void killsPartitionsAndPausesUnderMutualTlsAndEveryCheckerPasses() throws Exception {
    long started = System.nanoTime();
    TestCertificates tls = new TestCertificates(certs);
    JepsenRun.Result r =
        JepsenRun.run(
            new JepsenRun.Config(
                "tls",
                Runs.nodes(),
                Runs.jar(),
                Runs.reports(),
                Runs.seed(),
                Schedules::mutualTlsSchedule,
                Duration.ofSeconds(10),
                2,
                Optional.of(tls)));
    Runs.assertPassed(r);

    // Every node ran with TLS on both transports and required client certificates.
    for (int i = 1; i <= Runs.nodes(); i++) {
      String log = Files.readString(r.reportDir().resolve("n" + i + ".log"));
      assertTrue(
          log.contains("(TLS, client certificates required)") && log.contains("(mutual TLS)"),
          "n"
              + i
              + " started with mutual TLS on both transports; its log:\n"
              + log.lines().limit(40).toList());
    }
    // Every holder a client acted as is the CN of the certificate it presented (the harness
    // opens a holder's channels and SDK client with the certificate of that name only).
    Set<String> holders = new TreeSet<>();
    for (Op op : r.history().ops()) {
      if (op.isInvoke()) {
        op.holder().ifPresent(holders::add);
      }
    }
    Set<String> issued = tls.clientNames();
    assertTrue(
        issued.containsAll(holders),
        "holders without a certificate of their name: "
            + holders.stream().filter(h -> !issued.contains(h)).toList());
    assertTrue(holders.size() > 5, "the workloads acted as several holders: " + holders);
    assertTrue(
        issued.contains(Cluster.OPERATOR),
        "the harness's own calls have their identity: " + issued);
    System.out.println(
        "mutual TLS schedule: "
            + Duration.ofNanos(System.nanoTime() - started).toSeconds()
            + " s; client certificates: "
            + issued.size());
  }
}
