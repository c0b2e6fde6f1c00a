package io.leasehold.client.internal;

import com.google.protobuf.FieldMask;
import com.google.protobuf.Timestamp;
import io.leasehold.client.AttributeUpdate;
import io.leasehold.client.AuditRecord;
import io.leasehold.client.AuthRole;
import io.leasehold.client.BanInfo;
import io.leasehold.client.ClusterMember;
import io.leasehold.client.Conflict;
import io.leasehold.client.DeadlineExtension;
import io.leasehold.client.DeadlineSource;
import io.leasehold.client.EndReason;
import io.leasehold.client.EndedLease;
import io.leasehold.client.EventType;
import io.leasehold.client.LeaseAttributes;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.MemberRole;
import io.leasehold.client.NodeStatus;
import io.leasehold.client.Permission;
import io.leasehold.client.Policy;
import io.leasehold.client.PolicyInfo;
import io.leasehold.client.RaftGroupStatus;
import io.leasehold.client.Registration;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejection;
import io.leasehold.client.Route;
import io.leasehold.client.ServerLeaseState;
import io.leasehold.client.ServiceFilter;
import io.leasehold.client.ServiceInstance;
import io.leasehold.client.SessionInfo;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchView;
import io.leasehold.proto.Partitions;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.Ban;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.Instance;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseState;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.NamespacePolicy;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.UpdateRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Conversions between the wire types and the SDK's values: the one place that knows both, so the
 * public API never shows a protobuf type. A wire value newer than the SDK maps to UNKNOWN.
 */
public final class Protos {
  private Protos() {}

  /**
   * A java Duration as a protobuf one; seconds and nanos get the same sign, as protobuf requires.
   */
  public static com.google.protobuf.Duration duration(Duration d) {
    long seconds = d.getSeconds();
    int nanos = d.getNano();
    if (seconds < 0 && nanos > 0) {
      seconds += 1;
      nanos -= 1_000_000_000;
    }
    return com.google.protobuf.Duration.newBuilder().setSeconds(seconds).setNanos(nanos).build();
  }

  public static Duration duration(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }

  public static Instant instant(Timestamp t) {
    return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }

  public static Attributes attributes(LeaseAttributes a) {
    return Attributes.newBuilder()
        .setAddress(a.address().orElse(""))
        .putAllMetadata(a.metadata())
        .setStatus(a.status().orElse(""))
        .build();
  }

  public static LeaseAttributes attributes(Attributes a) {
    if (a.getAddress().isEmpty() && a.getMetadataCount() == 0 && a.getStatus().isEmpty()) {
      return LeaseAttributes.NONE; // one shared instance for the many leases without attributes
    }
    return new LeaseAttributes(
        Optional.of(a.getAddress()), a.getMetadataMap(), Optional.of(a.getStatus()));
  }

  /** An Update request changing only what {@code update} names. */
  public static UpdateRequest update(String name, long token, AttributeUpdate update) {
    Attributes.Builder a = Attributes.newBuilder();
    FieldMask.Builder mask = FieldMask.newBuilder();
    update
        .address()
        .ifPresent(
            v -> {
              a.setAddress(v);
              mask.addPaths("address");
            });
    update
        .metadata()
        .ifPresent(
            v -> {
              a.putAllMetadata(v);
              mask.addPaths("metadata");
            });
    update
        .status()
        .ifPresent(
            v -> {
              a.setStatus(v);
              mask.addPaths("status");
            });
    return UpdateRequest.newBuilder()
        .setName(name)
        .setToken(token)
        .setAttributes(a)
        .setUpdateMask(mask)
        .build();
  }

  public static LeaseInfo lease(Lease l) {
    return new LeaseInfo(
        l.getName(),
        l.getHolder(),
        l.getToken(),
        duration(l.getTtl()),
        instant(l.getAcquiredAt()),
        instant(l.getRenewedAt()),
        instant(l.getExpiresAt()),
        attributes(l.getAttributes()),
        l.getRenewCount(),
        l.getModRevision(),
        l.hasRemaining() ? Optional.of(duration(l.getRemaining())) : Optional.empty(),
        serverState(l.getState()),
        l.hasHeartbeatInterval()
            ? Optional.of(duration(l.getHeartbeatInterval()))
            : Optional.empty(),
        l.hasGracePeriod() ? Optional.of(duration(l.getGracePeriod())) : Optional.empty(),
        l.getSession(),
        l.hasDeadline() ? Optional.of(instant(l.getDeadline())) : Optional.empty(),
        l.hasDeadlineRemaining()
            ? Optional.of(duration(l.getDeadlineRemaining()))
            : Optional.empty(),
        deadlineSource(l.getDeadlineSource()),
        l.getExtensionsList().stream().map(Protos::extension).toList());
  }

