package io.leasehold.client;

import java.time.Instant;

/**
 * One admin or auth action in the audit history.
 *
 * @param revision the log entry that recorded it
 * @param time when, as the leader stamped it
 * @param identity who; empty when authentication was off
 * @param action what, e.g. {@code set_policy}, {@code grant_role}, {@code remove_member}
 * @param target on what: a namespace, holder, name, role, identity or member
 * @param outcome {@code ok}, or why it was refused or failed
 * @param detail the request's other arguments, in short
 */
public record AuditRecord(
    long revision,
    Instant time,
    String identity,
    String action,
    String target,
    String outcome,
    String detail) {}
