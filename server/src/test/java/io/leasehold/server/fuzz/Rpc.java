package io.leasehold.server.fuzz;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RoutingGrpc;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One RPC of the API, called with raw bytes so that any payload, parseable or not, reaches the
 * server; its request and response types are known for building requests and reading replies.
 */
public final class Rpc {
  /** The services under test, from their generated descriptors: every method of each is fuzzed. */
  static final List<ServiceDescriptor> SERVICES =
      List.of(
          LeasesGrpc.getServiceDescriptor(),
          RoutingGrpc.getServiceDescriptor(),
          RegistryGrpc.getServiceDescriptor(),
          ClusterGrpc.getServiceDescriptor(),
          AdminGrpc.getServiceDescriptor(),
          AuthGrpc.getServiceDescriptor());

  /** The calls that change the replicated state: the ones the replay sends again. */
  static final Set<String> WRITES =
      Set.of(
          "leasehold.v1.Leases/Acquire",
          "leasehold.v1.Leases/AcquireMany",
          "leasehold.v1.Leases/Renew",
          "leasehold.v1.Leases/Release",
          "leasehold.v1.Leases/Update",
          "leasehold.v1.Leases/CreateSession",
          "leasehold.v1.Leases/KeepAlive",
          "leasehold.v1.Leases/CloseSession",
          "leasehold.v1.Leases/Transfer",
          "leasehold.v1.Leases/AcceptTransfer",
          "leasehold.v1.Registry/Register",
          "leasehold.v1.Registry/Deregister",
          "leasehold.v1.Registry/SetStatus",
          "leasehold.v1.Admin/SetPolicy",
          "leasehold.v1.Admin/DeletePolicy",
          "leasehold.v1.Admin/Ban",
          "leasehold.v1.Admin/Unban",
          "leasehold.v1.Admin/Revoke",
          "leasehold.v1.Auth/AddRole",
          "leasehold.v1.Auth/RemoveRole",
          "leasehold.v1.Auth/GrantRole",
          "leasehold.v1.Auth/RevokeRole");

  /**
   * Calls that only a cluster with lease groups accepts (SetGroupMembers only where they sit on
   * subsets of the nodes); the fuzzed clusters have none, so these are checked for being refused
   * cleanly (INVALID_ARGUMENT or FAILED_PRECONDITION, nothing changed), never for an OK.
   * LeaseGroupsTest and SubsetGroupMembersTest cover their accepted side.
   */
  static final java.util.Set<String> NEEDS_LEASE_GROUPS =
      java.util.Set.of(
          "leasehold.v1.Cluster/MoveNamespace", "leasehold.v1.Cluster/SetGroupMembers");