  public static DeadlineSource deadlineSource(io.leasehold.proto.v1.DeadlineSource s) {
    return switch (s) {
      case DEADLINE_SOURCE_LEADER -> DeadlineSource.LEADER;
      case DEADLINE_SOURCE_ESTIMATE -> DeadlineSource.ESTIMATE;
      default -> DeadlineSource.UNKNOWN;
    };
  }

  public static DeadlineExtension extension(io.leasehold.proto.v1.DeadlineExtension e) {
    DeadlineExtension.Reason reason =
        switch (e.getReason()) {
          case LEADER_CHANGE -> DeadlineExtension.Reason.LEADER_CHANGE;
          case STALL -> DeadlineExtension.Reason.STALL;
          default -> DeadlineExtension.Reason.UNKNOWN;
        };
    return new DeadlineExtension(reason, instant(e.getAt()), duration(e.getBy()), e.getTerm());
  }

  public static Conflict conflict(io.leasehold.proto.v1.Conflict c) {
    return new Conflict(c.getHolder(), c.getToken(), duration(c.getRemaining()));
  }

  public static Rejection rejection(io.leasehold.proto.v1.Rejection r) {
    return new Rejection(
        rejectReason(r.getReason()),
        r.getReasonValue(),
        r.getMessage(),
        r.hasMinTtl() ? Optional.of(duration(r.getMinTtl())) : Optional.empty(),
        r.hasMaxTtl() ? Optional.of(duration(r.getMaxTtl())) : Optional.empty(),
        r.hasRetryAfter() ? Optional.of(duration(r.getRetryAfter())) : Optional.empty(),
        r.getLimit() > 0 ? OptionalLong.of(r.getLimit()) : OptionalLong.empty(),
        r.getNamePattern().isEmpty() ? Optional.empty() : Optional.of(r.getNamePattern()));
  }

  public static WatchEvent event(Event e) {
    return event(e, 0);
  }

  /** An event as the group {@code group} applied it (0: the meta group). */
  public static WatchEvent event(Event e, int group) {
    Optional<EndReason> reason =
        e.getReason() == Event.Reason.REASON_UNSPECIFIED
            ? Optional.empty()
            : Optional.of(endReason(e.getReason()));
    Optional<LeaseInfo> lease = Optional.empty();
    if (e.hasLease()) {
      // The basic view leaves the lease's name off the wire: it is the event's.
      Lease l = e.getLease();
      lease =
          Optional.of(
              lease(l.getName().isEmpty() ? l.toBuilder().setName(e.getName()).build() : l));
    }
    return new WatchEvent(
        eventType(e.getType()),
        e.getRevision(),
        e.getName(),
        lease,
        reason,
        instant(e.getTime()),
        e.getMessage().isEmpty() ? Optional.empty() : Optional.of(e.getMessage()),
        e.hasPreviousAttributes()
            ? Optional.of(attributes(e.getPreviousAttributes()))
            : Optional.empty(),
        group);
  }

  /** The route of a lease, if it carries an address. */
  public static Optional<Route> route(String name, Lease l) {
    Attributes a = l.getAttributes();
    if (a.getAddress().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new Route(
            name,
            l.getHolder(),
            a.getAddress(),
            l.getToken(),
            Partitions.of(name),
            a.getMetadataMap(),
            a.getStatus().isEmpty() ? Optional.empty() : Optional.of(a.getStatus())));
  }

  /** The route of a lease, if it carries an address. */
  public static Optional<Route> route(String name, LeaseInfo l) {
    return l.attributes()
        .address()
        .map(
            address ->
                new Route(
                    name,
                    l.holder(),
                    address,
                    l.token(),
                    Partitions.of(name),
                    l.attributes().metadata(),
                    l.attributes().status()));
  }

