package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.acquireRequest;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.secs;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import com.google.protobuf.FieldMask;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.WatchRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Bad input is refused with an {@link InvalidArgumentException} that names the offending field. */
class ValidationTest {

  private static void assertInvalid(String field, Executable check) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, check);
    assertEquals(field, e.field());
    assertTrue(
        e.getMessage().contains(field),
        () -> "message does not name " + field + ": " + e.getMessage());
  }

  private static void acquire(AcquireRequest.Builder r) {
    Validation.acquire(r.build());
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"sixty-five", "with space", "tab\t", "caf\u00e9"})
  void badRequestIdsAreRefused(String kind) {
    String id = kind.equals("sixty-five") ? "r".repeat(65) : kind;
    assertInvalid("request_id", () -> acquire(acquireRequest("lock/a", "alice").setRequestId(id)));
  }

  @Test
  void requestIdsUpToSixtyFourPrintableCharactersAreAccepted() {
    acquire(acquireRequest("lock/a", "alice").setRequestId("c-9f8e7d6c5b4a3928-" + "x".repeat(45)));
    acquire(acquireRequest("lock/a", "alice").setRequestId(""));
  }

  static Stream<Arguments> badNames() {
    return Stream.of(
        Arguments.of("empty", ""),
        Arguments.of("no slash", "lockbilling"),
        Arguments.of("empty rest", "ns/"),
        Arguments.of("empty namespace", "/x"),
        Arguments.of("only a slash", "/"),
        Arguments.of("513 bytes", "ns/" + "x".repeat(510)),
        Arguments.of("513 bytes of 3-byte characters", "ns/" + "\u20ac".repeat(170)),
        Arguments.of("NUL", "ns/a\u0000b"),
        Arguments.of("newline", "ns/a\nb"),
        Arguments.of("DEL", "ns/a\u007f"),
        Arguments.of("C1 control", "ns/a\u0085"),
        Arguments.of("unpaired high surrogate", "ns/a\ud800"),
        Arguments.of("unpaired low surrogate", "ns/\udc00a"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badNames")
  void badNameIsRefusedNamingTheField(String why, String name) {
    assertInvalid("name", () -> acquire(acquireRequest(name, "alice")));
    assertInvalid("name", () -> Validation.get(GetRequest.newBuilder().setName(name).build()));
    assertInvalid(
        "name",
        () -> Validation.release(ReleaseRequest.newBuilder().setName(name).setToken(1).build()));
    assertInvalid(
        "name",
        () ->
            Validation.update(
                UpdateRequest.newBuilder()
                    .setName(name)
                    .setToken(1)
                    .setAttributes(Attributes.getDefaultInstance())
                    .build()));
    assertInvalid(
        "items[1].name",
        () ->
            Validation.renew(
                RenewRequest.newBuilder()
                    .addItems(item("ns/ok", 1))
                    .addItems(item(name, 1))
                    .build()));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "ns/x",
        "lock/billing-job",
        "service/payments/i-7f3a",
        "mailbox/$admin@proxy-01",
        "a//b",
        "ns/a/",
        "ns/\ud83d\ude00",
        "ns/caf\u00e9"
      })
  void goodNameIsAccepted(String name) {
    assertDoesNotThrow(() -> acquire(acquireRequest(name, "alice")));
  }

  @Test
  void nameOfExactly512BytesIsAccepted() {
    assertDoesNotThrow(() -> Validation.name("name", "ns/" + "x".repeat(509)));
    assertDoesNotThrow(() -> Validation.name("name", "n/" + "\u20ac".repeat(170)));
  }

  @Test
  void badHolderIsRefused() {
    assertInvalid("holder", () -> acquire(acquireRequest("ns/x", "")));
    assertInvalid("holder", () -> acquire(acquireRequest("ns/x", "al\tice")));
    assertInvalid("holder", () -> acquire(acquireRequest("ns/x", "h".repeat(257))));
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "h".repeat(256))));
  }

  static Stream<Arguments> badTtls() {
    return Stream.of(
        Arguments.of("zero", Duration.getDefaultInstance()),
        Arguments.of("minus one second", Duration.newBuilder().setSeconds(-1).build()),
        Arguments.of("minus one nano", Duration.newBuilder().setNanos(-1).build()),
        Arguments.of("signs disagree", Duration.newBuilder().setSeconds(5).setNanos(-1).build()),
        Arguments.of(
            "signs disagree, negative seconds",
            Duration.newBuilder().setSeconds(-5).setNanos(1).build()),
        Arguments.of(
            "nanos out of range",
            Duration.newBuilder().setSeconds(1).setNanos(1_000_000_000).build()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badTtls")
  void nonPositiveOrMalformedTtlIsRefused(String why, Duration ttl) {
    assertInvalid("ttl", () -> acquire(acquireRequest("ns/x", "alice").setTtl(ttl)));
  }

  @Test
  void aNonPositiveTtlIsShownAsTheDurationItIs() {
    assertEquals(
        "ttl: must be positive, got 0s",
        assertThrows(
                InvalidArgumentException.class,
                () ->
                    acquire(acquireRequest("ns/x", "alice").setTtl(Duration.getDefaultInstance())))
            .getMessage());
    assertEquals(
        "ttl: must be positive, got -1.5s",
        assertThrows(
                InvalidArgumentException.class,
                () ->
                    acquire(
                        acquireRequest("ns/x", "alice")
                            .setTtl(Duration.newBuilder().setSeconds(-1).setNanos(-500_000_000))))
            .getMessage());
  }

  @Test
  void positiveTtlPassesValidationEvenOutOfPolicyBounds() {
    // Bounds are a business outcome (REJECTED), not bad input.
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "alice").setTtl(secs(1))));
    assertDoesNotThrow(
        () ->
            acquire(
                acquireRequest("ns/x", "alice").setTtl(Duration.newBuilder().setNanos(1).build())));
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "alice").setTtl(secs(100 * 3600))));
  }

  @ParameterizedTest
  @ValueSource(longs = {0, -1, Long.MIN_VALUE})
  void nonPositiveTokenIsRefused(long token) {
    assertInvalid(
        "token",
        () ->
            Validation.release(
                ReleaseRequest.newBuilder().setName("ns/x").setToken(token).build()));
    assertInvalid(
        "token",
        () ->
            Validation.update(
                UpdateRequest.newBuilder()
                    .setName("ns/x")
                    .setToken(token)
                    .setAttributes(Attributes.getDefaultInstance())
                    .build()));
    assertInvalid(
        "items[0].token",
        () -> Validation.renew(RenewRequest.newBuilder().addItems(item("ns/x", token)).build()));
    assertInvalid(
        "items[2].token",
        () ->
            Validation.renew(
                RenewRequest.newBuilder()
                    .addItems(item("ns/x", 1))
                    .addItems(item("ns/y", 2))
                    .addItems(item("ns/z", token))
                    .build()));
  }

  @Test
  void renewItemCountIsBounded() {
    assertInvalid("items", () -> Validation.renew(RenewRequest.getDefaultInstance()));
    List<RenewItem> items = new ArrayList<>();
    for (int i = 0; i < Limits.MAX_RENEW_ITEMS; i++) {
      items.add(item("ns/x" + i, 1));
    }
    assertDoesNotThrow(
        () -> Validation.renew(RenewRequest.newBuilder().addAllItems(items).build()));
    items.add(item("ns/one-too-many", 1));
    assertInvalid(
        "items", () -> Validation.renew(RenewRequest.newBuilder().addAllItems(items).build()));
  }

  @Test
  void updateNeedsAttributes() {
    assertInvalid(
        "attributes",
        () -> Validation.update(UpdateRequest.newBuilder().setName("ns/x").setToken(1).build()));
  }

  @Test
  void attributesAreBounded() {
    Map<String, String> many = new LinkedHashMap<>();
    for (int i = 0; i < Limits.MAX_METADATA_ENTRIES; i++) {
      many.put("k" + i, "v");
    }
    Attributes atLimit = Attributes.newBuilder().putAllMetadata(many).build();
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "alice").setAttributes(atLimit)));
    Attributes tooMany = atLimit.toBuilder().putMetadata("one-more", "v").build();
    assertInvalid(
        "attributes.metadata",
        () -> acquire(acquireRequest("ns/x", "alice").setAttributes(tooMany)));
    assertInvalid(
        "attributes.metadata",
        () ->
            Validation.update(
                UpdateRequest.newBuilder()
                    .setName("ns/x")
                    .setToken(1)
                    .setAttributes(tooMany)
                    .build()));

    assertInvalid(
        "attributes.metadata",
        () ->
            acquire(
                acquireRequest("ns/x", "alice")
                    .setAttributes(Attributes.newBuilder().putMetadata("", "v"))));
    assertInvalid(
        "attributes.address",
        () ->
            acquire(
                acquireRequest("ns/x", "alice")
                    .setAttributes(Attributes.newBuilder().setAddress("h".repeat(513)))));
    assertInvalid(
        "attributes.status",
        () ->
            acquire(
                acquireRequest("ns/x", "alice")
                    .setAttributes(Attributes.newBuilder().setStatus("S".repeat(65)))));
    assertInvalid(
        "attributes.status",
        () ->
            acquire(
                acquireRequest("ns/x", "alice")
                    .setAttributes(Attributes.newBuilder().setStatus("SERV\nING"))));

    // Metadata key and value errors name the attribute field and the key.
    InvalidArgumentException key =
        assertThrows(
            InvalidArgumentException.class,
            () ->
                acquire(
                    acquireRequest("ns/x", "alice")
                        .setAttributes(Attributes.newBuilder().putMetadata("k".repeat(129), "v"))));
    assertTrue(key.field().startsWith("attributes.metadata"), key.field());
    InvalidArgumentException value =
        assertThrows(
            InvalidArgumentException.class,
            () ->
                acquire(
                    acquireRequest("ns/x", "alice")
                        .setAttributes(
                            Attributes.newBuilder().putMetadata("zone", "v".repeat(4097)))));
    assertTrue(
        value.field().startsWith("attributes.metadata") && value.field().contains("zone"),
        value.field());
    assertTrue(value.getMessage().contains(value.field()));
  }

  @Test
  void listArgumentsAreBounded() {
    assertInvalid("limit", () -> Validation.list(ListRequest.newBuilder().setLimit(-1).build()));
    assertInvalid(
        "limit",
        () ->
            Validation.list(ListRequest.newBuilder().setLimit(Limits.MAX_LIST_LIMIT + 1).build()));
    assertDoesNotThrow(() -> Validation.list(ListRequest.newBuilder().setLimit(0).build()));
    assertDoesNotThrow(
        () -> Validation.list(ListRequest.newBuilder().setLimit(Limits.MAX_LIST_LIMIT).build()));
    // A prefix need not be a whole name.
    assertDoesNotThrow(() -> Validation.list(ListRequest.newBuilder().setPrefix("lo").build()));
    assertInvalid(
        "prefix", () -> Validation.list(ListRequest.newBuilder().setPrefix("lock/\u0001").build()));
    assertInvalid(
        "prefix",
        () -> Validation.list(ListRequest.newBuilder().setPrefix("p".repeat(513)).build()));
    assertInvalid(
        "start_after",
        () -> Validation.list(ListRequest.newBuilder().setStartAfter("s".repeat(513)).build()));
  }

  // ---- update masks ----

  private static UpdateRequest.Builder masked(String... paths) {
    return UpdateRequest.newBuilder()
        .setName("ns/x")
        .setToken(1)
        .setUpdateMask(FieldMask.newBuilder().addAllPaths(List.of(paths)));
  }

  static Stream<Arguments> unknownMaskPaths() {
    return Stream.of(
        Arguments.of(new String[] {"zone"}, 0),
        Arguments.of(new String[] {"address", "zone"}, 1),
        Arguments.of(new String[] {"address", "status", "Metadata"}, 2),
        Arguments.of(new String[] {"attributes.address"}, 0),
        Arguments.of(new String[] {"metadata.zone"}, 0),
        Arguments.of(new String[] {"status", ""}, 1),
        Arguments.of(new String[] {" status"}, 0),
        Arguments.of(new String[] {"address", "metadata", "status", "ttl"}, 3));
  }

  @ParameterizedTest
  @MethodSource("unknownMaskPaths")
  void unknownUpdateMaskPathIsRefusedNamingItsIndex(String[] paths, int bad) {
    assertInvalid(
        "update_mask.paths[" + bad + "]",
        () ->
            Validation.update(
                masked(paths).setAttributes(Attributes.getDefaultInstance()).build()));
    assertInvalid("update_mask.paths[" + bad + "]", () -> Validation.update(masked(paths).build()));
  }

  @Test
  void everyCombinationOfKnownMaskPathsIsAccepted() {
    String[] known = {"address", "metadata", "status"};
    for (int bits = 1; bits < 8; bits++) {
      List<String> paths = new ArrayList<>();
      for (int i = 0; i < known.length; i++) {
        if ((bits & (1 << i)) != 0) {
          paths.add(known[i]);
        }
      }
      String[] p = paths.toArray(String[]::new);
      assertDoesNotThrow(
          () ->
              Validation.update(
                  masked(p).setAttributes(Attributes.newBuilder().setStatus("SERVING")).build()),
          paths::toString);
      // With a mask, the attributes may be left out: the named fields are cleared.
      assertDoesNotThrow(() -> Validation.update(masked(p).build()), paths::toString);
    }
    assertDoesNotThrow(() -> Validation.update(masked("status", "status").build()));
  }

  // ---- watch ----

  private static WatchRequest.Builder watch() {
    return WatchRequest.newBuilder();
  }

  @Test
  void defaultWatchRequestIsValid() {
    assertDoesNotThrow(() -> Validation.watch(WatchRequest.getDefaultInstance()));
    assertDoesNotThrow(
        () ->
            Validation.watch(
                watch()
                    .setPrefix("service/pay/")
                    .setStartRevision(17)
                    .addTypes(Event.Type.ACQUIRED)
                    .setIncludeRenewals(true)
                    .setRoutesOnly(true)
                    .build()));
  }

  @Test
  void watchPrefixFollowsTheListPrefixRules() {
    assertDoesNotThrow(
        () -> Validation.watch(watch().setPrefix("lo").build()),
        "a prefix need not be a whole name");
    assertDoesNotThrow(() -> Validation.watch(watch().setPrefix("p".repeat(512)).build()));
    assertInvalid("prefix", () -> Validation.watch(watch().setPrefix("p".repeat(513)).build()));
    assertInvalid("prefix", () -> Validation.watch(watch().setPrefix("lock/\u0001").build()));
    assertInvalid("prefix", () -> Validation.watch(watch().setPrefix("lock/\ud800").build()));
  }

  @ParameterizedTest
  @ValueSource(longs = {-1, -1_000, Long.MIN_VALUE})
  void negativeWatchStartRevisionIsRefused(long revision) {
    assertInvalid(
        "start_revision", () -> Validation.watch(watch().setStartRevision(revision).build()));
  }

  @Test
  void aWatchStartGroupGoesOnlyWithAStartRevision() {
    assertInvalid("start_group", () -> Validation.watch(watch().setStartGroup(2).build()));
    assertInvalid("start_group", () -> Validation.watch(watch().setStartGroup(0).build()));
    Validation.watch(watch().setStartRevision(7).setStartGroup(0).build());
    Validation.watch(watch().setStartRevision(7).setStartGroup(2).build());
  }

  @ParameterizedTest
  @ValueSource(longs = {0, 1, Long.MAX_VALUE})
  void nonNegativeWatchStartRevisionIsAccepted(long revision) {
    assertDoesNotThrow(() -> Validation.watch(watch().setStartRevision(revision).build()));
  }

  @ParameterizedTest
  @EnumSource(
      value = Event.Type.class,
      names = {"TYPE_UNSPECIFIED", "UNRECOGNIZED"},
      mode = EnumSource.Mode.EXCLUDE)
  void everyKnownEventTypeIsAcceptedInAWatch(Event.Type type) {
    assertDoesNotThrow(() -> Validation.watch(watch().addTypes(type).build()));
    assertDoesNotThrow(
        () ->
            Validation.watch(
                watch().addTypes(Event.Type.UPDATED).addTypes(type).addTypes(type).build()));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 8, 99, -1, Integer.MIN_VALUE})
  void unspecifiedOrUnknownEventTypeIsRefusedNamingItsIndex(int value) {
    assertInvalid("types[0]", () -> Validation.watch(watch().addTypesValue(value).build()));
    assertInvalid(
        "types[2]",
        () ->
            Validation.watch(
                watch()
                    .addTypes(Event.Type.ACQUIRED)
                    .addTypes(Event.Type.REVOKED)
                    .addTypesValue(value)
                    .addTypes(Event.Type.EXPIRED)
                    .build()));
  }

  @ParameterizedTest
  @EnumSource(
      value = io.leasehold.proto.v1.EventView.class,
      names = "UNRECOGNIZED",
      mode = EnumSource.Mode.EXCLUDE)
  void everyKnownEventViewIsAcceptedInAWatch(io.leasehold.proto.v1.EventView view) {
    assertDoesNotThrow(() -> Validation.watch(watch().setView(view).build()));
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 99, -1, Integer.MIN_VALUE})
  void unknownEventViewIsRefusedNamingTheField(int value) {
    assertInvalid("view", () -> Validation.watch(watch().setViewValue(value).build()));
  }
}
