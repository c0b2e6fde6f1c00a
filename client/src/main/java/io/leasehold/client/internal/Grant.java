package io.leasehold.client.internal;

import io.leasehold.client.Conflict;
import io.leasehold.client.LeaseAttributes;
import io.leasehold.client.Rejection;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireManyResult;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * One acquisition attempt's answer, from Acquire or Register alike.
 *
 * @param outcome GRANTED, CONFLICT or REJECTED (or a newer outcome, passed through)
 * @param revision the log index the attempt was applied at
 * @param token the granted lease's token
 * @param holder the granted lease's holder
 * @param ttl the granted lease's TTL
 * @param heartbeat the renewal interval the cluster suggests
 * @param session the session the lease lives with; 0: its own TTL
 * @param group the group whose log index the revision is, where the answer says it (an Acquire's);
 *     -1 otherwise
 */
record Grant(
    Outcome outcome,
    long revision,
    long token,
    String holder,
    Duration ttl,
    Optional<Duration> heartbeat,
    LeaseAttributes attributes,
    Optional<Conflict> conflict,
    Optional<Rejection> rejection,
    long session,
    int group) {

  static Grant of(AcquireResponse r) {
    return new Grant(
        r.getOutcome(),
        r.getRevision(),
        r.getLease().getToken(),
        r.getLease().getHolder(),
        Protos.duration(r.getLease().getTtl()),
        r.hasHeartbeatInterval()
            ? Optional.of(Protos.duration(r.getHeartbeatInterval()))
            : Optional.empty(),
        Protos.attributes(r.getLease().getAttributes()),
        r.hasConflict() ? Optional.of(Protos.conflict(r.getConflict())) : Optional.empty(),
        r.hasRejection() ? Optional.of(Protos.rejection(r.getRejection())) : Optional.empty(),
        r.getLease().getSession(),
        r.getGroup());
  }

  /** One name's answer in an AcquireMany reply. */
  static Grant of(AcquireManyResult x, AcquireManyResponse r) {
    return new Grant(
        x.getOutcome(),
        r.getRevision(),
        x.getLease().getToken(),
        x.getLease().getHolder(),
        Protos.duration(x.getLease().getTtl()),
        r.hasHeartbeatInterval()
            ? Optional.of(Protos.duration(r.getHeartbeatInterval()))
            : Optional.empty(),
        Protos.attributes(x.getLease().getAttributes()),
        x.hasConflict() ? Optional.of(Protos.conflict(x.getConflict())) : Optional.empty(),
        x.hasRejection() ? Optional.of(Protos.rejection(x.getRejection())) : Optional.empty(),
        x.getLease().getSession(),
        -1);
  }

  /** A name of an all-or-nothing batch that was not sent, since another name was refused. */
  static Grant skipped() {
    return new Grant(
        Outcome.SKIPPED,
        0,
        0,
        "",
        Duration.ZERO,
        Optional.empty(),
        LeaseAttributes.NONE,
        Optional.empty(),
        Optional.empty(),
        0,
        -1);
  }

  /**
   * A registration's answer; its TTL is the instance's, or the one requested where a node does not
   * say it.
   */
  static Grant of(RegisterResponse r, Duration requestedTtl) {
    LeaseAttributes attributes =
        new LeaseAttributes(
            Optional.of(r.getInstance().getAddress()),
            r.getInstance().getMetadataMap(),
            Optional.of(r.getInstance().getStatus()));
    Duration ttl =
        r.getInstance().hasTtl() ? Protos.duration(r.getInstance().getTtl()) : requestedTtl;
    return new Grant(
        r.getOutcome(),
        r.getRevision(),
        r.getInstance().getToken(),
        r.getInstance().getHolder(),
        ttl,
        r.hasHeartbeatInterval()
            ? Optional.of(Protos.duration(r.getHeartbeatInterval()))
            : Optional.empty(),
        attributes,
        r.hasConflict() ? Optional.of(Protos.conflict(r.getConflict())) : Optional.empty(),
        r.hasRejection() ? Optional.of(Protos.rejection(r.getRejection())) : Optional.empty(),
        r.getInstance().getSession(),
        -1);
  }
}
