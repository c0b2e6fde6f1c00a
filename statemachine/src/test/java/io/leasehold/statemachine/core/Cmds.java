package io.leasehold.statemachine.core;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.ExpireCommand;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.UpdateRequest;
import java.util.Map;

/** Builders for log commands and times, so tests read like the log they apply. */
public final class Cmds {
  private Cmds() {}

  /** An arbitrary leader wall-clock origin (2023-11-14), in microseconds. */
  public static final long T0 = 1_700_000_000_000_000L;

  public static final long SECOND = 1_000_000L;

  public static long secondsMicros(long s) {
    return s * SECOND;
  }

  public static Duration secs(long s) {
    return Duration.newBuilder().setSeconds(s).build();
  }

  public static Duration micros(long us) {
    return Times.duration(us);
  }

  public static Timestamp at(long micros) {
    return Times.timestamp(micros);
  }

  public static Attributes attrs(String address, String status, Map<String, String> metadata) {
    return Attributes.newBuilder()
        .setAddress(address)
        .setStatus(status)
        .putAllMetadata(metadata)
        .build();
  }

  public static AcquireRequest.Builder acquireRequest(String name, String holder) {
    return AcquireRequest.newBuilder().setName(name).setHolder(holder);
  }

  /** Acquire with the default TTL and no attributes. */
  public static LogCommand.Builder acquire(String name, String holder) {
    return LogCommand.newBuilder().setAcquire(acquireRequest(name, holder));
  }

  public static LogCommand.Builder acquire(String name, String holder, Duration ttl) {
    return LogCommand.newBuilder().setAcquire(acquireRequest(name, holder).setTtl(ttl));
  }

  public static LogCommand.Builder acquire(
      String name, String holder, Duration ttl, Attributes attributes) {
    return LogCommand.newBuilder()
        .setAcquire(acquireRequest(name, holder).setTtl(ttl).setAttributes(attributes));
  }

  public static RenewItem item(String name, long token) {
    return RenewItem.newBuilder().setName(name).setToken(token).build();
  }

  public static LogCommand.Builder renew(String name, long token) {
    return renew(item(name, token));
  }

  public static LogCommand.Builder renew(RenewItem... items) {
    return LogCommand.newBuilder()
        .setRenew(RenewRequest.newBuilder().addAllItems(java.util.List.of(items)));
  }

  public static LogCommand.Builder release(String name, long token) {
    return LogCommand.newBuilder()
        .setRelease(ReleaseRequest.newBuilder().setName(name).setToken(token));
  }

  public static LogCommand.Builder update(String name, long token, Attributes attributes) {
    return LogCommand.newBuilder()
        .setUpdate(
            UpdateRequest.newBuilder().setName(name).setToken(token).setAttributes(attributes));
  }

  public static ExpireItem expiry(String name, long token, long lastRenewRevision) {
    return ExpireItem.newBuilder()
        .setName(name)
        .setToken(token)
        .setLastRenewRevision(lastRenewRevision)
        .build();
  }

  public static LogCommand.Builder expire(String name, long token, long lastRenewRevision) {
    return expire(expiry(name, token, lastRenewRevision));
  }

  public static LogCommand.Builder expire(ExpireItem... items) {
    return LogCommand.newBuilder()
        .setExpire(ExpireCommand.newBuilder().addAllItems(java.util.List.of(items)));
  }

  // ---- admin ----

  public static LogCommand.Builder setPolicy(
      String namespace, io.leasehold.proto.v1.Policy.Builder policy) {
    return LogCommand.newBuilder()
        .setSetPolicy(
            io.leasehold.proto.v1.SetPolicyRequest.newBuilder()
                .setNamespace(namespace)
                .setPolicy(policy));
  }

  public static LogCommand.Builder deletePolicy(String namespace) {
    return LogCommand.newBuilder()
        .setDeletePolicy(
            io.leasehold.proto.v1.DeletePolicyRequest.newBuilder().setNamespace(namespace));
  }

