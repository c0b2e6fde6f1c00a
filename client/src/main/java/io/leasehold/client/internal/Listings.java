package io.leasehold.client.internal;

import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Reads every page of a List, one after another. */
final class Listings {
  private Listings() {}

  /**
   * Every page of {@code first}'s listing, in order; the first page's revision is the listing's.
   */
  static CompletableFuture<List<ListResponse>> all(Calls calls, ListRequest first) {
    List<ListResponse> pages = new ArrayList<>();
    return page(calls, first, pages).thenApply(v -> pages);
  }

  private static CompletableFuture<Void> page(
      Calls calls, ListRequest request, List<ListResponse> pages) {
    return calls
        .call(Calls.Target.READ, LeasesGrpc.getListMethod(), request, "List " + request.getPrefix())
        .thenCompose(
            page -> {
              pages.add(page);
              if (!page.getMore() || page.getLeasesCount() == 0) {
                return CompletableFuture.completedFuture(null);
              }
              String last = page.getLeases(page.getLeasesCount() - 1).getName();
              return page(calls, request.toBuilder().setStartAfter(last).build(), pages);
            });
  }
}
