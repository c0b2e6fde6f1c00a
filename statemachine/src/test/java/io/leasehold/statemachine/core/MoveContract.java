package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.ban;
import static io.leasehold.statemachine.core.Cmds.expire;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secondsMicros;
import static io.leasehold.statemachine.core.Cmds.transfer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.CreateSessionPart;
import io.leasehold.proto.v1.DropNamespace;
import io.leasehold.proto.v1.EndSessionParts;
import io.leasehold.proto.v1.FreezeNamespace;
import io.leasehold.proto.v1.FreezeNamespaceResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.NamespaceState;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.StageNamespace;
import io.leasehold.proto.v1.UnfreezeNamespace;
import io.leasehold.statemachine.store.KvStore;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A namespace moving between lease groups in the core (docs/design/multi-raft.md, "Moving a
 * namespace"): the source freezes it and answers with its state and a floor, the destination adopts
 * that state in one entry, and the source then drops it, or, when the move is abandoned, unfreezes
 * it. Lease group 1 ({@link #group}) is the source of namespace {@code lock}; lease group 2 the
 * destination.
 */
abstract class MoveContract extends LeaseGroupFixture {
  private static final long MOVE = 77;

  private KvStore destinationStore;
  private LeaseCore destination;
  private long destinationIndex;

  @BeforeEach
  void openDestination() throws IOException {
    destinationStore = newStore(tempDir.resolve("group-2"));
    destination = new LeaseCore(destinationStore, 2);
    toDestination(format());
  }

  @AfterEach
  void closeDestination() {
    if (destinationStore != null) {
      destinationStore.close();
    }
  }

  private LogReply toDestination(LogCommand.Builder command) throws IOException {
    return destination
        .apply(TERM, ++destinationIndex, command.setLeaderTimeMicros(T0).build())
        .reply();
  }

  private static LogCommand.Builder freeze(String ns, long move) {
    return LogCommand.newBuilder()
        .setFreezeNamespace(FreezeNamespace.newBuilder().setNamespace(ns).setMove(move));
  }

  private static LogCommand.Builder adopt(FreezeNamespaceResponse frozen, long epoch, long move) {
    return LogCommand.newBuilder()
        .setAdoptNamespace(
            AdoptNamespace.newBuilder()
                .setNamespace(frozen.getNamespace())
                .setEpoch(epoch)
                .setGroup(2)
                .setFloor(frozen.getFloor())
                .setMove(move)
                .setState(frozen.getState()));
  }

  private static LogCommand.Builder drop(String ns, long move) {
    return LogCommand.newBuilder()
        .setDropNamespace(DropNamespace.newBuilder().setNamespace(ns).setMove(move));
  }

  private static LogCommand.Builder unfreeze(String ns, long move) {
    return LogCommand.newBuilder()
        .setUnfreezeNamespace(UnfreezeNamespace.newBuilder().setNamespace(ns).setMove(move));
  }

  private static LogCommand.Builder part(long session, String holder) {
    return LogCommand.newBuilder()
        .setCreateSessionPart(
            CreateSessionPart.newBuilder()
                .setSession(session)
                .setHolder(holder)
                .setTtlMicros(secondsMicros(10)));
  }

  private static LogCommand.Builder acquireIn(String name, String holder, long session) {
    LogCommand.Builder c = acquire(name, holder);
    c.getAcquireBuilder().setSession(session);
    return c;
  }

  private static java.util.Optional<LeaseRecord> stored(KvStore store, String name) {
    return store
        .get(
            io.leasehold.statemachine.store.Space.LEASES,
            name.getBytes(java.nio.charset.StandardCharsets.UTF_8))
        .map(LeaseCore::parse);
  }

  private static boolean found(LeaseCore core, String name) {
    return core.query(
            ReadQuery.newBuilder().setGet(GetRequest.newBuilder().setName(name)).build(), T0)
        .getGet()
        .getFound();
  }

  private static List<Long> historyTokens(LeaseCore core, String name) {
    return core
        .query(
            ReadQuery.newBuilder()
                .setHistory(io.leasehold.proto.v1.HistoryRequest.newBuilder().setName(name))
                .build(),
            T0)
        .getHistory()
        .getLeasesList()
        .stream()
        .map(io.leasehold.proto.v1.EndedLease::getToken)
        .toList();
  }

  private static long token(LogReply r) {
    assertEquals(Outcome.GRANTED, r.getAcquire().getOutcome(), r::toString);
    return r.getAcquire().getLease().getToken();
  }

  @Test
  void aMoveCarriesEveryLeaseSessionAndOfferAndTokensKeepIncreasing() throws IOException {
    long gone = token(toGroup(acquire("lock/gone", "zoe")));
    toGroup(Cmds.release("lock/gone", gone));
    long a = token(toGroup(acquire("lock/a", "alice")));
    toGroup(part(500, "bob"));
    long b = token(toGroup(acquireIn("lock/b", "bob", 500)));
    LogCommand.Builder offer30s = transfer("lock/a", a, "carol");
    offer30s
        .getTransferBuilder()
        .setAcceptWithin(com.google.protobuf.Duration.newBuilder().setSeconds(30));
    LogReply offered = toGroup(offer30s);
    assertEquals(Outcome.OFFERED, offered.getTransfer().getOutcome(), offered::toString);
    long offer = offered.getTransfer().getOffer();

    LogReply frozenReply = toGroup(freeze("lock", MOVE));
    FreezeNamespaceResponse frozen = frozenReply.getFreezeNamespace();
    assertEquals(
        List.of("lock/a", "lock/b"),
        frozen.getState().getLeasesMap().keySet().stream().sorted().toList(),
        frozenReply::toString);
    assertEquals(List.of(500L), List.copyOf(frozen.getState().getSessionsMap().keySet()));
    assertTrue(frozen.getState().getOffersMap().containsKey("lock/a"));
    assertTrue(frozen.getFloor() > Math.max(a, b), "the floor is above every token granted");

    // Frozen: reads answer, writes are refused as moving, and nothing the group decides applies.
    assertTrue(found(group, "lock/a"));
    LogReply refused = toGroup(acquire("lock/c", "dave"));
    assertEquals("lock", refused.getMoving().getNamespace(), refused::toString);
    assertEquals(MOVE, refused.getMoving().getMove());
    assertEquals("lock", toGroup(renew("lock/a", a)).getMoving().getNamespace());
    LeaseRecord heldA = stored(groupStore, "lock/a").orElseThrow();
    assertEquals(
        0,
        toGroup(expire("lock/a", a, heldA.getLastRenewRevision())).getExpire().getExpired(),
        "a frozen lease does not expire in its source");
    assertEquals(
        frozen.getState(),
        toGroup(freeze("lock", MOVE)).getFreezeNamespace().getState(),
        "freezing again for the same move answers the same state");
    assertEquals(
        "freeze_namespace.move",
        toGroup(freeze("lock", MOVE + 1)).getInvalid().getField(),
        "another move cannot freeze it meanwhile");

    ApplyResult adoption =
        destination.apply(
            TERM, ++destinationIndex, adopt(frozen, 2, MOVE).setLeaderTimeMicros(T0).build());
    assertEquals(2, adoption.reply().getAdoptNamespace().getEpoch(), adoption.reply()::toString);
    assertTrue(adoption.events().isEmpty(), "watchers saw these leases in the source");
    assertEquals(a, stored(destinationStore, "lock/a").orElseThrow().getToken());
    assertEquals(b, stored(destinationStore, "lock/b").orElseThrow().getToken());
    assertEquals(
        destinationIndex,
        stored(destinationStore, "lock/a").orElseThrow().getLastRenewRevision(),
        "the adopted lease's guards are the destination's");
    long c = token(toDestination(acquire("lock/c", "dave")));
    assertTrue(c >= frozen.getFloor(), "the destination grants above the floor: " + c);
    assertEquals(
        Outcome.RENEWED, toDestination(renew("lock/a", a)).getRenew().getResults(0).getOutcome());
    LogReply accepted =
        toDestination(
            LogCommand.newBuilder()
                .setAcceptTransfer(
                    AcceptTransferRequest.newBuilder()
                        .setName("lock/a")
                        .setOffer(offer)
                        .setHolder("carol")));
    assertEquals(
        Outcome.TRANSFERRED, accepted.getAcceptTransfer().getOutcome(), accepted::toString);
    assertTrue(accepted.getAcceptTransfer().getLease().getToken() > c);
    assertEquals(
        2,
        toDestination(adopt(frozen, 2, MOVE)).getAdoptNamespace().getEpoch(),
        "adopting again changes nothing");
    assertEquals("carol", stored(destinationStore, "lock/a").orElseThrow().getHolder());

    assertEquals(
        List.of(gone),
        historyTokens(destination, "lock/gone"),
        "the ended leases of its names come along");
    assertEquals(1, frozen.getState().getHistoryMap().get("lock/gone").getRecordsCount());

    ApplyResult dropped = toGroupResult(drop("lock", MOVE));
    assertEquals(List.of(), historyTokens(group, "lock/gone"), "and leave the source");
    assertTrue(dropped.events().isEmpty(), "a drop ends nothing: the leases live on");
    assertFalse(found(group, "lock/a"));
    assertEquals("lock", toGroup(acquire("lock/d", "erin")).getWrongGroup().getNamespace());
    assertTrue(toGroupResult(drop("lock", MOVE)).events().isEmpty(), "dropping again: nothing");

    LeaseCore reloaded = new LeaseCore(destinationStore, 2);
    assertTrue(found(reloaded, "lock/b"), "adopted state is stored");
    assertEquals(500, stored(destinationStore, "lock/b").orElseThrow().getSession());
  }

  /** The part size the tests stage with. */
  private static final int LAYOUT = 1000;

  private static LogCommand.Builder stage(String ns, long move, int part, NamespaceState state) {
    return stage(ns, move, LAYOUT, part, state);
  }

  private static LogCommand.Builder stage(
      String ns, long move, int partBytes, int part, NamespaceState state) {
    return LogCommand.newBuilder()
        .setStageNamespace(
            StageNamespace.newBuilder()
                .setNamespace(ns)
                .setMove(move)
                .setPart(part)
                .setPartBytes(partBytes)
                .setState(state));
  }

  private static LogCommand.Builder staged(FreezeNamespaceResponse frozen, int parts) {
    LogCommand.Builder c = adopt(frozen, 2, MOVE);
    c.getAdoptNamespaceBuilder()
        .clearState()
        .setStagedParts(parts)
        .setStagedPartBytes(LAYOUT)
        .setStagedEntries(NamespaceMoves.entries(frozen.getState()));
    return c;
  }

  private static LogCommand.Builder format7() {
    return LogCommand.newBuilder()
        .setSetLogFormat(
            io.leasehold.proto.v1.SetLogFormat.newBuilder().setFormat(LogFormat.STAGED_MOVES));
  }

  private boolean stagedHere(String ns, int part) {
    return destinationStore
        .get(
            io.leasehold.statemachine.store.Space.META,
            NamespaceMoves.stagedKey(ns, new NamespaceMoves.Layout(LAYOUT, part)))
        .isPresent();
  }

  @Test
  void aStateTooLargeForOneEntryMovesInPartsStagedBeforeTheAdoption() throws IOException {
    long gone = token(toGroup(acquire("lock/gone", "zoe")));
    toGroup(Cmds.release("lock/gone", gone));
    long a = token(toGroup(acquire("lock/a", "alice")));
    long b = token(toGroup(acquire("lock/b", "bob")));
    long c = token(toGroup(acquire("lock/c", "carol")));
    NamespaceState one =
        NamespaceState.newBuilder().putLeases("lock/x", LeaseRecord.getDefaultInstance()).build();
    assertEquals(
        "command",
        toDestination(stage("lock", MOVE, 0, one)).getInvalid().getField(),
        "format 6 stages nothing");

    toGroup(format7());
    toDestination(format7());
    LogCommand.Builder tooSmall = freeze("lock", MOVE);
    tooSmall.getFreezeNamespaceBuilder().setMaxStateBytes(16);
    assertEquals(
        "freeze_namespace.max_state_bytes",
        toGroup(tooSmall).getInvalid().getField(),
        "a state above the bound is refused");
    // The namespace was not frozen: it still takes writes.
    toGroup(Cmds.release("lock/d", token(toGroup(acquire("lock/d", "dave")))));

    FreezeNamespaceResponse frozen = toGroup(freeze("lock", MOVE)).getFreezeNamespace();
    NamespaceState all = frozen.getState();
    NamespaceState part0 =
        NamespaceState.newBuilder()
            .putLeases("lock/a", all.getLeasesOrThrow("lock/a"))
            .putLeases("lock/b", all.getLeasesOrThrow("lock/b"))
            .build();
    NamespaceState part1 =
        NamespaceState.newBuilder()
            .putLeases("lock/c", all.getLeasesOrThrow("lock/c"))
            .putAllHistory(all.getHistoryMap())
            .build();

    // An earlier, abandoned move's part is forgotten when this move stages its first.
    assertEquals(1, toDestination(stage("lock", MOVE - 1, 0, one)).getStageNamespace().getParts());
    assertEquals(1, toDestination(stage("lock", MOVE, 0, part0)).getStageNamespace().getParts());
    assertEquals(
        "stage_namespace.state",
        toDestination(
                stage(
                    "lock",
                    MOVE,
                    1,
                    one.toBuilder().putLeases("mail/x", LeaseRecord.getDefaultInstance()).build()))
            .getInvalid()
            .getField(),
        "a part holds names of its namespace only");
    assertEquals(2, toDestination(stage("lock", MOVE, 1, part1)).getStageNamespace().getParts());
    assertEquals(
        2,
        toDestination(stage("lock", MOVE, 1, part1)).getStageNamespace().getParts(),
        "staging again replaces");

    assertEquals(
        "adopt_namespace.staged_parts",
        toDestination(staged(frozen, 3)).getInvalid().getField(),
        "an adoption naming a part not staged is refused");
    // A part cut with another size is another layout's: it completes none of this one's.
    assertEquals(
        1, toDestination(stage("lock", MOVE, 500, 2, part1)).getStageNamespace().getParts());
    assertEquals(
        "adopt_namespace.staged_parts",
        toDestination(staged(frozen, 3)).getInvalid().getField(),
        "a part of another layout does not complete this one");
    LogCommand.Builder short1 = staged(frozen, 1);
    assertEquals(
        "adopt_namespace.staged_parts",
        toDestination(short1).getInvalid().getField(),
        "parts that hold fewer entries than the state does are refused");
    assertEquals(
        "lock",
        toDestination(acquire("lock/e", "erin")).getWrongGroup().getNamespace(),
        "and adopted nothing");

    // The parts are in the store: a reloaded destination adopts them.
    destination = new LeaseCore(destinationStore, 2);
    ApplyResult adoption =
        destination.apply(
            TERM, ++destinationIndex, staged(frozen, 2).setLeaderTimeMicros(T0).build());
    assertEquals(2, adoption.reply().getAdoptNamespace().getEpoch(), adoption.reply()::toString);
    assertTrue(adoption.events().isEmpty());
    assertEquals(a, stored(destinationStore, "lock/a").orElseThrow().getToken());
    assertEquals(b, stored(destinationStore, "lock/b").orElseThrow().getToken());
    assertEquals(c, stored(destinationStore, "lock/c").orElseThrow().getToken());
    assertEquals(List.of(gone), historyTokens(destination, "lock/gone"));
    assertFalse(stagedHere("lock", 0) || stagedHere("lock", 1), "the adoption forgot its parts");
    assertTrue(token(toDestination(acquire("lock/e", "erin"))) >= frozen.getFloor());

    // Going over the steps again after the adoption applied: nothing is staged, nothing changes.
    assertEquals(0, toDestination(stage("lock", MOVE, 0, part0)).getStageNamespace().getParts());
    assertFalse(stagedHere("lock", 0));
    assertEquals(2, toDestination(staged(frozen, 2)).getAdoptNamespace().getEpoch());
    assertTrue(found(destination, "lock/e"), "the resent adoption changed nothing");

    // An abandoned move's parts are discarded.
    assertEquals(
        1,
        toDestination(stage("mail", 9, 0, NamespaceState.getDefaultInstance()))
            .getStageNamespace()
            .getParts());
    LogCommand.Builder discard = stage("mail", 9, 0, NamespaceState.getDefaultInstance());
    discard.getStageNamespaceBuilder().setDiscard(true);
    assertEquals(0, toDestination(discard).getStageNamespace().getParts());
    assertFalse(stagedHere("mail", 0));
  }

  @Test
  void aGroupServesReadsOfANamespaceOnlyWhileItOwnsItUnfrozen() throws IOException {
    long now = Long.MAX_VALUE;
    assertTrue(group.servesReads("lock", now), "the source owns lock");
    assertFalse(group.servesReads("mail", now), "and nothing it did not adopt");
    assertFalse(destination.servesReads("lock", now), "the destination does not own it yet");
    FreezeNamespaceResponse frozen = toGroup(freeze("lock", MOVE)).getFreezeNamespace();
    assertFalse(group.servesReads("lock", now), "a frozen copy is not served once it may be stale");
    ApplyResult adoption =
        destination.apply(
            TERM, ++destinationIndex, adopt(frozen, 2, MOVE).setLeaderTimeMicros(T0).build());
    long at = adoption.revision();
    assertTrue(destination.servesReads("lock", at), "from its adoption on");
    assertFalse(destination.servesReads("lock", at - 1), "a read from before it is not");
    toGroup(drop("lock", MOVE));
    assertFalse(group.servesReads("lock", now), "dropped");
    assertTrue(
        core.servesReads("never-placed", now), "the meta group serves what is placed nowhere");
  }

  @Test
  void aReadAsksTheGroupWhichNamespacesItServedAndAFrozenOneIsNotAmongThem() throws IOException {
    apply(1, T0, format());
    toGroup(acquire("lock/a", "alice"));
    ReadQuery get =
        ReadQuery.newBuilder()
            .setGet(GetRequest.newBuilder().setName("lock/a"))
            .addCheckServed("lock")
            .addCheckServed("mail")
            .build();
    assertEquals(List.of("lock"), group.query(get, T0).getServedList(), "it owns lock, not mail");
    ReadQuery listed =
        ReadQuery.newBuilder()
            .setList(ListRequest.newBuilder().setPrefix(""))
            .setCheckListed(true)
            .build();
    assertEquals(
        List.of("lock"),
        group.query(listed, T0).getServedList(),
        "with check_listed, the namespaces of the leases it lists");
    assertEquals(
        List.of(),
        group.query(get.toBuilder().clearCheckServed().build(), T0).getServedList(),
        "nothing asked, nothing said");
    toGroup(freeze("lock", MOVE));
    assertEquals(List.of(), group.query(get, T0).getServedList(), "a frozen copy is not served");
  }

  private ApplyResult toGroupResult(LogCommand.Builder command) throws IOException {
    return toGroup(command, T0);
  }

  @Test
  void aFrozenNamespaceIsPassedByAndUnfreezingEndsWhatEndedMeanwhile() throws IOException {
    apply(1, T0, format());
    long a = token(toGroup(acquire("lock/a", "mallory")));
    toGroup(part(600, "bob"));
    token(toGroup(acquireIn("lock/s", "bob", 600)));
    toGroup(freeze("lock", MOVE));

    apply(2, T0, ban("mallory", "abuse"));
    LogReply copied = toGroup(LogCommand.newBuilder().setCopyGlobal(core.globalState()));
    assertEquals(0, copied.getCopyGlobal().getLeasesEnded(), copied::toString);
    LogReply ended =
        toGroup(
            LogCommand.newBuilder()
                .setEndSessionParts(EndSessionParts.newBuilder().addSessions(600)));
    assertEquals(0, ended.getSessionParts().getLeasesEnded(), ended::toString);
    assertTrue(found(group, "lock/a") && found(group, "lock/s"), "both still held, frozen");

    ApplyResult unfrozen = toGroupResult(unfreeze("lock", MOVE));
    assertEquals(
        List.of("BANNED lock/a", "SESSION_EXPIRED lock/s"),
        unfrozen.events().stream().map(e -> e.type() + " " + e.name()).sorted().toList());
    assertFalse(found(group, "lock/a"));
    long next = token(toGroup(acquire("lock/b", "alice")));
    assertTrue(next > a, "writes apply again");
    assertTrue(
        toGroupResult(unfreeze("lock", MOVE)).events().isEmpty(), "unfreezing again: nothing");
  }

  @Test
  void aFreezeSurvivesAReloadAndOnlyItsMoveDropsIt() throws IOException {
    token(toGroup(acquire("lock/a", "alice")));
    toGroup(freeze("lock", MOVE));
    group = new LeaseCore(groupStore, 1);
    assertEquals("lock", toGroup(acquire("lock/b", "bob")).getMoving().getNamespace());
    toGroup(drop("lock", MOVE + 1));
    assertTrue(found(group, "lock/a"), "another move's drop changes nothing");
  }

  @Test
  void movesNameWhatTheyMayNot() throws IOException {
    assertEquals("freeze_namespace.move", toGroup(freeze("lock", 0)).getInvalid().getField());
    assertEquals("service", toGroup(freeze("service", MOVE)).getWrongGroup().getNamespace());
    toGroup(
        LogCommand.newBuilder()
            .setAdoptNamespace(
                AdoptNamespace.newBuilder().setNamespace("service").setEpoch(1).setGroup(1)));
    assertEquals(
        "freeze_namespace.namespace", toGroup(freeze("service", MOVE)).getInvalid().getField());
    assertEquals("other", toGroup(freeze("other", MOVE)).getWrongGroup().getNamespace());
    assertEquals(
        "adopt_namespace.move",
        toDestination(
                LogCommand.newBuilder()
                    .setAdoptNamespace(
                        AdoptNamespace.newBuilder().setNamespace("x").setEpoch(2).setGroup(2)))
            .getInvalid()
            .getField());
    assertEquals(
        "adopt_namespace.state.leases",
        toDestination(
                LogCommand.newBuilder()
                    .setAdoptNamespace(
                        AdoptNamespace.newBuilder()
                            .setNamespace("x")
                            .setEpoch(2)
                            .setGroup(2)
                            .setMove(MOVE)
                            .setState(
                                io.leasehold.proto.v1.NamespaceState.newBuilder()
                                    .putLeases("y/z", LeaseRecord.getDefaultInstance()))))
            .getInvalid()
            .getField());
    assertFalse(destination.placement("x").isPresent(), "a refused adoption adopts nothing");
  }

  private static LogCommand.Builder recordMove(String ns, int to) {
    return LogCommand.newBuilder()
        .setRecordMove(
            io.leasehold.proto.v1.RecordMove.newBuilder().setNamespace(ns).setToGroup(to));
  }

  private static LogCommand.Builder finishMove(
      String ns, long move, io.leasehold.proto.v1.MoveOutcome outcome) {
    return LogCommand.newBuilder()
        .setFinishMove(
            io.leasehold.proto.v1.FinishMove.newBuilder()
                .setNamespace(ns)
                .setMove(move)
                .setOutcome(outcome));
  }

  /**
   * A namespace the meta group holds (placed on it because it held state when groups came, or never
   * placed) moves to a lease group as any does; the meta group forgets its state in the entry that
   * places it on its new group, as no other group drops it.
   */
  @Test
  void aNamespaceMovesOutOfTheMetaGroup() throws IOException {
    long i = 0;
    apply(++i, T0, format());
    long gone =
        apply(++i, T0, acquire("legacy/gone", "zoe")).reply().getAcquire().getLease().getToken();
    apply(++i, T0, Cmds.release("legacy/gone", gone));
    long a =
        apply(++i, T0, acquire("legacy/a", "alice")).reply().getAcquire().getLease().getToken();
    long session =
        apply(
                ++i,
                T0,
                Cmds.createSession(
                    "bob", com.google.protobuf.Duration.newBuilder().setSeconds(10).build()))
            .reply()
            .getCreateSession()
            .getSession()
            .getId();
    long b =
        apply(++i, T0, Cmds.acquireIn("legacy/b", "bob", session))
            .reply()
            .getAcquire()
            .getLease()
            .getToken();

    long move = ++i;
    io.leasehold.proto.v1.PlacementResponse recorded =
        apply(move, T0, recordMove("legacy", 2)).reply().getRecordMove();
    assertEquals(
        List.of(0, 1, 2, (int) move),
        List.of(
            recorded.getGroup(),
            (int) recorded.getEpoch(),
            recorded.getMovingTo(),
            (int) recorded.getMove()),
        recorded::toString);
    FreezeNamespaceResponse frozen =
        apply(++i, T0, freeze("legacy", move)).reply().getFreezeNamespace();
    assertEquals(
        List.of("legacy/a", "legacy/b"),
        frozen.getState().getLeasesMap().keySet().stream().sorted().toList());
    assertEquals(List.of(session), List.copyOf(frozen.getState().getSessionsMap().keySet()));
    assertTrue(frozen.getFloor() > Math.max(a, b));
    assertEquals(
        "legacy", apply(++i, T0, acquire("legacy/c", "carol")).reply().getMoving().getNamespace());

    LogCommand.Builder adoption = adopt(frozen, 2, move);
    adoption.getAdoptNamespaceBuilder().setFromGroup(0).setFrozenAt(frozen.getRevision());
    assertEquals(2, toDestination(adoption).getAdoptNamespace().getEpoch());
    ApplyResult done =
        apply(++i, T0, finishMove("legacy", move, io.leasehold.proto.v1.MoveOutcome.MOVE_DONE));
    assertEquals(i, core.placementVersion(), "the table's version is the switch's entry");
    io.leasehold.proto.v1.PlacementResponse placed = done.reply().getFinishMove();
    assertEquals(
        List.of(2, 2, 0, 0),
        List.of(
            placed.getGroup(),
            (int) placed.getEpoch(),
            (int) placed.getMove(),
            placed.getDropFrom()),
        "placed on its new group, and over: the meta group dropped it in the same entry");
    assertTrue(done.events().isEmpty(), "nothing ends: the leases live on in group 2");
    assertEquals(java.util.Optional.empty(), stored(store, "legacy/a"));
    assertEquals(java.util.Optional.empty(), stored(store, "legacy/b"));
    assertEquals(List.of(), historyTokens(core, "legacy/gone"));
    assertEquals(
        "legacy",
        apply(++i, T0, acquire("legacy/c", "carol")).reply().getWrongGroup().getNamespace(),
        "no longer frozen here: placed elsewhere");
    assertTrue(
        apply(++i, T0, Cmds.keepAlive(session)).reply().hasKeepAlive(),
        "the session stays in the meta group");

    assertEquals(a, stored(destinationStore, "legacy/a").orElseThrow().getToken());
    assertEquals(session, stored(destinationStore, "legacy/b").orElseThrow().getSession());
    assertEquals(List.of(gone), historyTokens(destination, "legacy/gone"));
    assertTrue(token(toDestination(acquire("legacy/c", "carol"))) >= frozen.getFloor());
    assertEquals(placed, new LeaseCore(store).placement("legacy").orElseThrow(), "on reload");
    assertEquals(
        placed.getRevision(), new LeaseCore(store).placementVersion(), "the version on reload");

    // A namespace the meta group owns unplaced moves the same way.
    io.leasehold.proto.v1.PlacementResponse unplaced =
        apply(++i, T0, recordMove("fresh", 2)).reply().getRecordMove();
    assertEquals(List.of(0, 2), List.of(unplaced.getGroup(), unplaced.getMovingTo()));
  }

  @Test
  void theMetaGroupRecordsAMoveAndEachOfItsSteps() throws IOException {
    apply(1, T0, format());
    apply(
        2,
        T0,
        LogCommand.newBuilder()
            .setPlaceNamespace(
                io.leasehold.proto.v1.PlaceNamespace.newBuilder()
                    .setNamespace("lock")
                    .addGroups(1)));
    io.leasehold.proto.v1.PlacementResponse recorded =
        apply(3, T0, recordMove("lock", 2)).reply().getRecordMove();
    assertEquals(1, recorded.getGroup(), "routed to its source until the move is done");
    assertEquals(3, recorded.getMove(), "the move's id is the entry that recorded it");
    assertEquals(2, recorded.getMovingTo());
    assertEquals(recorded, apply(4, T0, recordMove("lock", 2)).reply().getRecordMove());
    assertEquals("record_move.namespace", invalid(apply(5, T0, recordMove("lock", 3))).getField());
    assertEquals(
        recorded,
        apply(6, T0, finishMove("lock", 99, io.leasehold.proto.v1.MoveOutcome.MOVE_DONE))
            .reply()
            .getFinishMove(),
        "another move's step changes nothing");

    io.leasehold.proto.v1.PlacementResponse done =
        apply(7, T0, finishMove("lock", 3, io.leasehold.proto.v1.MoveOutcome.MOVE_DONE))
            .reply()
            .getFinishMove();
    assertEquals(
        List.of(2, 2, 1), List.of(done.getGroup(), (int) done.getEpoch(), done.getDropFrom()));
    assertEquals(done, core.placement("lock").orElseThrow());
    assertEquals(
        "record_move.namespace",
        invalid(apply(8, T0, recordMove("lock", 1))).getField(),
        "no new move before the source dropped it");
    assertEquals(
        done,
        apply(9, T0, recordMove("lock", 2)).reply().getRecordMove(),
        "the same move asked again once done: answered as it stands");
    io.leasehold.proto.v1.PlacementResponse over =
        apply(10, T0, finishMove("lock", 3, io.leasehold.proto.v1.MoveOutcome.MOVE_DROPPED))
            .reply()
            .getFinishMove();
    assertEquals(
        List.of(2, 0, 0), List.of(over.getGroup(), (int) over.getMove(), over.getDropFrom()));

    long second = 11;
    apply(second, T0, recordMove("lock", 1));
    io.leasehold.proto.v1.PlacementResponse aborted =
        apply(12, T0, finishMove("lock", second, io.leasehold.proto.v1.MoveOutcome.MOVE_ABORTED))
            .reply()
            .getFinishMove();
    assertEquals(
        List.of(2, 0, 0),
        List.of(aborted.getGroup(), (int) aborted.getMove(), aborted.getMovingTo()));
    assertEquals(2, aborted.getEpoch(), "an abandoned move leaves the epoch as it was");
    assertEquals(aborted, new LeaseCore(store).placement("lock").orElseThrow(), "kept on reload");

    assertEquals(
        aborted,
        apply(13, T0, recordMove("lock", 2)).reply().getRecordMove(),
        "a move to the group it is in records nothing: a retried move that ended");
    assertEquals("record_move.to_group", invalid(apply(14, T0, recordMove("lock", 0))).getField());
    assertEquals(
        "record_move.namespace", invalid(apply(16, T0, recordMove("service", 1))).getField());
    assertEquals("record_move", toGroup(recordMove("lock", 2)).getInvalid().getField());
  }
}
