package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquireIn;
import static io.leasehold.statemachine.core.Cmds.closeSession;
import static io.leasehold.statemachine.core.Cmds.createSession;
import static io.leasehold.statemachine.core.Cmds.expireSession;
import static io.leasehold.statemachine.core.Cmds.keepAlive;
import static io.leasehold.statemachine.core.Cmds.secondsMicros;
import static io.leasehold.statemachine.core.Cmds.secs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.CreateSessionPart;
import io.leasehold.proto.v1.EndSessionParts;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.SessionPartsResponse;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A lease group's parts of the meta group's sessions (log format 6, docs/design/multi-raft.md,
 * "Sessions"): a part takes leases attached to its session, renews with keep-alives, is never ended
 * by an Expire (its group's ticker does not decide it), and ends with its leases by
 * EndSessionParts. The meta group holds sessions whole and refuses parts.
 */
abstract class SessionPartContract extends LeaseGroupFixture {
  private static LogCommand.Builder part(long session, String holder) {
    return LogCommand.newBuilder()
        .setCreateSessionPart(
            CreateSessionPart.newBuilder()
                .setSession(session)
                .setHolder(holder)
                .setTtlMicros(secondsMicros(10)));
  }

  private static LogCommand.Builder end(boolean closed, Long... sessions) {
    return LogCommand.newBuilder()
        .setEndSessionParts(
            EndSessionParts.newBuilder().addAllSessions(List.of(sessions)).setClosed(closed));
  }

  /** A session created in the meta group; its id. */
  private long metaSession(String holder) throws IOException {
    apply(1, T0, format());
    return apply(2, T0, createSession(holder, secs(10)))
        .reply()
        .getCreateSession()
        .getSession()
        .getId();
  }

  @Test
  void aPartTakesItsSessionsLeasesRenewsAndIsNeverExpiredByItsGroup() throws IOException {
    long id = metaSession("alice");
    SessionPartsResponse created = toGroup(part(id, "alice")).getSessionParts();
    assertEquals(1, created.getCreated());
    assertEquals(0, toGroup(part(id, "alice")).getSessionParts().getCreated(), "made once");
    assertTrue(group.storedSession(id).orElseThrow().getPart());

    LogReply granted = toGroup(acquireIn("lock/a", "alice", id));
    assertEquals(Outcome.GRANTED, granted.getAcquire().getOutcome(), granted::toString);
    assertEquals(id, granted.getAcquire().getLease().getSession());
    LogReply renewed = toGroup(keepAlive(id));
    assertEquals(Outcome.RENEWED, renewed.getKeepAlive().getResults(0).getOutcome());
    assertEquals(1, renewed.getKeepAlive().getResults(0).getLeases());

    // Long past its TTL, an Expire of the part (which no ticker proposes) changes nothing.
    ApplyResult expired = toGroup(expireSession(id, Long.MAX_VALUE), T0 + secondsMicros(3600));
    assertEquals(0, expired.reply().getExpire().getSessionsExpired());
    assertTrue(group.get(GetRequest.newBuilder().setName("lock/a").build(), T0).getFound());
    assertTrue(new LeaseCore(groupStore, 1).storedSession(id).orElseThrow().getPart(), "reloaded");
  }

  @Test
  void endingAPartEndsItsLeasesAndALaterAttachmentIsRefused() throws IOException {
    long id = metaSession("alice");
    toGroup(part(id, "alice"));
    toGroup(acquireIn("lock/a", "alice", id));
    toGroup(acquireIn("lock/b", "alice", id));

    ApplyResult ended = toGroup(end(false, id, id + 1), T0);
    SessionPartsResponse r = ended.reply().getSessionParts();
    assertEquals(1, r.getEnded(), "only the part it holds");
    assertEquals(2, r.getLeasesEnded());
    assertEquals(
        List.of("SESSION_EXPIRED lock/a", "SESSION_EXPIRED lock/b"),
        ended.events().stream().map(e -> e.type() + " " + e.name()).toList());
    assertTrue(group.storedSession(id).isEmpty());
    LogReply refused = toGroup(acquireIn("lock/c", "alice", id));
    assertEquals(Outcome.REJECTED, refused.getAcquire().getOutcome());
    assertEquals(RejectReason.NO_SESSION, refused.getAcquire().getRejection().getReason());
    assertEquals(0, toGroup(end(true, id)).getSessionParts().getEnded(), "ending twice: nothing");
  }

  @Test
  void aClosedSessionsPartEndsItsLeasesAsClosed() throws IOException {
    long id = metaSession("alice");
    toGroup(part(id, "alice"));
    toGroup(acquireIn("lock/a", "alice", id));
    ApplyResult ended = toGroup(end(true, id), T0);
    assertEquals(
        List.of("SESSION_CLOSED lock/a"),
        ended.events().stream().map(e -> e.type() + " " + e.name()).toList());
  }

  @Test
  void theMetaGroupTellsWhenASessionHasEndedForGood() throws IOException {
    long id = metaSession("alice");
    assertFalse(core.sessionEnded(id), "alive");
    assertFalse(
        core.sessionEnded(id + (1L << 20)), "not created yet, as far as this replica knows");
    apply(3, T0, closeSession(id));
    assertTrue(core.sessionEnded(id));
    assertTrue(core.storedSession(id).isEmpty());
  }

  @Test
  void badPartsAreRefusedByField() throws IOException {
    long id = metaSession("alice");
    assertEquals(
        "create_session_part",
        invalid(apply(3, T0, part(id, "alice"))).getField(),
        "the meta group holds sessions whole");
    assertEquals("end_session_parts", invalid(apply(4, T0, end(false, id))).getField());
    assertEquals("session", toGroup(part(0, "alice")).getInvalid().getField());
    assertEquals("holder", toGroup(part(id, "")).getInvalid().getField());
    assertEquals(
        "ttl_micros",
        toGroup(
                LogCommand.newBuilder()
                    .setCreateSessionPart(
                        CreateSessionPart.newBuilder().setSession(id).setHolder("alice")))
            .getInvalid()
            .getField());
    LogReply notTheCaller = toGroup(part(id, "alice").setCaller("mallory"));
    assertEquals("holder", notTheCaller.getRefused().getField());
    assertTrue(group.storedSession(id).isEmpty(), "nothing made by a refused command");
  }
}
