package io.leasehold.server.fuzz;

import java.util.List;
import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.GenerationMode;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * The gRPC API fuzz test, for one {@link FuzzVariant}: each jqwik try is one call, generated from
 * the property's seed and sent to a running cluster; the checks of {@link FuzzSession} run on every
 * call and, once all tries are done, on the cluster and against a replay of the accepted writes on
 * a fresh cluster.
 *
 * <p>A subclass names the variant (and may send fewer calls by default, {@link #defaultTries}). The
 * seed and the number of calls are fixed by default and changed with {@code
 * -Dleasehold.fuzz.seed=N} and {@code -Dleasehold.fuzz.tries=N}; a failure names the seed and tries
 * that reproduce it.
 */
@AddLifecycleHook(value = ApiFuzzing.Session.class, propagateTo = PropagationMode.ALL_DESCENDANTS)
abstract class ApiFuzzing {
  static final long DEFAULT_SEED = 4_113_712_083_190_451L;
  static final int DEFAULT_TRIES = 2_000;

  /** The cluster and identities this container fuzzes. */
  protected abstract FuzzVariant variant();

  /** How many calls a run sends unless {@code -Dleasehold.fuzz.tries} says otherwise. */
  protected int defaultTries() {
    return DEFAULT_TRIES;
  }

  private FuzzSession session;

  @Property(
      shrinking = ShrinkingMode.OFF,
      generation = GenerationMode.RANDOMIZED,
      edgeCases = EdgeCasesMode.MIXIN)
  void everyCallKeepsTheApiContract(@ForAll("calls") FuzzCall call) {
    session.send(call);
  }

  @Provide
  Arbitrary<FuzzCall> calls() {
    List<Tuple.Tuple2<Integer, Arbitrary<? extends Rpc>>> byWeight =
        Rpc.all().stream()
            .map(r -> Tuple.<Integer, Arbitrary<? extends Rpc>>of(r.weight, Arbitraries.just(r)))
            .toList();
    @SuppressWarnings({"unchecked", "rawtypes"})
    Arbitrary<Rpc> rpc =
        (Arbitrary<Rpc>) Arbitraries.frequencyOf(byWeight.toArray(new Tuple.Tuple2[0]));
    Arbitrary<FuzzCall.Form> form =
        Arbitraries.frequency(
            Tuple.of(35, FuzzCall.Form.VALID),
            Tuple.of(20, FuzzCall.Form.MUTATED),
            Tuple.of(20, FuzzCall.Form.SCRATCH),
            Tuple.of(20, FuzzCall.Form.WIRE),
            Tuple.of(5, FuzzCall.Form.RAW));
    Arbitrary<Integer> node = Arbitraries.integers().between(0, 2);
    Arbitrary<Integer> identity =
        Arbitraries.integers().between(0, variant().identities().size() - 1);
    Arbitrary<Long> seed = Arbitraries.longs();
    Arbitrary<List<String>> strings = Atoms.strings().list().ofMinSize(3).ofMaxSize(6);
    Arbitrary<List<Long>> numbers = Atoms.numbers().list().ofMinSize(3).ofMaxSize(6);
    return Combinators.combine(rpc, form, node, identity, seed, strings, numbers).as(FuzzCall::new);
  }

  /**
   * Around the property: the seed and tries, the session before the first try, its checks after the
   * last.
   */
  public static final class Session implements AroundPropertyHook {
    @Override
    public PropertyExecutionResult aroundProperty(
        PropertyLifecycleContext context, PropertyExecutor property) throws Throwable {
      ApiFuzzing container = (ApiFuzzing) context.testInstance();
      long seed = Long.getLong("leasehold.fuzz.seed", DEFAULT_SEED);
      int tries = Integer.getInteger("leasehold.fuzz.tries", container.defaultTries());
      context.attributes().setSeed(Long.toString(seed));
      context.attributes().setTries(tries);
      // The seed, not a sample stored by an earlier run, decides what is sent.
      context.attributes().setAfterFailure(AfterFailureMode.RANDOM_SEED);
      try (FuzzSession session = FuzzSession.start(container.variant(), seed, tries)) {
        container.session = session;
        PropertyExecutionResult result = property.execute();
        if (result.status() != PropertyExecutionResult.Status.SUCCESSFUL) {
          return result;
        }
        try {
          session.verify();
        } catch (AssertionError e) {
          return result.mapToFailed(e);
        }
        return result;
      } finally {
        container.session = null;
      }
    }
  }
}
