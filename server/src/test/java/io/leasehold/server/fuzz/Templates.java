package io.leasehold.server.fuzz;

import com.google.protobuf.Duration;
import com.google.protobuf.FieldMask;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.AuditRequest;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListGrantsRequest;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListRolesRequest;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.LookupRequest;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.RemoveRoleRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RevokeRoleRequest;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.SetStatusRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.UnbanRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WhoAmIRequest;
import java.util.List;
import java.util.Optional;

/**
 * Valid requests for every RPC: names, holders and services from small pools (so that calls meet:
 * conflicts, re-acquires, releases of what was granted), tokens of leases the run was granted, long
 * TTLs. Valid means the API should take the request; its outcome may still be CONFLICT, REJECTED or
 * NOT_HELD.
 */
final class Templates {
  private Templates() {}

  /** What the run knows that a valid request may refer to. */
  interface RunContext {
    /**
     * The k-th most recent of the leases granted in this run whose name starts with {@code prefix},
     * if any.
     */
    Optional<KnownLease> lease(int k, String prefix);

    /** The latest revision a reply carried. */
    long revision();

    /** The cluster's members. */
    List<Member> members();

    /** The current leader's id, or "" when unknown. */
    String leaderId();
  }

  record KnownLease(String name, long token) {}

  static Message valid(Rpc rpc, Values v, RunContext run) {
    return switch (rpc.name) {
      case "leasehold.v1.Leases/Acquire" -> acquire(v);
      case "leasehold.v1.Leases/AcquireMany" -> acquireMany(v);
      case "leasehold.v1.Leases/Renew" -> renew(v, run);
      case "leasehold.v1.Leases/Release" -> {
        KnownLease l = lease(v, run, "");
        yield ReleaseRequest.newBuilder().setName(l.name()).setToken(l.token()).build();
      }
      case "leasehold.v1.Leases/Update" -> update(v, run);
      case "leasehold.v1.Leases/CreateSession" -> {
        CreateSessionRequest.Builder b =
            CreateSessionRequest.newBuilder().setHolder(v.pick(Atoms.HOLDERS));
        if (v.chance(0.8)) {
          b.setTtl(longTtl(v));
        }
        yield b.build();
      }
      case "leasehold.v1.Leases/KeepAlive" ->
          KeepAliveRequest.newBuilder().addSessions(session(v, run)).build();
      case "leasehold.v1.Leases/CloseSession" ->
          CloseSessionRequest.newBuilder().setSession(session(v, run)).build();
      case "leasehold.v1.Leases/GetSession" ->
          GetSessionRequest.newBuilder()
              .setSession(session(v, run))
              .setStale(v.chance(0.3))
              .build();
      case "leasehold.v1.Leases/ListSessions" ->
          ListSessionsRequest.newBuilder()
              .setHolder(v.chance(0.5) ? "" : v.pick(Atoms.HOLDERS))
              .setLimit(v.below(20))
              .setStale(v.chance(0.3))
              .build();
      case "leasehold.v1.Leases/Transfer" -> {
        KnownLease l = lease(v, run, "");
        TransferRequest.Builder b =
            TransferRequest.newBuilder()
                .setName(l.name())
                .setToken(l.token())
                .setToHolder(v.pick(Atoms.HOLDERS));
        if (v.chance(0.6)) {
          b.setTtl(longTtl(v));
        }
        if (v.chance(0.3)) {
          b.setAcceptWithin(seconds(v.pickOf(5L, 60L, 3600L)));
        }
        yield b.build();
      }
      case "leasehold.v1.Leases/AcceptTransfer" ->
          AcceptTransferRequest.newBuilder()
              .setName(name(v))
              .setOffer(Math.max(1, run.revision() - v.below(5)))
              .setHolder(v.chance(0.5) ? "" : v.pick(Atoms.HOLDERS))
              .build();
      case "leasehold.v1.Leases/Get" ->
          GetRequest.newBuilder().setName(name(v)).setStale(v.chance(0.3)).build();
      case "leasehold.v1.Leases/List" ->
          ListRequest.newBuilder()
              .setPrefix(prefix(v))
              .setLimit(v.chance(0.5) ? 0 : v.below(20))
              .setStartAfter(v.chance(0.2) ? name(v) : "")
              .setStale(v.chance(0.3))
              .setWithAddress(v.chance(0.2))
              .setHolder(v.chance(0.2) ? v.pick(Atoms.HOLDERS) : "")
              .build();
      case "leasehold.v1.Leases/Watch" -> watch(v, run);
      case "leasehold.v1.Routing/Lookup" ->
          LookupRequest.newBuilder().setName(name(v)).setStale(v.chance(0.3)).build();
      case "leasehold.v1.Routing/ListRoutes" ->
          ListRoutesRequest.newBuilder()
              .setPrefix(prefix(v))
              .setLimit(v.below(20))
              .setStartAfter(v.chance(0.2) ? name(v) : "")
              .setStale(v.chance(0.3))
              .setHolder(v.chance(0.3) ? v.pick(Atoms.HOLDERS) : "")
              .build();
      case "leasehold.v1.Registry/Register" -> register(v);
      case "leasehold.v1.Registry/Deregister" -> {
        KnownLease l = lease(v, run, "service/");
        String[] parts = instanceOf(l, v);
        yield DeregisterRequest.newBuilder()
            .setService(parts[0])
            .setInstance(parts[1])
            .setToken(l.token())
            .build();
      }
      case "leasehold.v1.Registry/SetStatus" -> {
        KnownLease l = lease(v, run, "service/");
        String[] parts = instanceOf(l, v);
        yield SetStatusRequest.newBuilder()
            .setService(parts[0])
            .setInstance(parts[1])
            .setToken(l.token())
            .setStatus(v.pick(Atoms.STATUSES))
            .build();
      }
      case "leasehold.v1.Registry/Resolve" ->
          ResolveRequest.newBuilder()
              .setService(v.pick(Atoms.SERVICES))
              .setStale(v.chance(0.3))
              .setAnyStatus(v.chance(0.5))
              .build();
      case "leasehold.v1.Cluster/Status" -> StatusRequest.getDefaultInstance();
      case "leasehold.v1.Cluster/AddMember" -> addMember(v, run);
      case "leasehold.v1.Cluster/RemoveMember" ->
          RemoveMemberRequest.newBuilder()
              .setId(v.pickOf("n9", "gone-1", "N1", "n1-old", "x.y_z"))
              .build();
      case "leasehold.v1.Cluster/TransferLeadership" -> transfer(v, run);
      case "leasehold.v1.Cluster/TakeSnapshot" -> {
        TakeSnapshotRequest.Builder b = TakeSnapshotRequest.newBuilder();
        if (v.chance(0.5)) {
          b.setTimeout(seconds(v.pickOf(5L, 30L, 3600L)));
        }
        yield b.build();
      }
      case "leasehold.v1.Cluster/Backup" -> {
        BackupRequest.Builder b = BackupRequest.newBuilder().setEveryGroup(v.chance(0.5));
        if (v.chance(0.5)) {
          b.setTimeout(seconds(v.pickOf(5L, 30L, 3600L)));
        }
        yield b.build();
      }
      case "leasehold.v1.Cluster/MoveNamespace" -> {
        io.leasehold.proto.v1.MoveNamespaceRequest.Builder b =
            io.leasehold.proto.v1.MoveNamespaceRequest.newBuilder()
                .setNamespace(namespace(v))
                .setToGroup(v.pickOf(1, 2, 3));
        if (v.chance(0.5)) {
          b.setTimeout(seconds(v.pickOf(5L, 30L)));
        }
        yield b.build();
      }
      case "leasehold.v1.Cluster/SetGroupMembers" -> {
        io.leasehold.proto.v1.SetGroupMembersRequest.Builder b =
            io.leasehold.proto.v1.SetGroupMembersRequest.newBuilder()
                .setGroup(v.pickOf(0, 1, 2, 3, -1));
        if (v.chance(0.5)) {
          b.addAdd(v.pickOf("n9", "gone-1", "N1", ""));
        }
        if (v.chance(0.5)) {
          b.addRemove(v.pickOf("n9", "gone-1", "x.y_z"));
        }
        yield b.build();
      }
      case "leasehold.v1.Admin/GetPolicy" ->
          GetPolicyRequest.newBuilder().setNamespace(namespace(v)).setStale(v.chance(0.3)).build();
      case "leasehold.v1.Admin/ListPolicies" ->
          ListPoliciesRequest.newBuilder().setStale(v.chance(0.3)).build();
      case "leasehold.v1.Admin/SetPolicy" ->
          SetPolicyRequest.newBuilder().setNamespace(namespace(v)).setPolicy(policy(v)).build();
      case "leasehold.v1.Admin/DeletePolicy" ->
          DeletePolicyRequest.newBuilder().setNamespace(namespace(v)).build();
      case "leasehold.v1.Admin/Ban" -> ban(v);
      case "leasehold.v1.Admin/Unban" ->
          UnbanRequest.newBuilder().setHolder(v.pick(Atoms.HOLDERS)).build();
      case "leasehold.v1.Admin/ListBans" ->
          ListBansRequest.newBuilder()
              .setLimit(v.below(10))
              .setStartAfter(v.chance(0.3) ? v.pick(Atoms.HOLDERS) : "")
              .setStale(v.chance(0.3))
              .build();
      case "leasehold.v1.Admin/Revoke" -> {
        KnownLease l = lease(v, run, "");
        yield RevokeRequest.newBuilder()
            .setName(l.name())
            .setReason(v.chance(0.5) ? "fuzz: operator says so" : "")
            .setToken(v.chance(0.5) ? 0 : l.token())
            .build();
      }
      case "leasehold.v1.Admin/History" -> {
        HistoryRequest.Builder b =
            HistoryRequest.newBuilder().setLimit(v.below(20)).setStale(v.chance(0.3));
        yield (v.chance(0.5) ? b.setName(name(v)) : b.setHolder(v.pick(Atoms.HOLDERS))).build();
      }
      case "leasehold.v1.Auth/WhoAmI" -> WhoAmIRequest.getDefaultInstance();
      case "leasehold.v1.Auth/AddRole" -> addRole(v);
      case "leasehold.v1.Auth/RemoveRole" ->
          RemoveRoleRequest.newBuilder().setName(v.pick(Atoms.ROLES)).build();
      case "leasehold.v1.Auth/ListRoles" ->
          ListRolesRequest.newBuilder().setStale(v.chance(0.3)).build();
      case "leasehold.v1.Auth/GrantRole" ->
          GrantRoleRequest.newBuilder()
              .setIdentity(v.pick(Atoms.OUTSIDERS))
              .setRole(role(v))
              .build();
      case "leasehold.v1.Auth/RevokeRole" ->
          RevokeRoleRequest.newBuilder()
              .setIdentity(v.pick(Atoms.OUTSIDERS))
              .setRole(role(v))
              .build();
      case "leasehold.v1.Auth/ListGrants" ->
          ListGrantsRequest.newBuilder()
              .setIdentity(v.chance(0.5) ? "" : v.pick(Atoms.OUTSIDERS))
              .setStale(v.chance(0.3))
              .build();
      case "leasehold.v1.Auth/Audit" ->
          AuditRequest.newBuilder()
              .setLimit(v.below(20))
              .setIdentity(v.chance(0.5) ? "" : v.pick(Atoms.HOLDERS))
              .setStale(v.chance(0.3))
              .build();
      default ->
          throw new IllegalStateException(
              "no valid template for " + rpc.name + ": add one to Templates");
    };
  }

