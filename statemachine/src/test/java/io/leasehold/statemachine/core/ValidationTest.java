package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.acquireRequest;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.secs;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.UpdateRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Bad input is refused with an {@link InvalidArgumentException} that names the offending field. */
class ValidationTest {

  private static void assertInvalid(String field, Executable check) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, check);
    assertEquals(field, e.field());
    assertTrue(e.getMessage().contains(field), () -> "message does not name " + field + ": " + e.getMessage());
  }

  private static void acquire(AcquireRequest.Builder r) {
    Validation.acquire(r.build());
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
    assertInvalid("name", () -> Validation.release(ReleaseRequest.newBuilder().setName(name).setToken(1).build()));
    assertInvalid("name", () -> Validation.update(UpdateRequest.newBuilder().setName(name).setToken(1)
        .setAttributes(Attributes.getDefaultInstance()).build()));
    assertInvalid("items[1].name", () -> Validation.renew(RenewRequest.newBuilder()
        .addItems(item("ns/ok", 1)).addItems(item(name, 1)).build()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"ns/x", "lock/billing-job", "service/payments/i-7f3a", "mailbox/$admin@proxy-01", "a//b", "ns/a/",
      "ns/\ud83d\ude00", "ns/caf\u00e9"})
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
        Arguments.of("signs disagree, negative seconds", Duration.newBuilder().setSeconds(-5).setNanos(1).build()),
        Arguments.of("nanos out of range", Duration.newBuilder().setSeconds(1).setNanos(1_000_000_000).build()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badTtls")
  void nonPositiveOrMalformedTtlIsRefused(String why, Duration ttl) {
    assertInvalid("ttl", () -> acquire(acquireRequest("ns/x", "alice").setTtl(ttl)));
  }

  @Test
  void positiveTtlPassesValidationEvenOutOfPolicyBounds() {
    // Bounds are a business outcome (REJECTED), not bad input.
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "alice").setTtl(secs(1))));
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "alice").setTtl(Duration.newBuilder().setNanos(1).build())));
    assertDoesNotThrow(() -> acquire(acquireRequest("ns/x", "alice").setTtl(secs(100 * 3600))));
  }

  @ParameterizedTest
  @ValueSource(longs = {0, -1, Long.MIN_VALUE})
  void nonPositiveTokenIsRefused(long token) {
    assertInvalid("token", () -> Validation.release(ReleaseRequest.newBuilder().setName("ns/x").setToken(token).build()));
    assertInvalid("token", () -> Validation.update(UpdateRequest.newBuilder().setName("ns/x").setToken(token)
        .setAttributes(Attributes.getDefaultInstance()).build()));
    assertInvalid("items[0].token", () -> Validation.renew(RenewRequest.newBuilder().addItems(item("ns/x", token)).build()));
    assertInvalid("items[2].token", () -> Validation.renew(RenewRequest.newBuilder()
        .addItems(item("ns/x", 1)).addItems(item("ns/y", 2)).addItems(item("ns/z", token)).build()));
  }

  @Test
  void renewItemCountIsBounded() {
    assertInvalid("items", () -> Validation.renew(RenewRequest.getDefaultInstance()));
    List<RenewItem> items = new ArrayList<>();
    for (int i = 0; i < Limits.MAX_RENEW_ITEMS; i++) {
      items.add(item("ns/x" + i, 1));
    }
    assertDoesNotThrow(() -> Validation.renew(RenewRequest.newBuilder().addAllItems(items).build()));
    items.add(item("ns/one-too-many", 1));
    assertInvalid("items", () -> Validation.renew(RenewRequest.newBuilder().addAllItems(items).build()));
  }

  @Test
  void updateNeedsAttributes() {
    assertInvalid("attributes", () -> Validation.update(UpdateRequest.newBuilder().setName("ns/x").setToken(1).build()));
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
    assertInvalid("attributes.metadata", () -> acquire(acquireRequest("ns/x", "alice").setAttributes(tooMany)));
    assertInvalid("attributes.metadata", () -> Validation.update(UpdateRequest.newBuilder().setName("ns/x").setToken(1)
        .setAttributes(tooMany).build()));

    assertInvalid("attributes.metadata", () -> acquire(acquireRequest("ns/x", "alice")
        .setAttributes(Attributes.newBuilder().putMetadata("", "v"))));
    assertInvalid("attributes.address", () -> acquire(acquireRequest("ns/x", "alice")
        .setAttributes(Attributes.newBuilder().setAddress("h".repeat(513)))));
    assertInvalid("attributes.status", () -> acquire(acquireRequest("ns/x", "alice")
        .setAttributes(Attributes.newBuilder().setStatus("S".repeat(65)))));
    assertInvalid("attributes.status", () -> acquire(acquireRequest("ns/x", "alice")
        .setAttributes(Attributes.newBuilder().setStatus("SERV\nING"))));

    // Metadata key and value errors name the attribute field and the key.
    InvalidArgumentException key = assertThrows(InvalidArgumentException.class, () -> acquire(acquireRequest("ns/x", "alice")
        .setAttributes(Attributes.newBuilder().putMetadata("k".repeat(129), "v"))));
    assertTrue(key.field().startsWith("attributes.metadata"), key.field());
    InvalidArgumentException value = assertThrows(InvalidArgumentException.class, () -> acquire(acquireRequest("ns/x", "alice")
        .setAttributes(Attributes.newBuilder().putMetadata("zone", "v".repeat(4097)))));
    assertTrue(value.field().startsWith("attributes.metadata") && value.field().contains("zone"), value.field());
    assertTrue(value.getMessage().contains(value.field()));
  }

  @Test
  void listArgumentsAreBounded() {
    assertInvalid("limit", () -> Validation.list(ListRequest.newBuilder().setLimit(-1).build()));
    assertInvalid("limit", () -> Validation.list(ListRequest.newBuilder().setLimit(Limits.MAX_LIST_LIMIT + 1).build()));
    assertDoesNotThrow(() -> Validation.list(ListRequest.newBuilder().setLimit(0).build()));
    assertDoesNotThrow(() -> Validation.list(ListRequest.newBuilder().setLimit(Limits.MAX_LIST_LIMIT).build()));
    // A prefix need not be a whole name.
    assertDoesNotThrow(() -> Validation.list(ListRequest.newBuilder().setPrefix("lo").build()));
    assertInvalid("prefix", () -> Validation.list(ListRequest.newBuilder().setPrefix("lock/\u0001").build()));
    assertInvalid("prefix", () -> Validation.list(ListRequest.newBuilder().setPrefix("p".repeat(513)).build()));
    assertInvalid("start_after", () -> Validation.list(ListRequest.newBuilder().setStartAfter("s".repeat(513)).build()));
  }
}
