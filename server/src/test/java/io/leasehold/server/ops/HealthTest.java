package io.leasehold.server.ops;

import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standard gRPC health service, and the HTTP /healthz beside it, flip with a node's contact
 * with a leader and a quorum; reflection lists the API.
 */
class HealthTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  ServingStatus health(String id, String service) {
    return HealthGrpc.newBlockingStub(cluster.channel(id))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  void awaitStatus(String id, ServingStatus status) {
    await(
        id + " " + status,
        Duration.ofSeconds(30),
        () -> health(id, "") == status && health(id, "leasehold.v1.Leases") == status);
  }

  /** The HTTP check says what the gRPC health service says: 200 SERVING, or 503 NOT_SERVING. */
  void awaitHealthz(String id, ServingStatus status) {
    int code = status == ServingStatus.SERVING ? 200 : 503;
    await(
        id + " /healthz " + code,
        Duration.ofSeconds(30),
        () -> {
          HttpResponse<String> r = TestCluster.httpGet(cluster.node(id), "/healthz");
          return r.statusCode() == code && r.body().strip().equals(status.name());
        });
  }

  @Test
  void aLeaderCutOffFromItsFollowersAndAFollowerCutOffFromTheOthersAreNotServing()
      throws Exception {
    // Metrics on (a free port each) for the HTTP /healthz.
    cluster = TestCluster.start(3, dir, b -> b.metricsPort(0));
    for (String id : cluster.ids()) {
      awaitStatus(id, ServingStatus.SERVING);
      awaitHealthz(id, ServingStatus.SERVING);
    }
    LeaseholdNode leader = cluster.awaitLeader();
    List<String> followers = cluster.followers().stream().map(LeaseholdNode::id).toList();
    followers.forEach(cluster::stopNode);
    awaitStatus(leader.id(), ServingStatus.NOT_SERVING);
    awaitHealthz(leader.id(), ServingStatus.NOT_SERVING);

    for (String f : followers) {
      cluster.startNode(f);
    }
    for (String id : cluster.ids()) {
      awaitStatus(id, ServingStatus.SERVING);
    }

    LeaseholdNode newLeader = cluster.awaitLeader();
    String lone = cluster.followers().get(0).id();
    cluster.stopNode(newLeader.id());
    cluster.running().stream()
        .map(LeaseholdNode::id)
        .filter(id -> !id.equals(lone))
        .forEach(cluster::stopNode);
    awaitStatus(lone, ServingStatus.NOT_SERVING);
    awaitHealthz(lone, ServingStatus.NOT_SERVING);
  }

  @Test
  void reflectionListsTheApiAndHealthServices() throws Exception {
    cluster = TestCluster.start(1, dir);
    String id = cluster.awaitLeader().id();
    CompletableFuture<List<String>> services = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> requests =
        ServerReflectionGrpc.newStub(cluster.channel(id))
            .serverReflectionInfo(
                new StreamObserver<ServerReflectionResponse>() {
                  @Override
                  public void onNext(ServerReflectionResponse r) {
                    services.complete(
                        r.getListServicesResponse().getServiceList().stream()
                            .map(ServiceResponse::getName)
                            .toList());
                  }

                  @Override
                  public void onError(Throwable t) {
                    services.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {}
                });
    requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    List<String> names = services.get(10, TimeUnit.SECONDS);
    requests.onCompleted();
    for (String s :
        List.of(
            "leasehold.v1.Leases",
            "leasehold.v1.Cluster",
            "leasehold.v1.Admin",
            "grpc.health.v1.Health")) {
      assertTrue(names.contains(s), s + " in " + names);
    }
    awaitStatus(id, ServingStatus.SERVING);
    assertEquals(ServingStatus.SERVING, health(id, "leasehold.v1.Admin"));
  }
}
