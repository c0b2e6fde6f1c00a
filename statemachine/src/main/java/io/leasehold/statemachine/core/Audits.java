package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.AuditRecord;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import java.util.Optional;

/** Which log commands the audit history records, and what it says of each. */
final class Audits {
  private Audits() {}

  /** The audit record of an admin or auth command as applied; empty for every other command. */
  static Optional<AuditEntry> entry(LogCommand c, LogReply reply, String caller, long nowMicros) {
    AuditEntry.Builder e =
        AuditEntry.newBuilder().setIdentity(caller).setTime(Times.timestamp(nowMicros));
    switch (c.getCommandCase()) {
      case SET_POLICY ->
          e.setAction("set_policy")
              .setTarget(namespace(c.getSetPolicy().getNamespace()))
              .setDetail(shortText(c.getSetPolicy().getPolicy().toString()));
      case DELETE_POLICY ->
          e.setAction("delete_policy").setTarget(namespace(c.getDeletePolicy().getNamespace()));
      case BAN ->
          e.setAction("ban")
              .setTarget(c.getBan().getHolder())
              .setDetail(shortText(c.getBan().getReason()));
      case UNBAN -> e.setAction("unban").setTarget(c.getUnban().getHolder());
      case REVOKE ->
          e.setAction("revoke")
              .setTarget(c.getRevoke().getName())
              .setDetail(
                  shortText(
                      (c.getRevoke().getToken() != 0
                              ? "token " + c.getRevoke().getToken() + "; "
                              : "")
                          + c.getRevoke().getReason()));
      case ADD_ROLE ->
          e.setAction("add_role")
              .setTarget(c.getAddRole().getRole().getName())
              .setDetail(
                  c.getAddRole().getRole().getPermission()
                      + (c.getAddRole().getRole().getPrefixesCount() == 0
                          ? " on every name"
                          : " on "
                              + shortText(
                                  String.join(", ", c.getAddRole().getRole().getPrefixesList()))));
      case REMOVE_ROLE -> e.setAction("remove_role").setTarget(c.getRemoveRole().getName());
      case GRANT_ROLE ->
          e.setAction("grant_role")
              .setTarget(c.getGrantRole().getIdentity())
              .setDetail("role " + c.getGrantRole().getRole());
      case REVOKE_ROLE ->
          e.setAction("revoke_role")
              .setTarget(c.getRevokeRole().getIdentity())
              .setDetail("role " + c.getRevokeRole().getRole());
      case BOOTSTRAP_ADMIN ->
          e.setAction("bootstrap_admin")
              .setTarget(c.getBootstrapAdmin().getIdentity())
              .setDetail("role admin");
      case AUDIT_RECORD -> {
        AuditRecord r = c.getAuditRecord();
        return Optional.of(
            e.setAction(shortText(r.getAction()))
                .setTarget(shortText(r.getTarget()))
                .setOutcome(shortText(r.getOutcome()))
                .setDetail(shortText(r.getDetail()))
                .build());
      }
      default -> {
        return Optional.empty();
      }
    }
    return Optional.of(e.setOutcome(outcome(reply)).build());
  }

  private static String outcome(LogReply reply) {
    if (reply.hasInvalid()) {
      return "invalid: " + shortText(reply.getInvalid().getMessage());
    }
    if (reply.hasRefused()) {
      return "refused: " + shortText(reply.getRefused().getMessage());
    }
    return "ok";
  }

  private static String namespace(String ns) {
    return ns.isEmpty() ? "(default)" : ns;
  }

  /** Audit records stay small whatever the request carried. */
  static String shortText(String s) {
    String flat = s.replace('\n', ' ').trim();
    return flat.length() <= 300 ? flat : flat.substring(0, 299) + "…";
  }
}
