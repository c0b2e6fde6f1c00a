package io.leasehold.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** The ports test clusters run on: distinct, free, and below the kernel's ephemeral range. */
class FreePortsTest {
  private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  static boolean rangeKnown() {
    return Files.isReadable(RANGE);
  }

  @Test
  @EnabledIf("rangeKnown")
  void portsAreDistinctFreeAndBelowTheEphemeralRange() throws IOException {
    int ephemeralLow;
    try (FileInputStream in = new FileInputStream(RANGE.toFile())) {
      ephemeralLow =
          Integer.parseInt(
              new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip().split("\\s+")[0]);
    }
    int[] ports = TestCluster.freePorts(64);
    assertEquals(64, Arrays.stream(ports).distinct().count(), Arrays.toString(ports));
    for (int port : ports) {
      if (ephemeralLow > 24096) {
        assertTrue(port < ephemeralLow, port + " is in the ephemeral range from " + ephemeralLow);
      }
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(port));
      }
    }
  }
}
