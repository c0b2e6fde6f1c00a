package io.leasehold.grpc;

import java.util.ArrayList;
import java.util.List;

/** Cluster endpoints written as {@code host:port[,host:port...]}, checked one by one. */
final class Endpoints {
  private Endpoints() {}

  /**
   * The endpoints of a comma-separated list, trimmed, in the order given.
   *
   * @param source where the list came from (the target's authority, a property, a variable), named
   *     in errors
   * @throws IllegalArgumentException naming the source, the entry and the rule it breaks
   */
  static List<String> parse(String source, String list) {
    List<String> out = new ArrayList<>();
    String[] entries = list.split(",", -1);
    for (int i = 0; i < entries.length; i++) {
      String e = entries[i].trim();
      String rule = problem(e);
      if (rule != null) {
        throw new IllegalArgumentException(
            source
                + ": each endpoint must be host:port with a port from 1 to 65535, separated by ','; "
                + "entry "
                + (i + 1)
                + " \""
                + e
                + "\" "
                + rule);
      }
      out.add(e);
    }
    return out;
  }

  /** What is wrong with one entry, or null if it is a good {@code host:port}. */
  private static String problem(String entry) {
    if (entry.isEmpty()) {
      return "is empty";
    }
    int colon = entry.lastIndexOf(':');
    if (colon < 0 || (entry.startsWith("[") && colon < entry.indexOf(']'))) {
      return "has no port";
    }
    String host = entry.substring(0, colon);
    if (host.isEmpty() || host.equals("[]")) {
      return "has no host";
    }
    if (host.startsWith("[") != host.endsWith("]")
        || (!host.startsWith("[") && host.contains(":"))) {
      return "has an IPv6 host outside brackets, e.g. [::1]:7400";
    }
    String port = entry.substring(colon + 1);
    if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return "has a port that is not a number";
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      return "has port " + p + ", out of range";
    }
    return null;
  }
}
