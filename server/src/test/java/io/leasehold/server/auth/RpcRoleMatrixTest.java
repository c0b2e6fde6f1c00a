package io.leasehold.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.leasehold.proto.v1.*;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every RPC of every Leasehold service against every kind of identity, on a node with client
 * certificates required: allowed (whatever else the call then says) or PERMISSION_DENIED, as
 * written down here by hand, independently of the rules the node applies.
 */
class RpcRoleMatrixTest {
  /** The identities, in the order of each row's letters. */
  static final List<String> WHO = List.of("eve", "carol", "alice", "dave", "mbadmin", "root");

  // eve: no role; carol: reader; alice: client; dave: client on mailbox/ only;
  // mbadmin: admin on mailbox/ only; root: admin (the initial admin).

  @TempDir static Path dir;
  static TestCluster cluster;
  static TestCerts.Authority ca;
  static final Map<String, ManagedChannel> CHANNELS = new LinkedHashMap<>();

  record Row(MethodDescriptor<Message, Message> method, Message request, String allowed) {}

  @SuppressWarnings("unchecked")
  static Row row(MethodDescriptor<?, ?> method, Message request, String allowed) {
    return new Row((MethodDescriptor<Message, Message>) method, request, allowed);
  }

  /** Y: allowed, N: PERMISSION_DENIED, for eve, carol, alice, dave, mbadmin, root. */
  static List<Row> rows() {
    Member bogus = Member.newBuilder().build();
    return List.of(
        row(
            LeasesGrpc.getAcquireMethod(),
            AcquireRequest.newBuilder().setName("lock/m").setTtl(Requests.seconds(30)).build(),
            "NNYNNY"),
        row(
            LeasesGrpc.getAcquireMethod(),
            AcquireRequest.newBuilder().setName("mailbox/m").setTtl(Requests.seconds(30)).build(),
            "NNYYYY"),
        row(
            LeasesGrpc.getAcquireManyMethod(),
            AcquireManyRequest.newBuilder()
                .addItems(AcquireManyItem.newBuilder().setName("mailbox/m1"))
                .setTtl(Requests.seconds(30))
                .build(),
            "NNYYYY"),
        row(
            LeasesGrpc.getAcquireManyMethod(),
            AcquireManyRequest.newBuilder()
                .addItems(AcquireManyItem.newBuilder().setName("mailbox/m2"))
                .addItems(AcquireManyItem.newBuilder().setName("lock/m2"))
                .setTtl(Requests.seconds(30))
                .build(),
            "NNYNNY"),
        row(LeasesGrpc.getRenewMethod(), Requests.renew("lock/m", 1), "NNYNNY"),
        row(LeasesGrpc.getReleaseMethod(), Requests.release("lock/m", 1), "NNYNNY"),
        row(
            LeasesGrpc.getUpdateMethod(),
            UpdateRequest.newBuilder()
                .setName("lock/m")
                .setToken(1)
                .setAttributes(Attributes.newBuilder().setStatus("X"))
                .build(),
            "NNYNNY"),
        row(
            LeasesGrpc.getCreateSessionMethod(),
            CreateSessionRequest.newBuilder().setTtl(Requests.seconds(30)).build(),
            "NNYYYY"),
        row(
            LeasesGrpc.getKeepAliveMethod(),
            KeepAliveRequest.newBuilder().addSessions(1).build(),
            "NNYYYY"),
        row(
            LeasesGrpc.getCloseSessionMethod(),
            CloseSessionRequest.newBuilder().setSession(1).build(),
            "NNYYYY"),
        row(
            LeasesGrpc.getGetSessionMethod(),
            GetSessionRequest.newBuilder().setSession(1).build(),
            "NYYNNY"),
        row(LeasesGrpc.getListSessionsMethod(), ListSessionsRequest.getDefaultInstance(), "NYYNNY"),
        row(
            LeasesGrpc.getTransferMethod(),
            TransferRequest.newBuilder().setName("lock/m").setToken(1).setToHolder("bob").build(),
            "NNYNNY"),
        row(
            LeasesGrpc.getTransferMethod(),
            TransferRequest.newBuilder()
                .setName("mailbox/m")
                .setToken(1)
                .setToHolder("bob")
                .build(),
            "NNYYYY"),
        row(
            LeasesGrpc.getAcceptTransferMethod(),
            AcceptTransferRequest.newBuilder().setName("lock/m").setOffer(1).build(),
            "NNYNNY"),
        row(LeasesGrpc.getGetMethod(), Requests.get("lock/m"), "NYYNNY"),
        row(LeasesGrpc.getListMethod(), Requests.list("lock/"), "NYYNNY"),
        row(LeasesGrpc.getListMethod(), Requests.list("mailbox/7"), "NYYYYY"),
        row(
            LeasesGrpc.getWatchMethod(),
            WatchRequest.newBuilder().setPrefix("mailbox/").build(),
            "NYYYYY"),
        row(LeasesGrpc.getWatchMethod(), WatchRequest.getDefaultInstance(), "NYYNNY"),
        row(
            RoutingGrpc.getLookupMethod(),
            LookupRequest.newBuilder().setName("lock/m").build(),
            "NYYNNY"),
        row(RoutingGrpc.getListRoutesMethod(), ListRoutesRequest.getDefaultInstance(), "NYYNNY"),
        row(
            RegistryGrpc.getRegisterMethod(),
            RegisterRequest.newBuilder()
                .setService("web")
                .setInstance("i1")
                .setAddress("10.0.0.1:80")
                .setTtl(Requests.seconds(30))
                .build(),
            "NNYNNY"),
        row(
            RegistryGrpc.getDeregisterMethod(),
            DeregisterRequest.newBuilder().setService("web").setInstance("i1").setToken(1).build(),
            "NNYNNY"),
        row(
            RegistryGrpc.getSetStatusMethod(),
            SetStatusRequest.newBuilder()
                .setService("web")
                .setInstance("i1")
                .setToken(1)
                .setStatus("DRAINING")
                .build(),
            "NNYNNY"),
        row(
            RegistryGrpc.getResolveMethod(),
            ResolveRequest.newBuilder().setService("web").build(),
            "NYYNNY"),
        row(ClusterGrpc.getStatusMethod(), StatusRequest.getDefaultInstance(), "NYYYYY"),
        row(
            ClusterGrpc.getAddMemberMethod(),
            AddMemberRequest.newBuilder().setMember(bogus).build(),
            "NNNNNY"),
        row(
            ClusterGrpc.getRemoveMemberMethod(),
            RemoveMemberRequest.newBuilder().setId("n9").build(),
            "NNNNNY"),
        row(
            ClusterGrpc.getTransferLeadershipMethod(),
            TransferLeadershipRequest.newBuilder().setId("n9").build(),
            "NNNNNY"),
        row(
            ClusterGrpc.getTakeSnapshotMethod(),
            TakeSnapshotRequest.getDefaultInstance(),
            "NNNNNY"),
        row(ClusterGrpc.getBackupMethod(), BackupRequest.getDefaultInstance(), "NNNNNY"),
        row(
            ClusterGrpc.getMoveNamespaceMethod(),
            io.leasehold.proto.v1.MoveNamespaceRequest.newBuilder()
                .setNamespace("lock")
                .setToGroup(1)
                .build(),
            "NNNNNY"),
        row(
            ClusterGrpc.getSetGroupMembersMethod(),
            io.leasehold.proto.v1.SetGroupMembersRequest.newBuilder()
                .setGroup(1)
                .addRemove("n9")
                .build(),
            "NNNNNY"),
        row(
            AdminGrpc.getGetPolicyMethod(),
            GetPolicyRequest.newBuilder().setNamespace("lock").build(),
            "NNNNNY"),
        row(
            AdminGrpc.getGetPolicyMethod(),
            GetPolicyRequest.newBuilder().setNamespace("mailbox").build(),
            "NNNNYY"),
        row(AdminGrpc.getListPoliciesMethod(), ListPoliciesRequest.getDefaultInstance(), "NNNNNY"),
        row(
            AdminGrpc.getSetPolicyMethod(),
            SetPolicyRequest.newBuilder().setNamespace("mailbox").build(),
            "NNNNYY"),
        row(
            AdminGrpc.getSetPolicyMethod(),
            SetPolicyRequest.newBuilder().setNamespace("").build(),
            "NNNNNY"),
        row(
            AdminGrpc.getDeletePolicyMethod(),
            DeletePolicyRequest.newBuilder().setNamespace("lock").build(),
            "NNNNNY"),
        row(
            AdminGrpc.getBanMethod(),
            BanRequest.newBuilder().setHolder("nobody").setReason("matrix").build(),
            "NNNNNY"),
        row(
            AdminGrpc.getUnbanMethod(),
            UnbanRequest.newBuilder().setHolder("nobody").build(),
            "NNNNNY"),
        row(AdminGrpc.getListBansMethod(), ListBansRequest.getDefaultInstance(), "NNNNNY"),
        row(
            AdminGrpc.getRevokeMethod(),
            RevokeRequest.newBuilder().setName("mailbox/gone").build(),
            "NNNNYY"),
        row(
            AdminGrpc.getRevokeMethod(),
            RevokeRequest.newBuilder().setName("lock/gone").build(),
            "NNNNNY"),
        row(
            AdminGrpc.getHistoryMethod(),
            HistoryRequest.newBuilder().setName("mailbox/m").build(),
            "NNNNYY"),
        row(
            AdminGrpc.getHistoryMethod(),
            HistoryRequest.newBuilder().setHolder("alice").build(),
            "NNNNNY"),
        row(AuthGrpc.getWhoAmIMethod(), WhoAmIRequest.getDefaultInstance(), "YYYYYY"),
        row(
            AuthGrpc.getAddRoleMethod(),
            AddRoleRequest.newBuilder()
                .setRole(AuthRole.newBuilder().setName("tmp").setPermission(Permission.READER))
                .build(),
            "NNNNNY"),
        row(
            AuthGrpc.getRemoveRoleMethod(),
            RemoveRoleRequest.newBuilder().setName("tmp").build(),
            "NNNNNY"),
        row(AuthGrpc.getListRolesMethod(), ListRolesRequest.getDefaultInstance(), "NNNNNY"),
        row(
            AuthGrpc.getGrantRoleMethod(),
            GrantRoleRequest.newBuilder().setIdentity("nobody").setRole("reader").build(),
            "NNNNNY"),
        row(
            AuthGrpc.getRevokeRoleMethod(),
            RevokeRoleRequest.newBuilder().setIdentity("nobody").setRole("reader").build(),
            "NNNNNY"),
        row(AuthGrpc.getListGrantsMethod(), ListGrantsRequest.getDefaultInstance(), "NNNNNY"),
        row(AuthGrpc.getAuditMethod(), AuditRequest.getDefaultInstance(), "NNNNNY"));
  }

