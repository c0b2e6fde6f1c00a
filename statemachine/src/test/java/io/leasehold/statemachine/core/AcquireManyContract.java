package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.createSession;
import static io.leasehold.statemachine.core.Cmds.formatSessions;
import static io.leasehold.statemachine.core.Cmds.policy;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireManyResult;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.store.InMemoryStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Log format 5 ({@link LogFormat#MANY}): AcquireMany, one entry granting many names, each with the
 * token of its position ({@code index * 4096 + position}). Run on every store.
 */
public abstract class AcquireManyContract extends CoreFixture {

  private static long token(long index, int position) {
    return index * 4096 + position;
  }

  private static LogCommand.Builder formatMany() {
    return LogCommand.newBuilder()
        .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.MANY));
  }

  private static AcquireManyRequest.Builder many(String holder, String... names) {
    AcquireManyRequest.Builder b = AcquireManyRequest.newBuilder().setHolder(holder);
    for (String name : names) {
      b.addItems(AcquireManyItem.newBuilder().setName(name));
    }
    return b;
  }

  private static LogCommand.Builder command(AcquireManyRequest.Builder r) {
    return LogCommand.newBuilder().setAcquireMany(r);
  }

  private AcquireManyResponse applyMany(long index, AcquireManyRequest.Builder r)
      throws IOException {
    ApplyResult result = apply(index, T0 + index * SECOND, command(r));
    assertTrue(result.reply().hasAcquireMany(), () -> "not an AcquireMany reply: " + result);
    return result.reply().getAcquireMany();
  }

  @BeforeEach
  void raiseTheFormat() throws IOException {
    // Grants under format 4 first, so that the switch's token order is exercised by every test.
    apply(1, T0, formatSessions());
    granted(apply(2, T0, acquire("old/a", "zed", secs(30))));
    assertEquals(LogFormat.MANY, apply(3, T0, formatMany()).reply().getSetLogFormat().getFormat());
  }

  @Test
  void eachNameIsGrantedWithTheTokenOfItsPosition() throws IOException {
    AcquireManyResponse r = applyMany(4, many("alice", "part/0", "part/1", "part/2"));
    assertEquals(3, r.getGranted());
    assertEquals(4, r.getRevision());
    for (int i = 0; i < 3; i++) {
      AcquireManyResult item = r.getResults(i);
      assertEquals("part/" + i, item.getName());
      assertEquals(Outcome.GRANTED, item.getOutcome());
      assertEquals(token(4, i), item.getLease().getToken());
      assertEquals(token(4, i), held("part/" + i).getToken());
      assertEquals("alice", held("part/" + i).getHolder());
    }
    assertTrue(
        token(4, 0) > 2 * 256, "the first wide token is above every format 4 token before it");
    assertEquals(
        token(5, 0), granted(apply(5, T0, acquire("lock/x", "bob"))).getLease().getToken());
  }

  @Test
  void aThousandNamesFitOneEntryAndStayBelowTheNextEntrysTokens() throws IOException {
    AcquireManyRequest.Builder r = AcquireManyRequest.newBuilder().setHolder("proxy-1");
    for (int i = 0; i < Limits.MAX_ACQUIRE_MANY; i++) {
      r.addItems(AcquireManyItem.newBuilder().setName("mailbox/m" + i));
    }
    ApplyResult result = apply(4, T0, command(r));
    AcquireManyResponse reply = result.reply().getAcquireMany();
    assertEquals(Limits.MAX_ACQUIRE_MANY, reply.getGranted());
    long last = 0;
    for (AcquireManyResult item : reply.getResultsList()) {
      assertTrue(item.getLease().getToken() > last, "tokens rise with the position");
      last = item.getLease().getToken();
    }
    assertEquals(Limits.MAX_ACQUIRE_MANY, result.events().size(), "one ACQUIRED event a name");
    long next = granted(apply(5, T0, acquire("lock/x", "bob"))).getLease().getToken();
    assertTrue(next > last, "the next entry's grant is above every grant of this one");
  }

  @Test
  void eachNameIsDecidedOnItsOwn() throws IOException {
    apply(4, T0, setPolicy("job", policy().setNamePattern("n-[0-9]+")));
    long bobs = granted(apply(5, T0, acquire("part/1", "bob", secs(30)))).getLease().getToken();
    long own = granted(apply(6, T0, acquire("part/2", "alice", secs(30)))).getLease().getToken();

    AcquireManyResponse r =
        applyMany(7, many("alice", "part/0", "part/1", "job/n-1", "job/x", "part/2"));

    assertEquals(
        List.of(
            Outcome.GRANTED, Outcome.CONFLICT, Outcome.GRANTED, Outcome.REJECTED, Outcome.GRANTED),
        r.getResultsList().stream().map(AcquireManyResult::getOutcome).toList());
    assertEquals(3, r.getGranted());
    assertEquals("bob", r.getResults(1).getConflict().getHolder());
    assertEquals(bobs, r.getResults(1).getConflict().getToken());
    assertEquals(RejectReason.NAME_NOT_ALLOWED, r.getResults(3).getRejection().getReason());
    assertEquals(token(7, 0), r.getResults(0).getLease().getToken());
    assertEquals(token(7, 2), r.getResults(2).getLease().getToken());
    assertEquals(
        own, r.getResults(4).getLease().getToken(), "the holder's own lease keeps its token");
    assertEquals("bob", held("part/1").getHolder(), "a conflict changes nothing");
    assertFalse(record("job/x").isPresent());
  }

  @Test
  void quotasCountTheGrantsOfTheSameCommand() throws IOException {
    apply(4, T0, setPolicy("part", policy().setMaxLeasesPerHolder(3)));
    apply(5, T0, setPolicy("cap", policy().setMaxLeasesPerNamespace(2)));
    granted(apply(6, T0, acquire("part/held", "alice", secs(30))));

    AcquireManyResponse r =
        applyMany(
            7, many("alice", "part/a", "part/b", "part/c", "cap/a", "cap/b", "cap/c", "part/held"));

    assertEquals(
        List.of(
            Outcome.GRANTED,
            Outcome.GRANTED,
            Outcome.REJECTED,
            Outcome.GRANTED,
            Outcome.GRANTED,
            Outcome.REJECTED,
            Outcome.GRANTED),
        r.getResultsList().stream().map(AcquireManyResult::getOutcome).toList());
    assertEquals(RejectReason.HOLDER_QUOTA, r.getResults(2).getRejection().getReason());
    assertEquals(RejectReason.NAMESPACE_QUOTA, r.getResults(5).getRejection().getReason());
    assertEquals(
        List.of("cap/a", "cap/b", "old/a", "part/a", "part/b", "part/held"),
        new ArrayList<>(leases().keySet()).stream().sorted().toList());
  }

  @Test
  void allOrNothingGrantsNoneWhenOneIsRefused() throws IOException {
    granted(apply(4, T0, acquire("part/1", "bob", secs(30))));
    long revision = core.applied().index();

    ApplyResult result =
        apply(5, T0, command(many("alice", "part/0", "part/1", "part/2").setAllOrNothing(true)));
    AcquireManyResponse r = result.reply().getAcquireMany();

    assertEquals(
        List.of(Outcome.SKIPPED, Outcome.CONFLICT, Outcome.SKIPPED),
        r.getResultsList().stream().map(AcquireManyResult::getOutcome).toList());
    assertEquals(0, r.getGranted());
    assertTrue(result.events().isEmpty(), "nothing changed");
    assertFalse(record("part/0").isPresent());
    assertFalse(record("part/2").isPresent());
    assertTrue(core.applied().index() > revision, "the entry is consumed");

    AcquireManyResponse all = applyMany(6, many("alice", "part/0", "part/2").setAllOrNothing(true));
    assertEquals(2, all.getGranted());
    assertEquals(token(6, 1), held("part/2").getToken());
  }

  @Test
  void aRetriedRequestIdIsAnsweredAsTheFirstAttemptAndChangesNothing() throws IOException {
    AcquireManyResponse first =
        applyMany(4, many("alice", "part/0", "part/1").setRequestId("boot-1"));
    apply(
        5,
        T0,
        LogCommand.newBuilder()
            .setRelease(
                io.leasehold.proto.v1.ReleaseRequest.newBuilder()
                    .setName("part/0")
                    .setToken(token(4, 0))));

    ApplyResult retry =
        apply(6, T0, command(many("alice", "part/0", "part/1").setRequestId("boot-1")));
    assertEquals(first, retry.reply().getAcquireMany());
    assertTrue(retry.events().isEmpty());
    assertFalse(record("part/0").isPresent(), "a late duplicate never grants a name again");

    assertEquals(
        "request_id",
        invalid(
                apply(
                    7,
                    T0,
                    LogCommand.newBuilder()
                        .setAcquire(Cmds.acquireRequest("part/9", "alice").setRequestId("boot-1"))))
            .getField());
  }

  @Test
  void aSessionHoldsEveryLeaseOfTheCall() throws IOException {
    long session =
        apply(4, T0, createSession("alice", secs(20)))
            .reply()
            .getCreateSession()
            .getSession()
            .getId();
    AcquireManyResponse r = applyMany(5, many("alice", "part/0", "part/1").setSession(session));
    assertEquals(2, r.getGranted());
    for (AcquireManyResult item : r.getResultsList()) {
      assertEquals(session, item.getLease().getSession());
      assertEquals(session, held(item.getName()).getSession());
    }
    assertEquals(
        RejectReason.NO_SESSION,
        applyMany(6, many("alice", "part/2").setSession(session + 1))
            .getResults(0)
            .getRejection()
            .getReason());
  }

  @Test
  void attributesArePerName() throws IOException {
    AcquireManyRequest.Builder r =
        AcquireManyRequest.newBuilder()
            .setHolder("alice")
            .setTtl(secs(30))
            .addItems(AcquireManyItem.newBuilder().setName("svc/a").setAttributes(A1))
            .addItems(AcquireManyItem.newBuilder().setName("svc/b").setAttributes(A2));
    applyMany(4, r);
    assertEquals(A1, held("svc/a").getAttributes());
    assertEquals(A2, held("svc/b").getAttributes());
    assertEquals(30 * SECOND, held("svc/b").getTtlMicros());
  }

  @Test
  void badInputIsRefusedByFieldAndChangesNothing() throws IOException {
    assertEquals(
        "items[2].name",
        invalid(apply(4, T0, command(many("alice", "a/1", "a/2", "a/1")))).getField());
    assertEquals("items", invalid(apply(5, T0, command(many("alice")))).getField());
    AcquireManyRequest.Builder tooMany = many("alice");
    for (int i = 0; i <= Limits.MAX_ACQUIRE_MANY; i++) {
      tooMany.addItems(AcquireManyItem.newBuilder().setName("a/" + i));
    }
    assertEquals("items", invalid(apply(6, T0, command(tooMany))).getField());
    assertEquals("holder", invalid(apply(7, T0, command(many("", "a/1")))).getField());
    assertEquals(Map.of("old/a", "zed"), holders());
  }

  @Test
  void beforeFormatFiveAnAcquireManyChangesNothing() throws IOException {
    LeaseCore older = new LeaseCore(new InMemoryStore());
    assertEquals(LogFormat.FIRST, older.logFormat());
    ApplyResult r =
        older.apply(TERM, 1, command(many("alice", "a/1")).setLeaderTimeMicros(T0).build());
    assertEquals("command", invalid(r).getField());
    assertTrue(r.events().isEmpty());
  }

  private Map<String, String> holders() {
    Map<String, String> out = new java.util.TreeMap<>();
    leases().forEach((name, lease) -> out.put(name, lease.getHolder()));
    return out;
  }
}