  public static io.leasehold.proto.v1.Policy.Builder policy() {
    return io.leasehold.proto.v1.Policy.newBuilder();
  }

  /** A ban until Unban. */
  public static LogCommand.Builder ban(String holder, String reason) {
    return LogCommand.newBuilder()
        .setBan(io.leasehold.proto.v1.BanRequest.newBuilder().setHolder(holder).setReason(reason));
  }

  public static LogCommand.Builder banFor(String holder, Duration duration) {
    return LogCommand.newBuilder()
        .setBan(
            io.leasehold.proto.v1.BanRequest.newBuilder()
                .setHolder(holder)
                .setReason("for a while")
                .setDuration(duration));
  }

  public static LogCommand.Builder unban(String holder) {
    return LogCommand.newBuilder()
        .setUnban(io.leasehold.proto.v1.UnbanRequest.newBuilder().setHolder(holder));
  }

  public static LogCommand.Builder liftBan(String holder, long banRevision) {
    return LogCommand.newBuilder()
        .setLiftBans(
            io.leasehold.proto.v1.LiftBans.newBuilder()
                .addItems(
                    io.leasehold.proto.v1.LiftBanItem.newBuilder()
                        .setHolder(holder)
                        .setRevision(banRevision)));
  }

  public static LogCommand.Builder liftLockDelay(String name, long endingRevision) {
    return LogCommand.newBuilder()
        .setLiftLockDelays(
            io.leasehold.proto.v1.LiftLockDelays.newBuilder()
                .addItems(
                    io.leasehold.proto.v1.LiftLockDelayItem.newBuilder()
                        .setName(name)
                        .setRevision(endingRevision)));
  }

  public static LogCommand.Builder revoke(String name, String reason) {
    return LogCommand.newBuilder()
        .setRevoke(
            io.leasehold.proto.v1.RevokeRequest.newBuilder().setName(name).setReason(reason));
  }

  public static LogCommand.Builder revoke(String name, long token, String reason) {
    return LogCommand.newBuilder()
        .setRevoke(
            io.leasehold.proto.v1.RevokeRequest.newBuilder()
                .setName(name)
                .setToken(token)
                .setReason(reason));
  }

  // ---- sessions and transfers (log format 4) ----

  public static LogCommand.Builder formatSessions() {
    return LogCommand.newBuilder()
        .setSetLogFormat(
            io.leasehold.proto.v1.SetLogFormat.newBuilder().setFormat(LogFormat.SESSIONS));
  }

  public static LogCommand.Builder createSession(String holder, Duration ttl) {
    return LogCommand.newBuilder()
        .setCreateSession(
            io.leasehold.proto.v1.CreateSessionRequest.newBuilder().setHolder(holder).setTtl(ttl));
  }

  public static LogCommand.Builder keepAlive(Long... sessions) {
    return LogCommand.newBuilder()
        .setKeepAlive(
            io.leasehold.proto.v1.KeepAliveRequest.newBuilder()
                .addAllSessions(java.util.List.of(sessions)));
  }

  public static LogCommand.Builder closeSession(long session) {
    return LogCommand.newBuilder()
        .setCloseSession(
            io.leasehold.proto.v1.CloseSessionRequest.newBuilder().setSession(session));
  }

  public static LogCommand.Builder acquireIn(String name, String holder, long session) {
    return LogCommand.newBuilder().setAcquire(acquireRequest(name, holder).setSession(session));
  }

  public static LogCommand.Builder expireSession(long session, long lastRenewRevision) {
    return LogCommand.newBuilder()
        .setExpire(
            ExpireCommand.newBuilder()
                .addSessions(
                    io.leasehold.proto.v1.ExpireSessionItem.newBuilder()
                        .setSession(session)
                        .setLastRenewRevision(lastRenewRevision)));
  }

  public static LogCommand.Builder transfer(String name, long token, String to) {
    return LogCommand.newBuilder()
        .setTransfer(
            io.leasehold.proto.v1.TransferRequest.newBuilder()
                .setName(name)
                .setToken(token)
                .setToHolder(to));
  }
}