  @BeforeAll
  static void start() throws IOException {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    ca = TestCerts.authority(certs, "ca");
    TestCerts.node(certs, ca, "n1");
    cluster =
        TestCluster.start(
            1,
            dir.resolve("data"),
            b ->
                b.tlsCertFile(certs.resolve("n1.pem"))
                    .tlsKeyFile(certs.resolve("n1-key.pem"))
                    .tlsCaFile(ca.pem())
                    .clientCertAuth(true)
                    .initialAdmin("root"));
    for (String who : WHO) {
      CHANNELS.put(
          who,
          Grpc.newChannelBuilder(
                  cluster.node("n1").clientAddress(),
                  TestCerts.credentials(ca, TestCerts.node(certs, ca, who)))
              .build());
    }
    AuthGrpc.AuthBlockingStub root =
        AuthGrpc.newBlockingStub(CHANNELS.get("root")).withDeadlineAfter(20, TimeUnit.SECONDS);
    root.grantRole(GrantRoleRequest.newBuilder().setIdentity("carol").setRole("reader").build());
    root.grantRole(GrantRoleRequest.newBuilder().setIdentity("alice").setRole("client").build());
    root.addRole(
        AddRoleRequest.newBuilder()
            .setRole(
                AuthRole.newBuilder()
                    .setName("mailbox-client")
                    .setPermission(Permission.CLIENT)
                    .addPrefixes("mailbox/"))
            .build());
    root.grantRole(
        GrantRoleRequest.newBuilder().setIdentity("dave").setRole("mailbox-client").build());
    root.addRole(
        AddRoleRequest.newBuilder()
            .setRole(
                AuthRole.newBuilder()
                    .setName("mailbox-admin")
                    .setPermission(Permission.ADMIN)
                    .addPrefixes("mailbox/"))
            .build());
    root.grantRole(
        GrantRoleRequest.newBuilder().setIdentity("mbadmin").setRole("mailbox-admin").build());
  }

