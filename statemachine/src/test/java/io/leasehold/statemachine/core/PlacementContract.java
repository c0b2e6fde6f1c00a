package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.renew;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.PlaceNamespace;
import io.leasehold.proto.v1.PlacementQuery;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.store.KvStore;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Placement in the core (log format 6, docs/design/multi-raft.md): the meta group places each
 * namespace once, on the candidate group with the fewest, keeps one it holds live state of, and
 * refuses commands for namespaces placed elsewhere; a lease group applies commands only for the
 * namespaces it adopted, and its tokens start at the adoption's floor.
 */
abstract class PlacementContract extends CoreFixture {
  private KvStore groupStore;

  @AfterEach
  void closeGroupStore() {
    if (groupStore != null) {
      groupStore.close();
    }
  }

  private static LogCommand.Builder format(int format) {
    return LogCommand.newBuilder().setSetLogFormat(SetLogFormat.newBuilder().setFormat(format));
  }

  private static LogCommand.Builder place(String ns, Integer... groups) {
    return LogCommand.newBuilder()
        .setPlaceNamespace(
            PlaceNamespace.newBuilder().setNamespace(ns).addAllGroups(List.of(groups)));
  }

  private static LogCommand.Builder adopt(String ns, long epoch, int group, long floor) {
    return LogCommand.newBuilder()
        .setAdoptNamespace(
            AdoptNamespace.newBuilder()
                .setNamespace(ns)
                .setEpoch(epoch)
                .setGroup(group)
                .setFloor(floor));
  }

  private static PlacementResponse placed(ApplyResult r) {
    assertTrue(r.reply().hasPlaceNamespace(), r.reply()::toString);
    return r.reply().getPlaceNamespace();
  }

  private LeaseCore leaseGroup(int number) throws IOException {
    groupStore = newStore(tempDir.resolve("group-" + number));
    return new LeaseCore(groupStore, number);
  }

  private static LogReply applyTo(LeaseCore c, long index, LogCommand.Builder command)
      throws IOException {
    return c.apply(TERM, index, command.setLeaderTimeMicros(T0).build()).reply();
  }

  @Test
  void theMetaGroupPlacesEachNamespaceOnceOnTheCandidateWithTheFewest() throws IOException {
    apply(1, T0, format(LogFormat.GROUPS));
    PlacementResponse alpha = placed(apply(2, T0, place("alpha", 1, 2)));
    assertEquals(1, alpha.getGroup());
    assertEquals(1, alpha.getEpoch());
    assertEquals(2, alpha.getRevision());
    assertEquals(
        LogFormat.token(LogFormat.GROUPS, 3, 0),
        alpha.getFloor(),
        "the floor is the meta group's next token");
    assertEquals(2, placed(apply(3, T0, place("beta", 1, 2))).getGroup(), "the emptier group");
    assertEquals(2, placed(apply(4, T0, place("gamma", 2))).getGroup(), "the only candidate");
    assertEquals(alpha, placed(apply(5, T0, place("alpha", 2))), "placed once: kept as it was");
    assertEquals(
        List.of("alpha", "beta", "gamma"),
        query(ReadQuery.newBuilder().setPlacement(PlacementQuery.getDefaultInstance()), T0)
            .getPlacement()
            .getPlacementsList()
            .stream()
            .map(PlacementResponse::getNamespace)
            .toList());
    assertEquals(alpha, new LeaseCore(store).placement("alpha").orElseThrow(), "kept on reload");
  }

  @Test
  void theMetaGroupRefusesCommandsForANamespacePlacedElsewhereAndServesTheOthers()
      throws IOException {
    apply(1, T0, format(LogFormat.GROUPS));
    apply(2, T0, place("alpha", 1));
    LogReply refused = apply(3, T0, acquire("alpha/x", "alice")).reply();
    assertEquals("alpha", refused.getWrongGroup().getNamespace(), refused::toString);
    assertTrue(record("alpha/x").isEmpty(), "nothing applied");
    assertEquals(Outcome.GRANTED, granted(apply(4, T0, acquire("lock/x", "alice"))).getOutcome());
    LogReply renewal = apply(5, T0, renew(item("lock/x", 4L << 12), item("alpha/y", 9))).reply();
    assertEquals("alpha", renewal.getWrongGroup().getNamespace(), renewal::toString);
  }

