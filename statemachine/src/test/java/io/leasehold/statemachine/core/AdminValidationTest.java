package io.leasehold.statemachine.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.SetPolicyRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Admin API's input rules, and the guard that keeps a name pattern from exploding when
 * compiled.
 */
class AdminValidationTest {

  private static void assertInvalid(String field, Runnable check) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, check::run);
    assertEquals(field, e.field(), e.getMessage());
    assertTrue(e.getMessage().startsWith(field + ": "), e.getMessage());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      value = {
        "abc; 3",
        "[a-z]+; 2",
        "job-[0-9]{1,4}; 9",
        "(a|b){3}; 10",
        "(a{100}){100}; 10201",
        "((a{1000}){1000}){1000}; 1002002001",
        "a{2,}; 4",
        "\\{1000\\}; 6",
        "[{1000}]; 1",
        "\\Qa{1000}\\E; 1",
        "(?i)ab; 2",
        "(?:ab){5}; 16",
        "x{; 2",
      })
  void patternCostCountsRepetitionsOut(String pattern, long cost) {
    assertEquals(cost, PatternCost.of(pattern), pattern);
  }

  @Test
  void patternCostSaturatesInsteadOfOverflowing() {
    assertTrue(
        PatternCost.of("(((((((a{1000}){1000}){1000}){1000}){1000}){1000}){1000})") >= 1L << 40);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "(a{100}){100}",
        "((a{1000}){1000}){1000}",
        "(",
        "a)",
        "[z-a]",
        "\\8",
        "(?<name",
        "a**"
      })
  void aPatternThatIsInvalidOrTooLargeIsRefusedBeforeRe2jCompilesIt(String pattern) {
    assertInvalid(
        "policy.name_pattern",
        () -> PolicyTerms.validate("policy", Policy.newBuilder().setNamePattern(pattern).build()));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"job-[0-9]+", "[a-z]+/i-[0-9a-f]{1,16}", "(?i)payments|billing", "\\p{L}+", ".*"})
  void ordinaryPatternsAreAccepted(String pattern) {
    assertDoesNotThrow(
        () -> PolicyTerms.validate("policy", Policy.newBuilder().setNamePattern(pattern).build()));
  }

  @Test
  void anyPatternIsEitherAcceptedOrInvalidNeverAnotherException() {
    // A RuntimeException other than InvalidArgumentException in apply would stop the replica.
    java.util.Random rnd = new java.util.Random(4);
    String alphabet = "ab()[]{}|*+?^$\\.,:-=!<>PQEp0123456789";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder p = new StringBuilder();
      int length = 1 + rnd.nextInt(30);
      for (int j = 0; j < length; j++) {
        p.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
      }
      Policy policy = Policy.newBuilder().setNamePattern(p.toString()).build();
      try {
        PolicyTerms terms = PolicyTerms.validate("policy", policy);
        terms.allows("job-1/x");
      } catch (InvalidArgumentException expected) {
        assertEquals("policy.name_pattern", expected.field());
      }
    }
  }

  @Test
  void aNamespaceWithASlashIsRefused() {
    assertInvalid(
        "namespace",
        () ->
            AdminValidation.setPolicy(
                SetPolicyRequest.newBuilder().setNamespace("lock/a").build()));
    assertDoesNotThrow(
        () -> AdminValidation.setPolicy(SetPolicyRequest.newBuilder().setNamespace("").build()));
  }

  @Test
  void aBanTakesUntilOrDurationNotBoth() {
    BanRequest.Builder b = BanRequest.newBuilder().setHolder("alice");
    assertInvalid(
        "duration",
        () ->
            AdminValidation.ban(
                b.clone()
                    .setUntil(Timestamp.newBuilder().setSeconds(2_000_000_000L))
                    .setDuration(Duration.newBuilder().setSeconds(5))
                    .build()));
    assertInvalid(
        "duration",
        () ->
            AdminValidation.ban(
                b.clone().setDuration(Duration.newBuilder().setSeconds(-5)).build()));
    assertInvalid(
        "until",
        () ->
            AdminValidation.ban(b.clone().setUntil(Timestamp.newBuilder().setSeconds(-1)).build()));
    assertInvalid(
        "until",
        () ->
            AdminValidation.banEnd(
                b.clone().setUntil(Timestamp.newBuilder().setSeconds(100)).build(), 200_000_000L));
    assertInvalid("holder", () -> AdminValidation.ban(BanRequest.getDefaultInstance()));
    assertInvalid(
        "reason", () -> AdminValidation.ban(b.clone().setReason("x".repeat(2000)).build()));
  }

  @Test
  void historyTakesExactlyOneOfNameAndHolder() {
    assertInvalid("name", () -> AdminValidation.history(HistoryRequest.getDefaultInstance()));
    assertInvalid(
        "name",
        () ->
            AdminValidation.history(
                HistoryRequest.newBuilder().setName("lock/a").setHolder("h").build()));
    assertInvalid(
        "name",
        () -> AdminValidation.history(HistoryRequest.newBuilder().setName("no-namespace").build()));
    assertInvalid(
        "limit",
        () ->
            AdminValidation.history(
                HistoryRequest.newBuilder().setHolder("h").setLimit(-1).build()));
    assertDoesNotThrow(
        () -> AdminValidation.history(HistoryRequest.newBuilder().setHolder("h").build()));
  }

  @Test
  void revokeRefusesANegativeToken() {
    assertInvalid(
        "token",
        () ->
            AdminValidation.revoke(
                RevokeRequest.newBuilder().setName("lock/a").setToken(-1).build()));
    assertInvalid(
        "name", () -> AdminValidation.revoke(RevokeRequest.newBuilder().setName("lock").build()));
  }
}
