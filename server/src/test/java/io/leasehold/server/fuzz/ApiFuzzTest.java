package io.leasehold.server.fuzz;

/**
 * The API fuzz test against three plaintext nodes, as one client allowed every call. See {@link
 * ApiFuzzing} for what is sent and checked; {@code -Dleasehold.fuzz.seed} and {@code
 * -Dleasehold.fuzz.tries} change the seed and the number of calls.
 */
class ApiFuzzTest extends ApiFuzzing {
  @Override
  protected FuzzVariant variant() {
    return FuzzClusters.plaintext();
  }
}
