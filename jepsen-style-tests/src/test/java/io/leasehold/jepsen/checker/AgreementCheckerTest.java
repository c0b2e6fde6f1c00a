package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.FinalState;
import io.leasehold.jepsen.history.FinalState.NodeView;
import io.leasehold.jepsen.history.History;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AgreementCheckerTest {
  final AgreementChecker checker = new AgreementChecker();
  final History history = new Histories().granted("a", "lock/x", 5, 0, 10).build();

  private static FinalState finalState(NodeView... views) {
    return new FinalState(Map.of(), Map.of(), Map.of(), true, List.of(views));
  }

  private static NodeView view(String node, Set<Long> tokens) {
    return new NodeView(node, Map.of("lock/x", tokens, "lock/y", Set.of(3L)), Optional.empty());
  }

  @Test
  void nodesKnowingTheSameTokensAgree() {
    Verdict v =
        checker.check(
            history.withFinalState(
                finalState(
                    view("n1", Set.of(5L, 9L)),
                    view("n2", Set.of(5L, 9L)),
                    view("n3", Set.of(5L, 9L)))));
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
  }

  @Test
  void aNodeMissingATokenTheOthersKnowIsCaught() {
    Verdict v =
        checker.check(
            history.withFinalState(
                finalState(
                    view("n1", Set.of(5L)),
                    view("n2", Set.of(5L, 9L)),
                    view("n3", Set.of(5L, 9L)))));
    assertEquals(Verdict.Result.INVALID, v.result());
    assertEquals(2, v.problems().size(), v.toString());
    assertTrue(
        v.problems().get(0).contains("lock/x")
            && v.problems().get(0).contains("n2 alone knows [9]"),
        v.toString());
  }

  @Test
  void anUnreadNodeIsLeftOutAndTwoUnreadMakeItUnknown() {
    NodeView down = new NodeView("n3", Map.of(), Optional.of("unreachable"));
    assertEquals(
        Verdict.Result.VALID,
        checker
            .check(
                history.withFinalState(
                    finalState(view("n1", Set.of(5L)), view("n2", Set.of(5L)), down)))
            .result());
    assertEquals(
        Verdict.Result.UNKNOWN,
        checker.check(history.withFinalState(finalState(view("n1", Set.of(5L)), down))).result());
  }
}