  /**
   * How often the generator picks each call, relative to the others. Cluster calls that take a
   * snapshot or hand over leadership cost far more than the rest and are picked rarely.
   */
  private static final Map<String, Integer> WEIGHTS =
      Map.ofEntries(
          Map.entry("leasehold.v1.Leases/Acquire", 12),
          Map.entry("leasehold.v1.Leases/AcquireMany", 4),
          Map.entry("leasehold.v1.Leases/Renew", 6),
          Map.entry("leasehold.v1.Leases/Release", 5),
          Map.entry("leasehold.v1.Leases/Update", 5),
          Map.entry("leasehold.v1.Leases/CreateSession", 4),
          Map.entry("leasehold.v1.Leases/KeepAlive", 4),
          Map.entry("leasehold.v1.Leases/CloseSession", 2),
          Map.entry("leasehold.v1.Leases/Transfer", 4),
          Map.entry("leasehold.v1.Leases/AcceptTransfer", 2),
          Map.entry("leasehold.v1.Leases/GetSession", 2),
          Map.entry("leasehold.v1.Leases/ListSessions", 2),
          Map.entry("leasehold.v1.Leases/Get", 4),
          Map.entry("leasehold.v1.Leases/List", 3),
          Map.entry("leasehold.v1.Leases/Watch", 3),
          Map.entry("leasehold.v1.Routing/Lookup", 2),
          Map.entry("leasehold.v1.Routing/ListRoutes", 2),
          Map.entry("leasehold.v1.Registry/Register", 6),
          Map.entry("leasehold.v1.Registry/Deregister", 3),
          Map.entry("leasehold.v1.Registry/SetStatus", 3),
          Map.entry("leasehold.v1.Registry/Resolve", 3),
          Map.entry("leasehold.v1.Cluster/Status", 2),
          Map.entry("leasehold.v1.Cluster/AddMember", 2),
          Map.entry("leasehold.v1.Cluster/RemoveMember", 2),
          Map.entry("leasehold.v1.Cluster/TransferLeadership", 1),
          Map.entry("leasehold.v1.Cluster/TakeSnapshot", 1),
          Map.entry("leasehold.v1.Cluster/Backup", 1),
          Map.entry("leasehold.v1.Cluster/MoveNamespace", 2),
          Map.entry("leasehold.v1.Cluster/SetGroupMembers", 1),
          Map.entry("leasehold.v1.Admin/GetPolicy", 2),
          Map.entry("leasehold.v1.Admin/ListPolicies", 1),
          Map.entry("leasehold.v1.Admin/SetPolicy", 4),
          Map.entry("leasehold.v1.Admin/DeletePolicy", 2),
          Map.entry("leasehold.v1.Admin/Ban", 3),
          Map.entry("leasehold.v1.Admin/Unban", 2),
          Map.entry("leasehold.v1.Admin/ListBans", 1),
          Map.entry("leasehold.v1.Admin/Revoke", 3),
          Map.entry("leasehold.v1.Admin/History", 2),
          Map.entry("leasehold.v1.Auth/WhoAmI", 2),
          Map.entry("leasehold.v1.Auth/AddRole", 3),
          Map.entry("leasehold.v1.Auth/RemoveRole", 2),
          Map.entry("leasehold.v1.Auth/ListRoles", 1),
          Map.entry("leasehold.v1.Auth/GrantRole", 3),
          Map.entry("leasehold.v1.Auth/RevokeRole", 2),
          Map.entry("leasehold.v1.Auth/ListGrants", 1),
          Map.entry("leasehold.v1.Auth/Audit", 1));

  /** Declared before the catalog, which uses it. */
  static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static final List<Rpc> ALL = catalog();

  final String name;
  final MethodDescriptor<byte[], byte[]> raw;
  final Message request;
  final Message response;
  final boolean streaming;
  final boolean write;
  final int weight;

  private Rpc(MethodDescriptor<?, ?> typed) {
    this.name = typed.getFullMethodName();
    this.raw = typed.toBuilder(BYTES, BYTES).build();
    this.request =
        (Message)
            ((MethodDescriptor.PrototypeMarshaller<?>) typed.getRequestMarshaller())
                .getMessagePrototype();
    this.response =
        (Message)
            ((MethodDescriptor.PrototypeMarshaller<?>) typed.getResponseMarshaller())
                .getMessagePrototype();
    this.streaming = typed.getType() == MethodDescriptor.MethodType.SERVER_STREAMING;
    this.write = WRITES.contains(name);
    Integer w = WEIGHTS.get(name);
    if (w == null) {
      throw new IllegalStateException(
          name + " has no weight in Rpc.WEIGHTS: a new RPC must be given one to be fuzzed");
    }
    this.weight = w;
  }

  static List<Rpc> all() {
    return ALL;
  }

  private static List<Rpc> catalog() {
    List<Rpc> rpcs = new ArrayList<>();
    for (ServiceDescriptor s : SERVICES) {
      for (MethodDescriptor<?, ?> m : s.getMethods()) {
        rpcs.add(new Rpc(m));
      }
    }
    return List.copyOf(rpcs);
  }

  /** "Leases/Acquire". */
  String shortName() {
    return name.substring(name.indexOf('.', name.indexOf('.') + 1) + 1);
  }

  String method() {
    return name.substring(name.indexOf('/') + 1);
  }

  Message parseRequest(byte[] bytes) throws InvalidProtocolBufferException {
    return request.getParserForType().parseFrom(bytes);
  }

  Message parseResponse(byte[] bytes) throws InvalidProtocolBufferException {
    return response.getParserForType().parseFrom(bytes);
  }

  @Override
  public String toString() {
    return shortName();
  }
}
