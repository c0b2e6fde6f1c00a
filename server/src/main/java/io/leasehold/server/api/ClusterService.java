package io.leasehold.server.api;

import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.BackupHeader;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GroupMember;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.MoveNamespaceRequest;
import io.leasehold.proto.v1.MoveNamespaceResponse;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.SetGroupMembersRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.proto.v1.TakeSnapshotResponse;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import io.leasehold.proto.v1.TransferLeadershipResponse;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.raft.LeadershipTransferException;
import io.leasehold.server.raft.MembershipChangeException;
import io.leasehold.server.raft.MembershipChangeInProgressException;
import io.leasehold.server.raft.MoveAbandonedException;
import io.leasehold.server.raft.MovingNamespaceException;
import io.leasehold.server.raft.NothingToSnapshotException;
import io.leasehold.server.rpc.GrpcErrors;
import io.leasehold.statemachine.core.InvalidArgumentException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * This node's view of the cluster, from its consensus, and the operator's controls over membership
 * and snapshots.
 */
public final class ClusterService extends ClusterGrpc.ClusterImplBase {
  private static final int CHUNK = 1 << 20;
  private static final Duration DEFAULT_TRANSFER_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration DEFAULT_SNAPSHOT_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration DEFAULT_MOVE_TIMEOUT = Duration.ofSeconds(60);

  private final LocalMember node;

  public ClusterService(LocalMember node) {
    this.node = node;
  }

  @Override
  public void status(StatusRequest request, StreamObserver<StatusResponse> response) {
    Consensus.Status status = node.consensus().status();
    StatusResponse.Builder b =
        StatusResponse.newBuilder()
            .setId(node.id())
            .setGroupId(status.groupId())
            .setRole(role(status.role()))
            .setTerm(status.term())
            .setCommitIndex(status.commitIndex())
            .setAppliedIndex(status.appliedIndex());
    status
        .leaderId()
        .ifPresent(
            leader -> {
              b.setLeaderId(leader);
              node.consensus().clientAddressOf(leader).ifPresent(b::setLeaderClientAddress);
            });
    b.addAllMembers(members(status.members()));
    b.setPlacementVersion(node.consensus().placementVersion());
    b.setLeaseGroupSize(node.consensus().leaseGroupSize());
    for (Consensus.GroupStatus g : node.consensus().groups()) {
      GroupStatus.Builder group =
          GroupStatus.newBuilder()
              .setNumber(g.number())
              .setGroupId(g.groupId())
              .setRole(role(g.role()))
              .setTerm(g.term())
              .setCommitIndex(g.commitIndex())
              .setAppliedIndex(g.appliedIndex())
              .setGlobalVersion(g.globalVersion());
      g.leaderId().ifPresent(group::setLeaderId);
      group.addAllNamespaces(g.namespaces());
      g.priorities()
          .forEach(
              (id, priority) ->
                  group.addMembers(GroupMember.newBuilder().setId(id).setPriority(priority)));
      b.addGroups(group);
    }
    for (Consensus.GroupRoute r : node.consensus().reachedGroups()) {
      io.leasehold.proto.v1.GroupRoute.Builder route =
          io.leasehold.proto.v1.GroupRoute.newBuilder()
              .setNumber(r.number())
              .addAllMemberIds(r.members())
              .addAllNamespaces(r.namespaces());
      r.leaderId().ifPresent(route::setLeaderId);
      b.addReachedGroups(route);
    }
    response.onNext(b.build());
    response.onCompleted();
  }

  @Override
  public void addMember(AddMemberRequest request, StreamObserver<MembershipResponse> response) {
    Member m = request.getMember();
    answer(
        audited(
            "add_member",
            m.getId(),
            "peer " + m.getPeerAddress() + ", client " + m.getClientAddress(),
            () -> node.consensus().addMember(m.getId(), m.getPeerAddress(), m.getClientAddress())),
        this::membership,
        response);
  }

  @Override
  public void removeMember(
      RemoveMemberRequest request, StreamObserver<MembershipResponse> response) {
    answer(
        audited(
            "remove_member",
            request.getId(),
            "",
            () -> node.consensus().removeMember(request.getId())),
        this::membership,
        response);
  }

