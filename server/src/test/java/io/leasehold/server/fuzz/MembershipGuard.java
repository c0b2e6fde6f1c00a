package io.leasehold.server.fuzz;

import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.RemoveMemberRequest;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Keeps the fuzzed cluster usable: membership calls are fuzzed with arguments that must be refused
 * (or change nothing), never with a valid new member (the cluster would wait for a node that does
 * not exist) nor the removal of a real one.
 *
 * <p>"Valid" here is the API's documented rule, stricter than any lenient parse: an id of 1-64
 * letters, digits, '.', '_' or '-' starting with a letter or digit, and two {@code host:port}
 * addresses, each a host name (letters, digits, '-' and '_' in labels) or IP literal and a port of
 * 1-65535 written as digits, the two ports different. A request this calls invalid must be refused;
 * if the server adds a member for one, the fuzz test has found a bug (and the call hangs while the
 * cluster waits for that member).
 */
final class MembershipGuard {
  private MembershipGuard() {}

  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  private static final Pattern HOST_NAME =
      Pattern.compile(
          "[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");
  private static final Pattern IPV6 = Pattern.compile("\\[[0-9A-Fa-f:.]+\\]");
  private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

  /** The request as it may be sent: a valid new member gets an invalid peer port. */
  static AddMemberRequest guard(AddMemberRequest r, List<Member> members) {
    Member m = r.getMember();
    boolean existing = members.stream().anyMatch(e -> e.getId().equals(m.getId()));
    if (!existing && validMember(m)) {
      String peer = m.getPeerAddress();
      return r.toBuilder()
          .setMember(
              m.toBuilder().setPeerAddress(peer.substring(0, peer.lastIndexOf(':') + 1) + "0"))
          .build();
    }
    return r;
  }

  /** The request as it may be sent: removing a member becomes removing one that is not there. */
  static RemoveMemberRequest guard(RemoveMemberRequest r, List<Member> members) {
    boolean existing = members.stream().anyMatch(e -> e.getId().equals(r.getId()));
    return existing ? r.toBuilder().setId(r.getId() + "-gone").build() : r;
  }

  static boolean validMember(Member m) {
    return ID.matcher(m.getId()).matches()
        && port(m.getPeerAddress()) > 0
        && port(m.getClientAddress()) > 0
        && port(m.getPeerAddress()) != port(m.getClientAddress());
  }

  /** The port of a valid {@code host:port}, or -1. */
  static int port(String address) {
    int colon = address.lastIndexOf(':');
    if (colon <= 0) {
      return -1;
    }
    String host = address.substring(0, colon);
    String port = address.substring(colon + 1);
    if (!(HOST_NAME.matcher(host).matches() || IPV6.matcher(host).matches())
        || !PORT.matcher(port).matches()) {
      return -1;
    }
    int p = Integer.parseInt(port);
    return p >= 1 && p <= 65535 ? p : -1;
  }
}