  @Test
  void aNamespaceTheMetaGroupHoldsLeasesOfStaysThere() throws IOException {
    apply(1, T0, format(LogFormat.GROUPS));
    granted(apply(2, T0, acquire("lock/a", "alice")));
    assertEquals(0, placed(apply(3, T0, place("lock", 1, 2))).getGroup());
    assertEquals(Outcome.GRANTED, granted(apply(4, T0, acquire("lock/b", "bob"))).getOutcome());
  }

  @Test
  void aLeaseGroupAppliesCommandsOnlyForWhatItAdoptedWithTokensFromTheFloor() throws IOException {
    LeaseCore group = leaseGroup(2);
    applyTo(group, 1, format(LogFormat.GROUPS));
    assertEquals(
        "alpha", applyTo(group, 2, acquire("alpha/a", "alice")).getWrongGroup().getNamespace());
    long floor = 1L << 40;
    PlacementResponse adopted = applyTo(group, 3, adopt("alpha", 1, 2, floor)).getAdoptNamespace();
    assertEquals(2, adopted.getGroup());
    LogReply grant = applyTo(group, 4, acquire("alpha/a", "alice"));
    long token = grant.getAcquire().getLease().getToken();
    assertEquals(Outcome.GRANTED, grant.getAcquire().getOutcome(), grant::toString);
    assertTrue(token >= floor, "token " + token + " at or above the floor " + floor);
    assertEquals(
        adopted,
        applyTo(group, 5, adopt("alpha", 1, 2, floor * 2)).getAdoptNamespace(),
        "a resent adoption changes nothing, its floor included");
    LogReply next = applyTo(group, 6, acquire("alpha/b", "bob"));
    assertTrue(next.getAcquire().getLease().getToken() > token);
    assertTrue(next.getAcquire().getLease().getToken() < floor * 2);
    assertEquals(
        "beta",
        applyTo(group, 7, renew(item("alpha/a", token), item("beta/c", 1)))
            .getWrongGroup()
            .getNamespace());

    LeaseCore reloaded = new LeaseCore(groupStore, 2);
    LogReply after =
        reloaded
            .apply(TERM, 8, acquire("alpha/c", "carol").setLeaderTimeMicros(T0).build())
            .reply();
    assertTrue(
        after.getAcquire().getLease().getToken() > next.getAcquire().getLease().getToken(),
        "the offset survives a reload: " + after);
  }

  @Test
  void placementsNeedTheirFormatAndTheRightGroupAndNameTheFieldTheyBreak() throws IOException {
    assertTrue(invalid(apply(1, T0, place("alpha", 1))).getMessage().contains("log format 6"));
    apply(2, T0, format(LogFormat.GROUPS));
    assertEquals("place_namespace.namespace", invalid(apply(3, T0, place("a/b", 1))).getField());
    assertEquals("place_namespace.namespace", invalid(apply(4, T0, place("", 1))).getField());
    assertEquals("place_namespace.groups", invalid(apply(5, T0, place("alpha"))).getField());
    assertEquals("place_namespace.groups", invalid(apply(6, T0, place("alpha", 0))).getField());
    assertEquals("adopt_namespace", invalid(apply(7, T0, adopt("alpha", 1, 1, 0))).getField());

    LeaseCore group = leaseGroup(1);
    applyTo(group, 1, format(LogFormat.GROUPS));
    assertEquals("place_namespace", applyTo(group, 2, place("alpha", 1)).getInvalid().getField());
    assertEquals(
        "adopt_namespace.group",
        applyTo(group, 3, adopt("alpha", 1, 2, 0)).getInvalid().getField());
    assertEquals(
        "adopt_namespace.epoch",
        applyTo(group, 4, adopt("alpha", 0, 1, 0)).getInvalid().getField());
    assertEquals(
        "adopt_namespace.floor",
        applyTo(group, 5, adopt("alpha", 1, 1, -1)).getInvalid().getField());
    assertTrue(group.placement("alpha").isEmpty(), "nothing adopted by refused entries");
  }
}