  /**
   * A custom role: a permission over every name, or over one to three prefixes from the name pool.
   */
  private static AddRoleRequest addRole(Values v) {
    AuthRole.Builder role =
        AuthRole.newBuilder()
            .setName(v.pick(Atoms.ROLES))
            .setPermission(v.pickOf(Permission.READER, Permission.CLIENT, Permission.ADMIN));
    if (v.chance(0.6)) {
      int n = 1 + v.below(3);
      for (int i = 0; i < n; i++) {
        role.addPrefixes(v.chance(0.5) ? v.pick(Atoms.NAMESPACES) + "/" : v.pick(Atoms.NAMES));
      }
    }
    return AddRoleRequest.newBuilder().setRole(role).build();
  }

  /**
   * Mostly a custom role, now and then a built-in one (granted to or revoked from outsiders only:
   * {@link AuthGuard}).
   */
  private static String role(Values v) {
    return v.chance(0.8) ? v.pick(Atoms.ROLES) : v.pick(Atoms.BUILT_IN_ROLES);
  }

  /**
   * A session id: the run does not follow sessions, so mostly one made from a recent revision (an
   * id is its entry's index times 4096), which may or may not be a live session.
   */
  private static long session(Values v, RunContext run) {
    return v.chance(0.7) ? Math.max(1, run.revision() - v.below(5)) * 4096 : 1 + v.below(100_000);
  }

