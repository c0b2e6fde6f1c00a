package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LogCommand;

/**
 * What a log entry may carry and how tokens derive from its position, by log format. The format is
 * replicated state: it rises only through a {@code SetLogFormat} entry, which the leader proposes
 * once every member runs code that knows the new format, so every replica applies every entry under
 * the same format.
 *
 * <ul>
 *   <li>1: one command an entry; a lease's token is the index of the entry that granted it.
 *   <li>2: an entry may carry a batch of client commands; a lease's token is {@code index * 256 +
 *       position}, the command's position in the entry (0 for an entry with one command). Tokens
 *       granted under format 1 are indexes, so smaller than every token granted after the switch:
 *       tokens still strictly increase over every grant.
 *   <li>3: as 2, and an entry may carry roles and grants, the audit history's records, and the
 *       identity of the caller, which limits a lease command to the caller's own leases.
 *   <li>4: as 3, and an entry may carry sessions (CreateSession, KeepAlive, CloseSession, an
 *       Acquire naming a session, an Expire of sessions) and transfers, offered and accepted; the
 *       leases are indexed by holder in the store from the entry that raises the format on.
 *   <li>5: as 4, and an entry may carry an AcquireMany, which grants up to {@link
 *       Limits#MAX_ACQUIRE_MANY} names, each with the token of its position in the entry; a token
 *       is {@code index * 4096 + position}. Every token granted after the switch is at least {@code
 *       (switch index + 1) * 4096}, above every token of the 256-wide positions before it, so
 *       tokens still strictly increase over every grant.
 *   <li>6: as 5, and an entry may carry the placement of a namespace on a lease group (meta group)
 *       a lease group's adoption of a namespace, which may raise the group's token offset, and a
 *       lease group's copy of the meta group's global state (docs/design/multi-raft.md). A group's
 *       token is its offset plus the format 5 token; the offset is 0 until an adoption raises it,
 *       so a cluster with one group grants the same tokens as under format 5.
 *   <li>7: as 6, and a move may carry a namespace's state in parts, each staged in the destination
 *       by its own entry before the adoption that makes them live, and a freeze may refuse a state
 *       above a size (docs/design/multi-raft.md, "Moving a namespace").
 * </ul>
 */
public final class LogFormat {
  /** A store without a recorded format: every entry it holds was applied under format 1. */
  public static final int FIRST = 1;

  public static final int BATCHES = 2;
  public static final int AUTH = 3;
  public static final int SESSIONS = 4;
  public static final int MANY = 5;
  public static final int GROUPS = 6;
  public static final int STAGED_MOVES = 7;

  /** The newest format this code applies. */
  public static final int NEWEST = STAGED_MOVES;

  /** Bits of a token below the entry index, in formats 2 to 4. */
  static final int POSITION_BITS = 8;

  /** Bits of a token below the entry index, from format 5. */
  static final int WIDE_POSITION_BITS = 12;

  /** Commands a batch may carry: one for every position below the index in format 2. */
  public static final int MAX_BATCH = 1 << POSITION_BITS;

  private LogFormat() {}

  /** The format a command needs: some exist only from a later format on. */
  public static int needed(LogCommand c) {
    return switch (c.getCommandCase()) {
      case ADD_ROLE, REMOVE_ROLE, GRANT_ROLE, REVOKE_ROLE, BOOTSTRAP_ADMIN, AUDIT_RECORD -> AUTH;
      case CREATE_SESSION, KEEP_ALIVE, CLOSE_SESSION, TRANSFER, ACCEPT_TRANSFER, WITHDRAW_OFFERS ->
          SESSIONS;
      case ACQUIRE -> c.getAcquire().getSession() != 0 ? SESSIONS : FIRST;
      case EXPIRE -> c.getExpire().getSessionsCount() > 0 ? SESSIONS : FIRST;
      case ACQUIRE_MANY -> MANY;
      case STAGE_NAMESPACE -> STAGED_MOVES;
      case ADOPT_NAMESPACE -> c.getAdoptNamespace().getStagedParts() != 0 ? STAGED_MOVES : GROUPS;
      case FREEZE_NAMESPACE ->
          c.getFreezeNamespace().getMaxStateBytes() != 0 ? STAGED_MOVES : GROUPS;
      case PLACE_NAMESPACE,
          COPY_GLOBAL,
          CREATE_SESSION_PART,
          END_SESSION_PARTS,
          UNFREEZE_NAMESPACE,
          DROP_NAMESPACE,
          RECORD_MOVE,
          FINISH_MOVE ->
          GROUPS;
      default -> FIRST;
    };
  }

  /**
   * The token of a grant by the command at {@code position} of the entry at {@code index}, under
   * {@code format}.
   */
  public static long token(int format, long index, int position) {
    if (format >= MANY) {
      return (index << WIDE_POSITION_BITS) | position;
    }
    return format >= BATCHES ? (index << POSITION_BITS) | position : index;
  }

  /**
   * The commands a node may batch: a client's lease and session commands, each deciding on its own
   * names and sessions.
   */
  public static boolean batchable(LogCommand command) {
    return switch (command.getCommandCase()) {
      case ACQUIRE,
          RENEW,
          RELEASE,
          UPDATE,
          CREATE_SESSION,
          KEEP_ALIVE,
          CLOSE_SESSION,
          TRANSFER,
          ACCEPT_TRANSFER ->
          true;
      default -> false;
    };
  }
}
