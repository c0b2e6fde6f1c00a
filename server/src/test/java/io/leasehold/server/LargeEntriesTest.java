package io.leasehold.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The largest requests the client port takes become log entries Ratis accepts: a single one beyond
 * Ratis's default 4 MB entry limit, and many large ones at once, which the batcher must not put
 * into one entry beyond it.
 */
class LargeEntriesTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(3, dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @Test
  void aRenewOfTenThousandLongNamesIsOneEntryOfMoreThanFourMegabytes() {
    RenewRequest.Builder renew = RenewRequest.newBuilder();
    for (int i = 0; i < 10_000; i++) {
      renew.addItems(
          RenewItem.newBuilder()
              .setName(String.format("big/%05d-", i) + "x".repeat(500))
              .setToken(1));
    }
    RenewRequest request = renew.build();
    assertEquals(
        true,
        request.getSerializedSize() > 5_000_000,
        "larger than Ratis's default entry limit: " + request.getSerializedSize());
    for (String id : cluster.ids()) {
      RenewResponse r =
          LeasesGrpc.newBlockingStub(cluster.channel(id))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .withMaxOutboundMessageSize(16 << 20)
              .withMaxInboundMessageSize(16 << 20)
              .renew(request);
      assertEquals(10_000, r.getResultsCount(), id);
      assertEquals(Outcome.NOT_HELD, r.getResults(9_999).getOutcome());
    }
  }

  @Test
  void manyLargeWritesAtOnceAreBatchedIntoEntriesRatisTakes() throws Exception {
    Attributes.Builder big = Attributes.newBuilder();
    for (int k = 0; k < 64; k++) {
      big.putMetadata("k" + k, "v".repeat(4000));
    }
    List<com.google.common.util.concurrent.ListenableFuture<AcquireResponse>> sent =
        new ArrayList<>();
    LeasesGrpc.LeasesFutureStub stub =
        LeasesGrpc.newFutureStub(cluster.channel(cluster.awaitLeader().id()))
            .withDeadlineAfter(60, TimeUnit.SECONDS);
    for (int i = 0; i < 48; i++) { // about 12 MB in all, 256 KB each
      sent.add(
          stub.acquire(
              AcquireRequest.newBuilder()
                  .setName("wide/" + i)
                  .setHolder("h" + i)
                  .setTtl(Requests.seconds(60))
                  .setAttributes(big)
                  .build()));
    }
    for (var f : sent) {
      assertEquals(Outcome.GRANTED, f.get(60, TimeUnit.SECONDS).getOutcome());
    }
  }
}