  private static AcquireRequest acquire(Values v) {
    AcquireRequest.Builder b =
        AcquireRequest.newBuilder().setName(name(v)).setHolder(v.pick(Atoms.HOLDERS));
    if (v.chance(0.8)) {
      b.setTtl(longTtl(v));
    }
    if (v.chance(0.5)) {
      b.setAttributes(attributes(v));
    }
    if (v.chance(0.2)) {
      b.setRequestId(v.pick(Atoms.REQUEST_IDS));
    }
    return b.build();
  }

  /** A few names (now and then one repeated, which the node refuses), all or nothing or not. */
  private static AcquireManyRequest acquireMany(Values v) {
    AcquireManyRequest.Builder b =
        AcquireManyRequest.newBuilder()
            .setHolder(v.pick(Atoms.HOLDERS))
            .setAllOrNothing(v.chance(0.3));
    int n = 1 + v.below(4);
    for (int i = 0; i < n; i++) {
      AcquireManyItem.Builder item = AcquireManyItem.newBuilder().setName(name(v));
      if (v.chance(0.3)) {
        item.setAttributes(attributes(v));
      }
      b.addItems(item);
    }
    if (v.chance(0.8)) {
      b.setTtl(longTtl(v));
    }
    if (v.chance(0.2)) {
      b.setRequestId(v.pick(Atoms.REQUEST_IDS));
    }
    return b.build();
  }