  public static Route route(io.leasehold.proto.v1.Route r) {
    return new Route(
        r.getName(),
        r.getHolder(),
        r.getAddress(),
        r.getToken(),
        r.getPartition(),
        r.getMetadataMap(),
        r.getStatus().isEmpty() ? Optional.empty() : Optional.of(r.getStatus()));
  }

  public static ServiceInstance instance(Instance i) {
    return new ServiceInstance(
        i.getService(),
        i.getInstance(),
        i.getAddress(),
        i.getMetadataMap(),
        i.getStatus().isEmpty() ? Optional.empty() : Optional.of(i.getStatus()),
        i.getToken(),
        i.getHolder(),
        instant(i.getExpiresAt()));
  }

  public static RejectReason rejectReason(io.leasehold.proto.v1.RejectReason r) {
    return switch (r) {
      case TTL_OUT_OF_RANGE -> RejectReason.TTL_OUT_OF_RANGE;
      case BANNED -> RejectReason.BANNED;
      case NAME_NOT_ALLOWED -> RejectReason.NAME_NOT_ALLOWED;
      case LOCK_DELAY -> RejectReason.LOCK_DELAY;
      case HOLDER_QUOTA -> RejectReason.HOLDER_QUOTA;
      case NAMESPACE_QUOTA -> RejectReason.NAMESPACE_QUOTA;
      case NO_SESSION -> RejectReason.NO_SESSION;
      default -> RejectReason.UNKNOWN;
    };
  }

  public static EventType eventType(Event.Type t) {
    return switch (t) {
      case ACQUIRED -> EventType.ACQUIRED;
      case RENEWED -> EventType.RENEWED;
      case UPDATED -> EventType.UPDATED;
      case RELEASED -> EventType.RELEASED;
      case EXPIRED -> EventType.EXPIRED;
      case REVOKED -> EventType.REVOKED;
      case POLICY_CHANGED -> EventType.POLICY_CHANGED;
      default -> EventType.UNKNOWN;
    };
  }

  /** The wire type of an SDK event type; UNKNOWN cannot be asked for (WatchOptions refuses it). */
  public static Event.Type eventType(EventType t) {
    return switch (t) {
      case ACQUIRED -> Event.Type.ACQUIRED;
      case RENEWED -> Event.Type.RENEWED;
      case UPDATED -> Event.Type.UPDATED;
      case RELEASED -> Event.Type.RELEASED;
      case EXPIRED -> Event.Type.EXPIRED;
      case REVOKED -> Event.Type.REVOKED;
      case POLICY_CHANGED -> Event.Type.POLICY_CHANGED;
      case UNKNOWN ->
          throw new IllegalArgumentException("UNKNOWN is not an event type one can ask for");
    };
  }

  public static Set<Event.Type> eventTypes(Set<EventType> types) {
    return types.stream().map(Protos::eventType).collect(Collectors.toUnmodifiableSet());
  }

  public static EndReason endReason(Event.Reason r) {
    return switch (r) {
      case REASON_RELEASED -> EndReason.RELEASED;
      case REASON_EXPIRED -> EndReason.EXPIRED;
      case REASON_REVOKED -> EndReason.REVOKED;
      case REASON_BANNED -> EndReason.BANNED;
      case REASON_TRANSFERRED -> EndReason.TRANSFERRED;
      case REASON_SESSION_EXPIRED -> EndReason.SESSION_EXPIRED;
      case REASON_SESSION_CLOSED -> EndReason.SESSION_CLOSED;
      default -> EndReason.UNKNOWN;
    };
  }

  public static MemberRole role(Role r) {
    return switch (r) {
      case LEADER -> MemberRole.LEADER;
      case FOLLOWER -> MemberRole.FOLLOWER;
      case CANDIDATE -> MemberRole.CANDIDATE;
      case LISTENER -> MemberRole.LISTENER;
      default -> MemberRole.UNKNOWN;
    };
  }

  public static ServerLeaseState serverState(LeaseState s) {
    return switch (s) {
      case ACTIVE -> ServerLeaseState.ACTIVE;
      case EXPIRING -> ServerLeaseState.EXPIRING;
      case STALE -> ServerLeaseState.STALE;
      default -> ServerLeaseState.UNKNOWN;
    };
  }

  /**
   * The statuses a watch filter sends: none for every status, SERVING when the filter names none
   * (what {@link ServiceFilter#matches} keeps), else those it names.
   */
  static List<String> statuses(ServiceFilter f) {
    if (f.isAnyStatus()) {
      return List.of();
    }
    return f.statuses().isEmpty() ? List.of(Registration.SERVING) : f.statuses();
  }