  @Override
  public void transferLeadership(
      TransferLeadershipRequest request, StreamObserver<TransferLeadershipResponse> response) {
    answer(
        audited(
            "transfer_leadership",
            request.getId(),
            "",
            () ->
                node.consensus()
                    .transferLeadership(
                        Optional.of(request.getId()),
                        timeout(
                            request.hasTimeout(), request.getTimeout(), DEFAULT_TRANSFER_TIMEOUT))),
        leader -> {
          TransferLeadershipResponse.Builder b =
              TransferLeadershipResponse.newBuilder().setLeaderId(leader);
          node.consensus().clientAddressOf(leader).ifPresent(b::setLeaderClientAddress);
          return b.build();
        },
        response);
  }

  @Override
  public void takeSnapshot(
      TakeSnapshotRequest request, StreamObserver<TakeSnapshotResponse> response) {
    answer(
        audited(
            "take_snapshot",
            node.id(),
            "",
            () ->
                node.consensus()
                    .takeSnapshot(
                        timeout(
                            request.hasTimeout(), request.getTimeout(), DEFAULT_SNAPSHOT_TIMEOUT))),
        s ->
            TakeSnapshotResponse.newBuilder()
                .setId(node.id())
                .setTerm(s.term())
                .setIndex(s.index())
                .setSizeBytes(size(s))
                .build(),
        response);
  }

  @Override
  public void moveNamespace(
      MoveNamespaceRequest request, StreamObserver<MoveNamespaceResponse> response) {
    Duration timeout;
    try {
      timeout = timeout(request.hasTimeout(), request.getTimeout(), DEFAULT_MOVE_TIMEOUT);
      if (request.getNamespace().isEmpty() || request.getNamespace().indexOf('/') >= 0) {
        throw new InvalidArgumentException(
            "namespace", "must be a namespace: the part of a name before its first '/', not empty");
      }
      if (request.getToGroup() < 1) {
        throw new InvalidArgumentException("to_group", "must be a lease group, 1 or more");
      }
    } catch (InvalidArgumentException e) {
      response.onError(GrpcErrors.invalid(e));
      return;
    }
    answer(
        audited(
            "move_namespace",
            request.getNamespace(),
            "to group " + request.getToGroup(),
            () ->
                node.consensus()
                    .moveNamespace(request.getNamespace(), request.getToGroup(), timeout)),
        p ->
            MoveNamespaceResponse.newBuilder()
                .setNamespace(p.getNamespace())
                .setGroup(p.getGroup())
                .setEpoch(p.getEpoch())
                .setMove(p.getMove())
                .build(),
        response);
  }

  @Override
  public void setGroupMembers(
      SetGroupMembersRequest request, StreamObserver<MembershipResponse> response) {
    answer(
        audited(
            "set_group_members",
            "group " + request.getGroup(),
            "add " + request.getAddList() + ", remove " + request.getRemoveList(),
            () ->
                node.consensus()
                    .setGroupMembers(
                        request.getGroup(), request.getAddList(), request.getRemoveList())),
        g -> {
          MembershipResponse.Builder b =
              MembershipResponse.newBuilder().addAllMembers(members(g.members()));
          g.leaderId().ifPresent(b::setLeaderId);
          return b.build();
        },
        response);
  }