  private static RenewRequest renew(Values v, RunContext run) {
    RenewRequest.Builder b = RenewRequest.newBuilder();
    int n = 1 + v.below(3);
    for (int i = 0; i < n; i++) {
      KnownLease l = lease(v, run, "");
      b.addItems(RenewItem.newBuilder().setName(l.name()).setToken(l.token()));
    }
    return b.build();
  }

  private static UpdateRequest update(Values v, RunContext run) {
    KnownLease l = lease(v, run, "");
    UpdateRequest.Builder b =
        UpdateRequest.newBuilder()
            .setName(l.name())
            .setToken(l.token())
            .setAttributes(attributes(v));
    if (v.chance(0.5)) {
      FieldMask.Builder mask = FieldMask.newBuilder();
      for (String path : List.of("address", "metadata", "status")) {
        if (v.chance(0.5)) {
          mask.addPaths(path);
        }
      }
      b.setUpdateMask(mask);
    }
    return b.build();
  }

  private static WatchRequest watch(Values v, RunContext run) {
    WatchRequest.Builder b = WatchRequest.newBuilder().setPrefix(v.chance(0.5) ? "" : prefix(v));
    if (v.chance(0.5)) {
      b.setStartRevision(Math.max(1, run.revision() - v.below(50)));
    }
    if (v.chance(0.3)) {
      b.addTypes(
          v.pickOf(
              Event.Type.ACQUIRED,
              Event.Type.RELEASED,
              Event.Type.UPDATED,
              Event.Type.REVOKED,
              Event.Type.POLICY_CHANGED));
    }
    return b.setIncludeRenewals(v.chance(0.3))
        .setRoutesOnly(v.chance(0.2))
        .setView(
            v.pickOf(
                EventView.EVENT_VIEW_UNSPECIFIED,
                EventView.EVENT_VIEW_FULL,
                EventView.EVENT_VIEW_BASIC))
        .build();
  }