  @AfterAll
  static void stop() {
    CHANNELS.values().forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void everyRpcOfEveryServiceHasARowHere() {
    TreeSet<String> covered = new TreeSet<>();
    rows().forEach(r -> covered.add(r.method().getFullMethodName()));
    TreeSet<String> all = new TreeSet<>();
    for (ServiceDescriptor s : AccessRules.services()) {
      s.getMethods().forEach(m -> all.add(m.getFullMethodName()));
    }
    assertEquals(all, covered, "a new RPC needs its row in this matrix");
  }

  @Test
  void everyRpcIsAllowedOrDeniedForEveryRoleAsTheMatrixSays() {
    List<String> wrong = new ArrayList<>();
    for (Row row : rows()) {
      for (int i = 0; i < WHO.size(); i++) {
        String who = WHO.get(i);
        Status.Code code = call(CHANNELS.get(who), row);
        boolean denied = code == Status.Code.PERMISSION_DENIED;
        boolean expectDenied = row.allowed().charAt(i) == 'N';
        if (denied != expectDenied) {
          wrong.add(
              row.method().getFullMethodName()
                  + " "
                  + shortly(row.request())
                  + " as "
                  + who
                  + ": expected "
                  + (expectDenied ? "PERMISSION_DENIED" : "allowed")
                  + ", got "
                  + code);
        }
        assertNotEquals(Status.Code.UNAUTHENTICATED, code, who + " has a certificate");
      }
    }
    assertEquals(List.of(), wrong);
  }

  /** The status a call ends with (OK for a unary answer or a stream that started sending). */
  static Status.Code call(ManagedChannel channel, Row row) {
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    try {
      if (row.method().getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
        io.grpc.ClientCall<Message, Message> call = channel.newCall(row.method(), options);
        Iterator<Message> it = ClientCalls.blockingServerStreamingCall(call, row.request());
        try {
          it.hasNext();
        } finally {
          call.cancel("seen enough", null);
        }
      } else {
        ClientCalls.blockingUnaryCall(channel, row.method(), options, row.request());
      }
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  private static String shortly(Message m) {
    return m.toString().replace('\n', ' ').trim();
  }
}
