package io.leasehold.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.TestCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** ManyClients at a tiny scale against a node in this JVM, so that the tool keeps working. */
class ManyClientsTest {
  /** Runs the tool as main does; returns the exit code, stdout and stderr. */
  private static String[] execute(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(new ManyClients());
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute(args);
    return new String[] {Integer.toString(code), out.toString(), err.toString()};
  }

  @Test
  void badCountsAreRefusedAsUsageErrors() {
    String[] r = execute("--clients", "0");
    assertEquals("2", r[0]);
    assertTrue(r[2].contains("--clients: must be at least 1"), r[2]);
  }

  @Test
  void fiveClientsOfTwentyLeasesReportTheirHeapAndThreadsAndTheSurvivorsKeepTheirLeases()
      throws Exception {
    Path dir = Files.createTempDirectory("many-clients-");
    int[] ports = TestCluster.freePorts(2);
    Peer peer = new Peer("n1", "127.0.0.1", ports[0], ports[1]);
    LeaseholdNode node =
        LeaseholdNode.start(
            NodeConfig.builder().id("n1").peers(List.of(peer)).dataDir(dir.resolve("n1")).build());
    try {
      TestCluster.await(
          "a ready leader",
          Duration.ofSeconds(60),
          () -> node.isLeader() && node.diagnostics().ticker().scheduler().isActive());
      String[] r =
          execute(
              "--endpoints",
              peer.clientAddress(),
              "--clients",
              "5",
              "--leases",
              "20",
              "--ttl",
              "5s",
              "--watch",
              "2s",
              "--histogram",
              "5");
      assertEquals("0", r[0], r[2]);
      JsonObject json = JsonParser.parseString(r[1].trim()).getAsJsonObject();
      assertEquals(100, json.get("leases").getAsLong(), r[1]);
      assertEquals(2, json.get("closed_clients").getAsInt(), r[1]);
      assertEquals(60, json.get("survivor_leases").getAsLong(), r[1]);
      assertEquals(0, json.get("not_valid_before_close").getAsLong(), r[1]);
      assertEquals(0, json.get("survivor_lost").getAsLong(), r[1]);
      assertEquals(0, json.get("survivor_not_held_by_cluster").getAsLong(), r[1]);
      assertTrue(json.get("threads_with_clients").getAsInt() > 0, r[1]);
      assertTrue(json.getAsJsonObject("thread_groups").size() > 0, r[1]);
      assertTrue(json.getAsJsonArray("per_lease_by_class").size() <= 5, r[1]);
      assertTrue(json.has("heap_per_lease_bytes"), r[1]);
    } finally {
      node.close();
      Dirs.deleteRecursively(dir);
    }
  }
}