  public static EventView view(WatchView v) {
    return switch (v) {
      case FULL -> EventView.EVENT_VIEW_FULL;
      case BASIC -> EventView.EVENT_VIEW_BASIC;
    };
  }

  public static io.leasehold.proto.v1.Policy policy(Policy p) {
    io.leasehold.proto.v1.Policy.Builder b =
        io.leasehold.proto.v1.Policy.newBuilder().setNamePattern(p.namePattern());
    p.minTtl().ifPresent(d -> b.setMinTtl(duration(d)));
    p.maxTtl().ifPresent(d -> b.setMaxTtl(duration(d)));
    p.defaultTtl().ifPresent(d -> b.setDefaultTtl(duration(d)));
    p.heartbeatInterval().ifPresent(d -> b.setHeartbeatInterval(duration(d)));
    p.gracePeriod().ifPresent(d -> b.setGracePeriod(duration(d)));
    p.lockDelay().ifPresent(d -> b.setLockDelay(duration(d)));
    p.maxLeasesPerHolder().ifPresent(b::setMaxLeasesPerHolder);
    p.maxLeasesPerNamespace().ifPresent(b::setMaxLeasesPerNamespace);
    p.historyLimit().ifPresent(b::setHistoryLimit);
    return b.build();
  }

  public static Policy policy(io.leasehold.proto.v1.Policy p) {
    return new Policy(
        p.hasMinTtl() ? Optional.of(duration(p.getMinTtl())) : Optional.empty(),
        p.hasMaxTtl() ? Optional.of(duration(p.getMaxTtl())) : Optional.empty(),
        p.hasDefaultTtl() ? Optional.of(duration(p.getDefaultTtl())) : Optional.empty(),
        p.hasHeartbeatInterval()
            ? Optional.of(duration(p.getHeartbeatInterval()))
            : Optional.empty(),
        p.getNamePattern(),
        p.hasGracePeriod() ? Optional.of(duration(p.getGracePeriod())) : Optional.empty(),
        p.hasLockDelay() ? Optional.of(duration(p.getLockDelay())) : Optional.empty(),
        p.hasMaxLeasesPerHolder()
            ? OptionalLong.of(p.getMaxLeasesPerHolder())
            : OptionalLong.empty(),
        p.hasMaxLeasesPerNamespace()
            ? OptionalLong.of(p.getMaxLeasesPerNamespace())
            : OptionalLong.empty(),
        p.hasHistoryLimit() ? OptionalInt.of(p.getHistoryLimit()) : OptionalInt.empty());
  }

  public static PolicyInfo policyInfo(NamespacePolicy p) {
    return new PolicyInfo(
        p.getNamespace(),
        Optional.of(policy(p.getPolicy())),
        Optional.empty(),
        p.getRevision(),
        p.hasUpdatedAt() ? Optional.of(instant(p.getUpdatedAt())) : Optional.empty());
  }

  /** Namespace {@code namespace}'s policy as {@code GetPolicy} answered it, with the copies. */
  public static PolicyInfo policyInfo(String namespace, io.leasehold.proto.v1.GetPolicyResponse r) {
    Map<Integer, Long> copies = new java.util.TreeMap<>();
    r.getCopiesList().forEach(c -> copies.put(c.getGroup(), c.getGlobalVersion()));
    NamespacePolicy own = r.getPolicy();
    return new PolicyInfo(
        namespace,
        r.hasPolicy() ? Optional.of(policy(own.getPolicy())) : Optional.empty(),
        Optional.of(policy(r.getEffective())),
        r.hasPolicy() ? own.getRevision() : 0,
        r.hasPolicy() && own.hasUpdatedAt()
            ? Optional.of(instant(own.getUpdatedAt()))
            : Optional.empty(),
        r.getGlobalVersion(),
        copies);
  }

  public static BanInfo ban(Ban b) {
    return new BanInfo(
        b.getHolder(),
        b.getReason(),
        instant(b.getBannedAt()),
        b.hasUntil() ? Optional.of(instant(b.getUntil())) : Optional.empty(),
        b.getRevision(),
        b.getLeasesEnded());
  }