  private static RegisterRequest register(Values v) {
    RegisterRequest.Builder b =
        RegisterRequest.newBuilder()
            .setService(v.pick(Atoms.SERVICES))
            .setInstance(v.pick(Atoms.INSTANCES))
            .setAddress(v.pick(Atoms.ADDRESSES));
    if (v.chance(0.5)) {
      b.putMetadata("zone", v.pickOf("a", "b"));
    }
    if (v.chance(0.5)) {
      b.setStatus(v.pick(Atoms.STATUSES));
    }
    if (v.chance(0.8)) {
      b.setTtl(longTtl(v));
    }
    if (v.chance(0.3)) {
      b.setHolder(v.pick(Atoms.HOLDERS));
    }
    if (v.chance(0.2)) {
      b.setRequestId(v.pick(Atoms.REQUEST_IDS));
    }
    return b.build();
  }

  /**
   * An existing member as it is (a no-op), or one that must be refused: never a new member that
   * could be added.
   */
  private static AddMemberRequest addMember(Values v, RunContext run) {
    List<Member> members = run.members();
    Member m;
    if (!members.isEmpty() && v.chance(0.5)) {
      m = v.pick(members);
      if (v.chance(0.5)) {
        m = m.toBuilder().setPeerAddress("127.0.0.1:1").build(); // same id elsewhere: refused
      }
    } else if (v.chance(0.5)) {
      // An id no node can have, at addresses that would do.
      m =
          Member.newBuilder()
              .setId(
                  v.pickOf(
                      "a=b",
                      " n9",
                      "n9 ",
                      "n 9",
                      "-n9",
                      "",
                      "x".repeat(65),
                      "n9=127.0.0.1:1:2",
                      "n1 "))
              .setPeerAddress("127.0.0.1:1")
              .setClientAddress("127.0.0.1:2")
              .build();
    } else {
      m =
          Member.newBuilder()
              .setId(v.pickOf("n9", "joiner"))
              .setPeerAddress(
                  v.pickOf(
                      "127.0.0.1:0",
                      "127.0.0.1:65536",
                      "127.0.0.1",
                      ":7000",
                      "127.0.0.1:x",
                      "bad host:1",
                      "127.0.0.1:+1"))
              .setClientAddress(v.pickOf("127.0.0.1:7001", "", "127.0.0.1:-5"))
              .build();
    }
    return AddMemberRequest.newBuilder().setMember(m).build();
  }

  private static TransferLeadershipRequest transfer(Values v, RunContext run) {
    TransferLeadershipRequest.Builder b = TransferLeadershipRequest.newBuilder();
    // Mostly to the current leader (nothing to do) or to a non-member (refused): a real handover
    // costs an election, so only a quarter of these make one.
    int choice = v.below(4);
    b.setId(
        switch (choice) {
          case 0 -> run.leaderId();
          case 1 -> "n9";
          case 2 -> "";
          default -> run.members().isEmpty() ? "" : v.pick(run.members()).getId();
        });
    if (v.chance(0.5)) {
      b.setTimeout(seconds(v.pickOf(5L, 10L, 30L)));
    }
    return b.build();
  }

