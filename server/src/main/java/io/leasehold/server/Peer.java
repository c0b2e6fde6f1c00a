package io.leasehold.server;

import java.util.regex.Pattern;

/**
 * One member of the cluster: its id, the host it is reached at, its Raft port and its client (gRPC
 * API) port.
 */
public record Peer(String id, String host, int peerPort, int clientPort) {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  public Peer {
    if (id == null || !ID.matcher(id).matches()) {
      throw new IllegalArgumentException(
          "peer id: must be 1-64 letters, digits, '.', '_' or '-' starting with a letter or digit, got \""
              + id
              + "\"");
    }
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("peer " + id + ": host must not be empty");
    }
    checkPort(id, "peer port", peerPort);
    checkPort(id, "client port", clientPort);
    if (peerPort == clientPort) {
      throw new IllegalArgumentException(
          "peer " + id + ": peer port and client port must differ, both are " + peerPort);
    }
  }

  private static void checkPort(String id, String what, int port) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException(
          "peer " + id + ": " + what + " must be 1-65535, got " + port);
    }
  }

  /** Parses {@code id=host:peerPort:clientPort}. */
  public static Peer parse(String spec) {
    int eq = spec.indexOf('=');
    if (eq <= 0) {
      throw new IllegalArgumentException(
          "peer \""
              + spec
              + "\": expected id=host:peerPort:clientPort, e.g. n1=127.0.0.1:7401:7400");
    }
    String id = spec.substring(0, eq).trim();
    String rest = spec.substring(eq + 1).trim();
    int last = rest.lastIndexOf(':');
    int middle = last <= 0 ? -1 : rest.lastIndexOf(':', last - 1);
    if (middle <= 0) {
      throw new IllegalArgumentException(
          "peer \""
              + spec
              + "\": expected id=host:peerPort:clientPort, e.g. n1=127.0.0.1:7401:7400");
    }
    String host = rest.substring(0, middle);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new Peer(
        id,
        host,
        port(spec, "peer port", rest.substring(middle + 1, last)),
        port(spec, "client port", rest.substring(last + 1)));
  }

  private static int port(String spec, String what, String text) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "peer \"" + spec + "\": " + what + " must be a number, got \"" + text + "\"");
    }
  }

  public String peerAddress() {
    return hostPort(peerPort);
  }

  public String clientAddress() {
    return hostPort(clientPort);
  }

  private String hostPort(int port) {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  @Override
  public String toString() {
    return id + "=" + hostPort(peerPort) + ":" + clientPort;
  }
}