  /**
   * Streams fresh snapshots: for each group, a header, then its file in chunks, respecting the
   * client's flow control. A node without lease groups sends the meta group's alone, as it always
   * has.
   */
  @Override
  public void backup(BackupRequest request, StreamObserver<BackupChunk> response) {
    Duration timeout;
    try {
      timeout = timeout(request.hasTimeout(), request.getTimeout(), DEFAULT_SNAPSHOT_TIMEOUT);
    } catch (InvalidArgumentException e) {
      response.onError(GrpcErrors.invalid(e));
      return;
    }
    if (!node.consensus().leaseGroupCores().isEmpty() && !request.getEveryGroup()) {
      // A client that does not ask for every group keeps one file: the meta group's alone would
      // leave out every namespace the lease groups hold, and a restore from it would lose their
      // leases and tokens.
      response.onError(
          Status.FAILED_PRECONDITION
              .withDescription(
                  "every_group: this node serves lease groups, and its backup is a snapshot of"
                      + " each group; this client asked for one file, which would leave out every"
                      + " namespace placed on a lease group. Take the backup with a leasehold CLI"
                      + " that backs up every group")
              .asRuntimeException());
      return;
    }
    ServerCallStreamObserver<BackupChunk> out = (ServerCallStreamObserver<BackupChunk>) response;
    // gRPC takes these handlers only before this method returns; the sender comes once the
    // snapshots are done.
    AtomicReference<Sender> sender = new AtomicReference<>();
    out.setOnReadyHandler(() -> Optional.ofNullable(sender.get()).ifPresent(Sender::run));
    out.setOnCancelHandler(() -> Optional.ofNullable(sender.get()).ifPresent(Sender::closeQuietly));
    audited(
            "backup",
            node.id(),
            request.getGroupsList().isEmpty() ? "" : "groups " + request.getGroupsList(),
            () ->
                node.consensus()
                    .takeGroupSnapshots(
                        timeout, request.getGroupsList(), request.getPlacementVersion()))
        .get()
        .whenComplete(
            (snapshots, error) -> {
              if (error != null) {
                out.onError(status(error));
                return;
              }
              List<Sender.Part> parts = new ArrayList<>();
              try {
                for (Consensus.GroupSnapshot g : snapshots) {
                  Consensus.Snapshot snapshot = g.snapshot();
                  parts.add(
                      new Sender.Part(
                          BackupHeader.newBuilder()
                              .setNodeId(node.id())
                              .setGroupId(g.groupId())
                              .setGroup(g.group())
                              .setLeaseGroupSize(node.consensus().leaseGroupSize())
                              .setTerm(snapshot.term())
                              .setIndex(snapshot.index())
                              .setSizeBytes(size(snapshot))
                              .setMd5(snapshot.md5())
                              .setTakenAt(
                                  Timestamp.newBuilder()
                                      .setSeconds(
                                          Files.getLastModifiedTime(snapshot.file())
                                              .toInstant()
                                              .getEpochSecond()))
                              .build(),
                          // Opened now: a snapshot taken by the node meanwhile may delete this one.
                          Files.newInputStream(snapshot.file())));
                }
                Sender s = new Sender(out, parts);
                sender.set(s);
                s.run();
              } catch (IOException e) {
                parts.forEach(Sender.Part::closeQuietly);
                out.onError(
                    Status.INTERNAL
                        .withDescription("reading the snapshot: " + e)
                        .asRuntimeException());
              }
            });
  }

  /**
   * Sends each part's header and then its file in chunks while the stream is ready; gRPC calls back
   * when it can take more.
   */
  private static final class Sender implements Runnable {
    /** One group's snapshot: its header, then its file. */
    record Part(BackupHeader header, InputStream in) {
      void closeQuietly() {
        try {
          in.close();
        } catch (IOException e) {
          // Nothing more to read from it.
        }
      }
    }

    private final ServerCallStreamObserver<BackupChunk> out;
    private final java.util.Deque<Part> parts;
    private InputStream in;
    private BackupHeader header;
    private boolean done;

    Sender(ServerCallStreamObserver<BackupChunk> out, List<Part> parts) {
      this.out = out;
      this.parts = new java.util.ArrayDeque<>(parts);
    }

    @Override
    public synchronized void run() {
      try {
        if (out.isCancelled()) {
          done = true;
          closeQuietly();
          return;
        }
        while (!done && out.isReady()) {
          if (in == null) {
            Part next = parts.poll();
            if (next == null) {
              done = true;
              out.onCompleted();
              return;
            }
            in = next.in();
            header = next.header();
          }
          byte[] buf = in.readNBytes(CHUNK);
          BackupChunk.Builder chunk = BackupChunk.newBuilder().setData(ByteString.copyFrom(buf));
          if (header != null) {
            chunk.setHeader(header);
            header = null;
          }
          if (buf.length > 0 || chunk.hasHeader()) {
            out.onNext(chunk.build());
          }
          if (buf.length < CHUNK) {
            closeQuietly();
          }
        }
      } catch (IOException | RuntimeException e) {
        done = true;
        closeQuietly();
        out.onError(
            Status.INTERNAL.withDescription("reading the snapshot: " + e).asRuntimeException());
      }
    }

    /** Closes the file being sent; on cancel or failure ({@code done}), every other one too. */
    private synchronized void closeQuietly() {
      if (in != null) {
        try {
          in.close();
        } catch (IOException e) {
          // Nothing more to read from it.
        }
        in = null;
      }
      if (done || out.isCancelled()) {
        parts.forEach(Part::closeQuietly);
        parts.clear();
      }
    }
  }

  private static long size(Consensus.Snapshot s) {
    try {
      return Files.size(s.file());
    } catch (IOException e) {
      return 0;
    }
  }

