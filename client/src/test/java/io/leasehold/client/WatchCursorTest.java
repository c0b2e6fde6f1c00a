package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watch's cursor against a scripted server: what it asks for when it resumes, and what it
 * drops.
 */
class WatchCursorTest {
  Server server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.shutdownNow();
    }
  }

  private static Event event(Event.Type type, long revision, String name) {
    return Event.newBuilder()
        .setType(type)
        .setRevision(revision)
        .setName(name)
        .setLease(Lease.newBuilder().setName(name).setHolder("h").setToken(revision))
        .build();
  }

  private static WatchResponse message(long revision, Event... events) {
    return WatchResponse.newBuilder().addAllEvents(List.of(events)).setRevision(revision).build();
  }

  /**
   * A Leases service whose Watch plays {@code script} (call number, request, stream) and records
   * the requests.
   */
  private String serve(
      List<WatchRequest> requests, BiConsumer<WatchRequest, StreamObserver<WatchResponse>> script)
      throws Exception {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new LeasesGrpc.LeasesImplBase() {
                  @Override
                  public void watch(WatchRequest request, StreamObserver<WatchResponse> out) {
                    requests.add(request);
                    script.accept(request, out);
                  }
                })
            .build()
            .start();
    return "127.0.0.1:" + server.getPort();
  }

  private static LeaseholdClient client(String endpoint) {
    return LeaseholdClient.builder()
        .endpoints(endpoint)
        .discoverMembers(false)
        .retry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(50), 2, 0.1))
        .build();
  }

  @Test
  void aRevisionSplitOverTwoMessagesIsResumedAtThatRevisionWithoutDuplicates() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) -> {
              if (requests.size() == 1) {
                // Revision 6 has three events; the stream breaks after the first message claimed
                // it.
                out.onNext(
                    message(
                        6,
                        event(Event.Type.ACQUIRED, 5, "a/x"),
                        event(Event.Type.EXPIRED, 6, "a/y")));
                out.onError(
                    Status.UNAVAILABLE
                        .withDescription("node stopping")
                        .asRuntimeException(new Metadata()));
              } else {
                out.onNext(
                    message(
                        7,
                        event(Event.Type.EXPIRED, 6, "a/y"),
                        event(Event.Type.EXPIRED, 6, "a/z"),
                        event(Event.Type.ACQUIRED, 7, "a/w")));
              }
            });
    List<String> seen = new CopyOnWriteArrayList<>();
    try (LeaseholdClient client = client(endpoint)) {
      Watch w = client.watch("a/", 5, e -> seen.add(e.revision() + ":" + e.name()));
      Fixtures.await(
          "the watch resumed and caught up", Duration.ofSeconds(10), () -> w.revision() >= 7);
      assertEquals(List.of("5:a/x", "6:a/y", "6:a/z", "7:a/w"), seen);
      assertEquals(5, requests.get(0).getStartRevision());
      assertEquals(
          6,
          requests.get(1).getStartRevision(),
          "resumed at the revision whose events may be incomplete");
      w.close();
    }
  }

  @Test
  void theStartOfASplitRevisionIsNotDeliveredTwiceAfterABreak() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) -> {
              if (requests.size() == 1) {
                // Revision 6 is split, as the server splits it: the message claims only 5.
                out.onNext(
                    message(
                        5,
                        event(Event.Type.ACQUIRED, 5, "a/x"),
                        event(Event.Type.EXPIRED, 6, "a/y")));
                out.onError(
                    Status.UNAVAILABLE
                        .withDescription("node stopping")
                        .asRuntimeException(new Metadata()));
              } else {
                out.onNext(
                    message(
                        6,
                        event(Event.Type.EXPIRED, 6, "a/y"),
                        event(Event.Type.EXPIRED, 6, "a/z")));
                out.onNext(message(7, event(Event.Type.ACQUIRED, 7, "a/w")));
              }
            });
    List<String> seen = new CopyOnWriteArrayList<>();
    try (LeaseholdClient client = client(endpoint)) {
      Watch w = client.watch("a/", 5, e -> seen.add(e.revision() + ":" + e.name()));
      Fixtures.await(
          "the watch resumed and caught up", Duration.ofSeconds(10), () -> w.revision() >= 7);
      assertEquals(List.of("5:a/x", "6:a/y", "6:a/z", "7:a/w"), seen);
      w.close();
    }
  }

  /** A message of a watch across lease groups: one group's, with a resume token. */
  private static WatchResponse grouped(int group, long revision, String token, Event... events) {
    return message(revision, events).toBuilder()
        .setGroup(group)
        .setResumeToken(com.google.protobuf.ByteString.copyFromUtf8(token))
        .build();
  }

  @Test
  void aWatchAcrossLeaseGroupsResumesFromItsTokenAndKeepsEachGroupsCursor() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) -> {
              if (requests.size() == 1) {
                out.onNext(grouped(0, 10, "t1", event(Event.Type.ACQUIRED, 10, "a/x")));
                // Group 2's revision 6 is split: this message claims only 5.
                out.onNext(
                    grouped(
                        2,
                        5,
                        "t2",
                        event(Event.Type.ACQUIRED, 5, "b/x"),
                        event(Event.Type.EXPIRED, 6, "b/y")));
                out.onError(
                    Status.UNAVAILABLE
                        .withDescription("node stopping")
                        .asRuntimeException(new Metadata()));
              } else {
                out.onNext(
                    grouped(
                        2,
                        6,
                        "t3",
                        event(Event.Type.EXPIRED, 6, "b/y"),
                        event(Event.Type.EXPIRED, 6, "b/z")));
                out.onNext(grouped(0, 12, "t4", event(Event.Type.RELEASED, 12, "a/x")));
                // Below the meta group's 12, but group 2's own next revision.
                out.onNext(grouped(2, 7, "t5", event(Event.Type.ACQUIRED, 7, "b/w")));
              }
            });
    List<String> seen = new CopyOnWriteArrayList<>();
    try (LeaseholdClient client = client(endpoint)) {
      Watch w = client.watch("", 0, e -> seen.add(e.revision() + ":" + e.name()));
      Fixtures.await(
          "the watch resumed and caught up", Duration.ofSeconds(10), () -> seen.size() >= 6);
      assertEquals(List.of("10:a/x", "5:b/x", "6:b/y", "6:b/z", "12:a/x", "7:b/w"), seen);
      assertEquals(
          "t2",
          requests.get(1).getResumeToken().toStringUtf8(),
          "resumed from the last message's token");
      assertEquals(0, requests.get(1).getStartRevision());
      assertEquals(12, w.revision(), "the meta group's position");
      w.close();
    }
  }

  @Test
  void aRoutingTableAcrossLeaseGroupsWatchesFromItsListsToken() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new LeasesGrpc.LeasesImplBase() {
                  @Override
                  public void list(ListRequest request, StreamObserver<ListResponse> out) {
                    out.onNext(
                        ListResponse.newBuilder()
                            .setRevision(40)
                            .setResumeToken(com.google.protobuf.ByteString.copyFromUtf8("listed"))
                            .build());
                    out.onCompleted();
                  }

                  @Override
                  public void watch(WatchRequest request, StreamObserver<WatchResponse> out) {
                    requests.add(request);
                    Event up =
                        event(Event.Type.ACQUIRED, 7, "svc/a").toBuilder()
                            .setLease(
                                Lease.newBuilder()
                                    .setName("svc/a")
                                    .setHolder("h")
                                    .setToken(7)
                                    .setAttributes(
                                        io.leasehold.proto.v1.Attributes.newBuilder()
                                            .setAddress("10.0.0.1:80")))
                            .build();
                    // Group 2's revision 7, below the meta group's 40: still a change to show.
                    out.onNext(grouped(2, 7, "t1", up));
                  }
                })
            .build()
            .start();
    try (LeaseholdClient client = client("127.0.0.1:" + server.getPort())) {
      RoutingTable table = client.routingTable("").get(10, java.util.concurrent.TimeUnit.SECONDS);
      Fixtures.await(
          "the group's route is in the table",
          Duration.ofSeconds(10),
          () -> table.lookup("svc/a").isPresent());
      assertEquals("listed", requests.get(0).getResumeToken().toStringUtf8());
      assertEquals(0, requests.get(0).getStartRevision());
      table.close();
    }
  }

  @Test
  void aWatchOfOneNamespaceResumesInItsGroupAndEndsIfTheGroupChanges() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) -> {
              switch (requests.size()) {
                case 1 -> {
                  out.onNext(
                      message(8, event(Event.Type.ACQUIRED, 8, "c/x")).toBuilder()
                          .setGroup(3)
                          .build());
                  out.onError(Status.UNAVAILABLE.asRuntimeException());
                }
                // A node that serves another group's revisions (none does): the cursor cannot
                // go on from there.
                default -> out.onNext(message(4).toBuilder().setGroup(1).build());
              }
            });
    List<String> seen = new CopyOnWriteArrayList<>();
    java.util.concurrent.CompletableFuture<LeaseholdException> ended =
        new java.util.concurrent.CompletableFuture<>();
    try (LeaseholdClient client = client(endpoint)) {
      client.watch(
          WatchOptions.of("c/").withStartAfter(new LeaseListing(List.of(), 7, 3)),
          new WatchListener() {
            @Override
            public void onEvent(WatchEvent e) {
              seen.add(e.group() + ":" + e.revision() + ":" + e.name());
            }

            @Override
            public void onError(LeaseholdException error) {
              ended.complete(error);
            }
          });
      LeaseholdException error = ended.get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertTrue(error instanceof WatchCompactedException, error::toString);
      assertEquals(List.of("3:8:c/x"), seen);
      assertEquals(8, requests.get(0).getStartRevision());
      assertEquals(3, requests.get(0).getStartGroup(), "a listing's group");
      assertEquals(8, requests.get(1).getStartRevision(), "at the last revision, as always");
      assertTrue(requests.get(1).hasStartGroup());
      assertEquals(3, requests.get(1).getStartGroup(), "resumed in the group of its messages");
    }
  }

  @Test
  void aBareRevisionIsSentWithoutAGroupUntilAMessageSaysOne() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) -> {
              if (requests.size() == 1) {
                out.onNext(message(5, event(Event.Type.ACQUIRED, 5, "d/x")));
                out.onError(Status.UNAVAILABLE.asRuntimeException());
              } else {
                out.onNext(message(6, event(Event.Type.ACQUIRED, 6, "d/y")));
              }
            });
    List<String> seen = new CopyOnWriteArrayList<>();
    try (LeaseholdClient client = client(endpoint)) {
      Watch w = client.watch("d/", 5, e -> seen.add(e.revision() + ":" + e.name()));
      Fixtures.await("caught up", Duration.ofSeconds(10), () -> w.revision() >= 6);
      assertEquals(List.of("5:d/x", "6:d/y"), seen);
      assertTrue(!requests.get(0).hasStartGroup(), "a revision alone says no group");
      assertEquals(0, requests.get(1).getStartGroup(), "the meta group's messages");
      assertTrue(requests.get(1).hasStartGroup());
      w.close();
    }
  }

  @Test
  void aNodeThatIsBehindRepeatsNothingAndACompleteRevisionResumesAfterIt() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) -> {
              switch (requests.size()) {
                case 1 -> {
                  out.onNext(message(8, event(Event.Type.ACQUIRED, 8, "b/x")));
                  out.onNext(message(10)); // progress: everything to 10 was sent
                  out.onError(Status.RESOURCE_EXHAUSTED.asRuntimeException());
                }
                case 2 -> {
                  // A lagging node: history below the start, then progress below the cursor, then
                  // new events.
                  out.onNext(message(9, event(Event.Type.RELEASED, 9, "b/x")));
                  out.onNext(message(9));
                  out.onNext(message(11, event(Event.Type.ACQUIRED, 11, "b/y")));
                }
                default -> out.onError(Status.INTERNAL.asRuntimeException());
              }
            });
    List<String> seen = new CopyOnWriteArrayList<>();
    List<Long> progress = new CopyOnWriteArrayList<>();
    try (LeaseholdClient client = client(endpoint)) {
      Watch w =
          client.watch(
              "b/",
              8,
              new WatchListener() {
                @Override
                public void onEvent(WatchEvent e) {
                  seen.add(e.revision() + ":" + e.name());
                }

                @Override
                public void onProgress(long revision) {
                  progress.add(revision);
                }
              });
      Fixtures.await("caught up", Duration.ofSeconds(10), () -> w.revision() >= 11);
      assertEquals(List.of("8:b/x", "11:b/y"), seen);
      assertEquals(11, requests.get(1).getStartRevision());
      for (int i = 1; i < progress.size(); i++) {
        assertTrue(progress.get(i) >= progress.get(i - 1), "progress never goes back: " + progress);
      }
      w.close();
    }
  }

  @Test
  void aBadRequestEndsTheWatchThroughOnError() throws Exception {
    List<WatchRequest> requests = new CopyOnWriteArrayList<>();
    String endpoint =
        serve(
            requests,
            (request, out) ->
                out.onError(
                    Status.INVALID_ARGUMENT
                        .withDescription("prefix: must not contain control characters")
                        .asRuntimeException()));
    List<LeaseholdException> errors = new CopyOnWriteArrayList<>();
    try (LeaseholdClient client = client(endpoint)) {
      Watch w =
          client.watch(
              WatchOptions.of("x"),
              new WatchListener() {
                @Override
                public void onEvent(WatchEvent event) {}

                @Override
                public void onError(LeaseholdException error) {
                  errors.add(error);
                }
              });
      Fixtures.await("the error", Duration.ofSeconds(10), () -> !errors.isEmpty());
      assertTrue(errors.get(0) instanceof InvalidRequestException);
      assertTrue(errors.get(0).getMessage().startsWith("prefix:"), errors.get(0).getMessage());
      assertTrue(w.isClosed());
      assertEquals(1, requests.size(), "not retried");
    }
  }
}
