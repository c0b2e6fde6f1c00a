package io.leasehold.jepsen.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ports for node processes, below the kernel's ephemeral range. A port the kernel picks (bind to 0)
 * lies in that range, where an outgoing connection can take it as its source port while the node's
 * JVM is still starting, and the node then cannot bind it. This JVM walks the low range from a
 * random start, handing out no port twice before it wraps, each one bindable when handed out. Where
 * the range is unknown, the kernel picks.
 */
public final class FreePorts {
  private static final int LOW = 20000;
  private static final AtomicInteger NEXT =
      new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << 20));

  private FreePorts() {}

  public static int next() {
    int ephemeralLow = ephemeralRangeStart();
    int span = ephemeralLow - LOW;
    if (span < 4096) {
      return kernelPicked();
    }
    for (int tries = 0; tries < span; tries++) {
      int port = LOW + Math.floorMod(NEXT.getAndIncrement(), span);
      if (bindable(port)) {
        return port;
      }
    }
    throw new UncheckedIOException(
        new IOException("no free port in " + LOW + "-" + (ephemeralLow - 1)));
  }

  private static int ephemeralRangeStart() {
    // By lines: the file reports a size of 0, and a read sized by that can stop after one byte.
    try {
      return Integer.parseInt(
          Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
              .get(0)
              .strip()
              .split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int kernelPicked() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