  private MembershipResponse membership(List<Consensus.Member> members) {
    MembershipResponse.Builder b = MembershipResponse.newBuilder().addAllMembers(members(members));
    node.consensus().leaderId().ifPresent(b::setLeaderId);
    return b.build();
  }

  private static List<Member> members(List<Consensus.Member> members) {
    return members.stream()
        .sorted(Comparator.comparing(Consensus.Member::id))
        .map(
            member -> {
              Member.Builder m =
                  Member.newBuilder().setId(member.id()).setPeerAddress(member.peerAddress());
              member.clientAddress().ifPresent(m::setClientAddress);
              return m.build();
            })
        .toList();
  }

  private static Duration timeout(boolean set, com.google.protobuf.Duration d, Duration fallback) {
    if (!set) {
      return fallback;
    }
    if (d.getSeconds() < 0
        || d.getNanos() < 0
        || (d.getSeconds() == 0 && d.getNanos() == 0)
        || d.getSeconds() > 3600) {
      throw new InvalidArgumentException("timeout", "must be positive and at most 1h");
    }
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }

  /**
   * {@code call}, recorded in the audit history with its outcome once done. The caller is read
   * here, on the handler's thread, where the call's context holds it.
   */
  private <T> Supplier<CompletableFuture<T>> audited(
      String action, String target, String detail, Supplier<CompletableFuture<T>> call) {
    Caller caller = Caller.current();
    return () -> {
      CompletableFuture<T> f;
      try {
        f = call.get();
      } catch (RuntimeException e) {
        node.audit(caller, action, target, "invalid: " + e.getMessage(), detail);
        throw e;
      }
      f.whenComplete(
          (v, e) ->
              node.audit(
                  caller,
                  action,
                  target,
                  e == null ? "ok" : "failed: " + status(e).getMessage(),
                  detail));
      return f;
    };
  }

  private <T, R> void answer(
      Supplier<CompletableFuture<T>> call, Function<T, R> map, StreamObserver<R> response) {
    CompletableFuture<T> f;
    try {
      f = call.get();
    } catch (InvalidArgumentException e) {
      response.onError(GrpcErrors.invalid(e));
      return;
    }
    f.whenComplete(
        (value, error) -> {
          if (error != null) {
            response.onError(status(error));
            return;
          }
          R mapped;
          try {
            mapped = map.apply(value);
          } catch (RuntimeException e) {
            response.onError(
                Status.INTERNAL.withDescription(String.valueOf(e)).asRuntimeException());
            return;
          }
          response.onNext(mapped);
          response.onCompleted();
        });
  }

  private StatusRuntimeException status(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof MembershipChangeInProgressException) {
      return Status.ABORTED
          .withDescription("another membership change is in progress; retry: " + cause.getMessage())
          .asRuntimeException();
    }
    if (cause instanceof MembershipChangeException) {
      return Status.FAILED_PRECONDITION
          .withDescription("membership change refused: " + cause.getMessage())
          .asRuntimeException();
    }
    if (cause instanceof MovingNamespaceException) {
      return Status.FAILED_PRECONDITION.withDescription(cause.getMessage()).asRuntimeException();
    }
    if (cause instanceof MoveAbandonedException) {
      return Status.FAILED_PRECONDITION.withDescription(cause.getMessage()).asRuntimeException();
    }
    if (cause instanceof NothingToSnapshotException) {
      return Status.FAILED_PRECONDITION.withDescription(cause.getMessage()).asRuntimeException();
    }
    if (cause instanceof LeadershipTransferException) {
      // The target did not take over in time (it was catching up, or an election intervened): as
      // etcd's MoveLeader answers a transfer that took too long, retryable, not a server fault.
      return Status.UNAVAILABLE
          .withDescription("leadership was not transferred; retry: " + cause.getMessage())
          .asRuntimeException();
    }
    if (cause instanceof TimeoutException) {
      return Status.DEADLINE_EXCEEDED
          .withDescription(cause.getMessage() != null ? cause.getMessage() : "timed out")
          .asRuntimeException();
    }
    return GrpcErrors.toStatus(cause, node.consensus().leaderClientAddress());
  }

  private static Role role(Consensus.Role role) {
    return switch (role) {
      case LEADER -> Role.LEADER;
      case FOLLOWER -> Role.FOLLOWER;
      case CANDIDATE -> Role.CANDIDATE;
      case LISTENER -> Role.LISTENER;
      default -> Role.ROLE_UNSPECIFIED;
    };
  }
}
