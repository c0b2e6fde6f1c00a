package io.leasehold.server.fuzz;

import java.util.List;

/**
 * One generated call, as jqwik draws it: which RPC, how its request is made, which node it goes to
 * and as whom, and the seed and values the request is built from. The request itself is built when
 * the call is sent ({@link Requests}), because a valid request may refer to a lease granted earlier
 * in the run ("the lease of the k-th grant"), which only the run knows.
 */
record FuzzCall(
    Rpc rpc,
    Form form,
    int node,
    int identity,
    long seed,
    List<String> strings,
    List<Long> numbers) {
  /** How the request is made. */
  enum Form {
    /** A request the API should accept (its outcome may still be CONFLICT, NOT_HELD, …). */
    VALID,
    /** A valid request with one to three fields set to random values, cleared, or cut. */
    MUTATED,
    /**
     * Every field random, from the request type's descriptor: empty, huge, negative, unknown enum
     * numbers.
     */
    SCRATCH,
    /**
     * A valid request, serialized, and its bytes cut, extended, flipped or spliced with bad fields.
     */
    WIRE,
    /** Random bytes. */
    RAW
  }

  Values values() {
    return new Values(seed, strings, numbers);
  }

  @Override
  public String toString() {
    return rpc.shortName()
        + " "
        + form
        + " to node "
        + (node + 1)
        + " as identity "
        + identity
        + " (seed "
        + seed
        + ")";
  }
}