  private static Policy policy(Values v) {
    Policy.Builder p = Policy.newBuilder();
    if (v.chance(0.5)) {
      p.setMinTtl(seconds(v.pickOf(2L, 5L, 60L, 3600L)));
    }
    if (v.chance(0.5)) {
      p.setMaxTtl(seconds(v.pickOf(3600L, 86_400L, 172_800L)));
    }
    if (v.chance(0.3)) {
      p.setDefaultTtl(seconds(v.pickOf(30L, 3600L, 7200L)));
    }
    if (v.chance(0.2)) {
      p.setHeartbeatInterval(seconds(1));
    }
    if (v.chance(0.3)) {
      p.setNamePattern(v.pickOf("", "[a-z]+", "[a-z0-9/-]*", "(a|b|c|d)", "x.*", "k[0-9]"));
    }
    if (v.chance(0.2)) {
      p.setGracePeriod(seconds(v.pickOf(1L, 30L)));
    }
    if (v.chance(0.2)) {
      p.setLockDelay(seconds(v.pickOf(1L, 60L)));
    }
    if (v.chance(0.2)) {
      p.setMaxLeasesPerHolder(v.pickOf(1L, 3L, 100L));
    }
    if (v.chance(0.2)) {
      p.setMaxLeasesPerNamespace(v.pickOf(2L, 100L));
    }
    if (v.chance(0.2)) {
      p.setHistoryLimit(v.pickOf(1, 10, 100));
    }
    return p.build();
  }

  private static BanRequest ban(Values v) {
    BanRequest.Builder b =
        BanRequest.newBuilder()
            .setHolder(v.pick(Atoms.HOLDERS))
            .setReason(v.chance(0.5) ? "fuzz" : "");
    switch (v.below(3)) {
      case 0 -> b.setDuration(seconds(v.pickOf(3600L, 864_000L)));
      // Far enough ahead that the replay, a minute later, still finds it in the future.
      case 1 ->
          b.setUntil(
              Timestamp.newBuilder()
                  .setSeconds(java.time.Instant.now().getEpochSecond() + 2 * 86_400));
      default -> {}
    }
    return b.build();
  }

  private static Attributes attributes(Values v) {
    Attributes.Builder a = Attributes.newBuilder();
    if (v.chance(0.6)) {
      a.setAddress(v.pick(Atoms.ADDRESSES));
    }
    if (v.chance(0.4)) {
      a.putMetadata("zone", v.pickOf("a", "b"));
      if (v.chance(0.3)) {
        a.putMetadata("weight", "10");
      }
    }
    if (v.chance(0.4)) {
      a.setStatus(v.pick(Atoms.STATUSES));
    }
    return a.build();
  }

  /**
   * A lease the run was granted, biased to recent ones, or a made-up one (NOT_HELD) before there
   * are any.
   */
  private static KnownLease lease(Values v, RunContext run, String prefix) {
    int k = v.chance(0.7) ? v.below(3) : v.below(40);
    return run.lease(k, prefix)
        .orElseGet(() -> new KnownLease(prefix.isEmpty() ? name(v) : "service/web/i1", 1));
  }

  private static String[] instanceOf(KnownLease l, Values v) {
    String[] parts = l.name().split("/", -1);
    return parts.length == 3
        ? new String[] {parts[1], parts[2]}
        : new String[] {v.pick(Atoms.SERVICES), v.pick(Atoms.INSTANCES)};
  }

  private static String name(Values v) {
    return v.chance(0.85)
        ? v.pick(Atoms.NAMES)
        : "service/" + v.pick(Atoms.SERVICES) + "/" + v.pick(Atoms.INSTANCES);
  }

  private static String prefix(Values v) {
    return v.pickOf("", "lock/", "job/", "cache/", "service/", "service/web/", "l", "team-a/r");
  }

  private static String namespace(Values v) {
    return v.chance(0.1) ? "" : v.pick(Atoms.NAMESPACES);
  }

  /** One to twelve hours: nothing a valid request grants expires during a run. */
  private static Duration longTtl(Values v) {
    return seconds(v.between(3600, 12 * 3600));
  }

  static Duration seconds(long s) {
    return Duration.newBuilder().setSeconds(s).build();
  }
}