  public static EndedLease ended(io.leasehold.proto.v1.EndedLease e) {
    return new EndedLease(
        e.getName(),
        e.getHolder(),
        e.getToken(),
        duration(e.getTtl()),
        instant(e.getAcquiredAt()),
        instant(e.getEndedAt()),
        e.getRenewCount(),
        endReason(e.getReason()),
        e.getMessage().isEmpty() ? Optional.empty() : Optional.of(e.getMessage()),
        e.getRevision(),
        e.getSession());
  }

  public static SessionInfo session(io.leasehold.proto.v1.Session s) {
    return new SessionInfo(
        s.getId(),
        s.getHolder(),
        duration(s.getTtl()),
        instant(s.getCreatedAt()),
        instant(s.getRenewedAt()),
        instant(s.getExpiresAt()),
        s.getRenewCount(),
        s.getLeases(),
        s.hasRemaining() ? Optional.of(duration(s.getRemaining())) : Optional.empty(),
        serverState(s.getState()),
        duration(s.getHeartbeatInterval()),
        s.hasDeadline() ? Optional.of(instant(s.getDeadline())) : Optional.empty(),
        s.hasDeadlineRemaining()
            ? Optional.of(duration(s.getDeadlineRemaining()))
            : Optional.empty(),
        deadlineSource(s.getDeadlineSource()),
        s.getExtensionsList().stream().map(Protos::extension).toList());
  }

  public static AuthRole authRole(io.leasehold.proto.v1.AuthRole r) {
    Permission p =
        switch (r.getPermission()) {
          case READER -> Permission.READER;
          case CLIENT -> Permission.CLIENT;
          case ADMIN -> Permission.ADMIN;
          default ->
              throw new IllegalStateException(
                  "role "
                      + r.getName()
                      + " has no known permission ("
                      + r.getPermissionValue()
                      + ")");
        };
    return new AuthRole(r.getName(), p, r.getPrefixesList(), r.getBuiltIn(), r.getRevision());
  }

  public static AuditRecord audit(AuditEntry e) {
    return new AuditRecord(
        e.getRevision(),
        instant(e.getTime()),
        e.getIdentity(),
        e.getAction(),
        e.getTarget(),
        e.getOutcome(),
        e.getDetail());
  }

  public static ClusterMember member(Member m) {
    return new ClusterMember(
        m.getId(),
        m.getPeerAddress(),
        m.getClientAddress().isEmpty() ? Optional.empty() : Optional.of(m.getClientAddress()));
  }

  public static RaftGroupStatus groupStatus(io.leasehold.proto.v1.GroupStatus g) {
    Map<String, Integer> priorities = new LinkedHashMap<>();
    g.getMembersList().forEach(m -> priorities.put(m.getId(), m.getPriority()));
    return new RaftGroupStatus(
        g.getNumber(),
        g.getGroupId(),
        role(g.getRole()),
        g.getTerm(),
        g.getLeaderId().isEmpty() ? Optional.empty() : Optional.of(g.getLeaderId()),
        g.getCommitIndex(),
        g.getAppliedIndex(),
        priorities,
        List.copyOf(g.getNamespacesList()),
        g.getGlobalVersion());
  }

  public static NodeStatus nodeStatus(StatusResponse s) {
    return new NodeStatus(
        s.getId(),
        s.getRole().name(),
        s.getTerm(),
        s.getLeaderId().isEmpty() ? Optional.empty() : Optional.of(s.getLeaderId()),
        s.getLeaderClientAddress().isEmpty()
            ? Optional.empty()
            : Optional.of(s.getLeaderClientAddress()),
        s.getCommitIndex(),
        s.getAppliedIndex(),
        s.getMembersList().stream().map(Protos::member).toList());
  }

  public static io.leasehold.proto.v1.Permission permission(Permission p) {
    return switch (p) {
      case READER -> io.leasehold.proto.v1.Permission.READER;
      case CLIENT -> io.leasehold.proto.v1.Permission.CLIENT;
      case ADMIN -> io.leasehold.proto.v1.Permission.ADMIN;
    };
  }

  public static io.leasehold.proto.v1.AuthRole authRole(
      String name, Permission permission, List<String> prefixes) {
    return io.leasehold.proto.v1.AuthRole.newBuilder()
        .setName(name)
        .setPermission(permission(permission))
        .addAllPrefixes(prefixes)
        .build();
  }
}
