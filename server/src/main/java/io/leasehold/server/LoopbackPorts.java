package io.leasehold.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Free ports for nodes that tests and benchmarks start on loopback (the test kit's clusters, the
 * project's own tests, the node processes of {@code leasehold bench}; the fault suite, which knows
 * the server only as a packaged jar, keeps its own copy), taken below the kernel's ephemeral range:
 * a port picked there (bind to 0) can become the source port of some outgoing connection before the
 * node binds it, all the more while a node process's JVM starts, and test JVMs run side by side
 * open many. Each JVM walks the range from a random start, so it hands out no port twice until it
 * wraps around. Falls back to the kernel's pick where the range is unknown.
 */
public final class LoopbackPorts {
  private static final int LOW_PORTS = 20000;
  private static final AtomicInteger NEXT_PORT =
      new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << 20));

  private LoopbackPorts() {}

  /** {@code count} distinct ports, each bindable when handed out. */
  public static int[] free(int count) throws IOException {
    int ephemeralLow = ephemeralRangeStart();
    if (ephemeralLow - LOW_PORTS < 4096) {
      return kernelPickedPorts(count);
    }
    int span = ephemeralLow - LOW_PORTS;
    int[] ports = new int[count];
    for (int i = 0; i < count; i++) {
      int tries = 0;
      do {
        if (++tries > span) {
          throw new IOException("no free port in " + LOW_PORTS + "-" + (ephemeralLow - 1));
        }
        ports[i] = LOW_PORTS + Math.floorMod(NEXT_PORT.getAndIncrement(), span);
      } while (!bindable(ports[i]));
    }
    return ports;
  }

  private static int ephemeralRangeStart() {
    // By lines: the file reports a size of 0, and a read sized by that can stop after one byte.
    try {
      String range =
          Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).strip();
      return Integer.parseInt(range.split("\\s+")[0]);
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

  private static int[] kernelPickedPorts(int count) throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        ServerSocket s = new ServerSocket(0);
        s.setReuseAddress(true);
        sockets.add(s);
        ports[i] = s.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket s : sockets) {
        s.close();
      }
    }
  }
}
