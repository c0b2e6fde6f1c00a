package io.leasehold.server.api;

import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.Lz4BlockCodec;
import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CloseSessionResponse;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.CreateSessionResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.GetSessionResponse;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.ListSessionsResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.TransferResponse;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.UpdateResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.watch.WatchFrame;
import io.leasehold.server.watch.WatchService;
import io.leasehold.statemachine.core.LogFormat;
import io.leasehold.statemachine.core.Validation;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The Leases API. Every request is validated here, before anything reaches the log, so bad input
 * costs no replication and leaves the state alone; business outcomes come back in the reply.
 */
public final class LeasesService extends LeasesGrpc.LeasesImplBase {
  private final ReplicatedCalls calls;
  private final WatchService watchHub;
  private final AcquireWaits waits;
  private final LeaseDeadlines deadlines;

  /**
   * Without a queue for waiting calls: an Acquire's wait is ignored (one attempt), as the dashboard
   * needs.
   */
  public LeasesService(
      Consensus consensus, WatchService watchHub, Supplier<Optional<String>> leaderHint) {
    this(consensus, watchHub, null, leaderHint);
  }

  public LeasesService(
      Consensus consensus,
      WatchService watchHub,
      AcquireWaits waits,
      Supplier<Optional<String>> leaderHint) {
    this.calls = new ReplicatedCalls(consensus, leaderHint);
    this.deadlines = new LeaseDeadlines(consensus);
    this.watchHub = watchHub;
    this.waits = waits;
  }

  /**
   * Watch, bound by {@link #serviceDefinition()} with a response marshaller that sends events the
   * hub encoded once (see {@code WatchFrame}); clients receive ordinary WatchResponse messages.
   */
  void watchFrames(WatchRequest request, StreamObserver<WatchFrame> response) {
    if (ReplicatedCalls.valid(() -> Validation.watch(request), response)) {
      ServerCallStreamObserver<WatchFrame> out = (ServerCallStreamObserver<WatchFrame>) response;
      // gRPC uses it only if the client listed lz4-block in grpc-accept-encoding; any other
      // client gets plain messages. The node's server registers the codec (LeaseholdNode).
      out.setCompression(Lz4BlockCodec.ENCODING);
      watchHub.watch(request, out);
    }
  }

  /** The service to register: the generated binding with Watch replaced by {@link #watchFrames}. */
  public ServerServiceDefinition serviceDefinition() {
    ServerServiceDefinition generated = bindService();
    MethodDescriptor<WatchRequest, WatchResponse> plain = LeasesGrpc.getWatchMethod();
    MethodDescriptor<WatchRequest, WatchFrame> framed =
        plain.toBuilder(plain.getRequestMarshaller(), WatchFrame.MARSHALLER).build();
    ServerMethodDefinition<WatchRequest, WatchFrame> watch =
        ServerMethodDefinition.create(
            framed, ServerCalls.asyncServerStreamingCall(this::watchFrames));
    List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
    for (ServerMethodDefinition<?, ?> m : generated.getMethods()) {
      methods.add(
          m.getMethodDescriptor().getFullMethodName().equals(plain.getFullMethodName())
              ? watch
              : m);
    }
    ServiceDescriptor original = generated.getServiceDescriptor();
    ServiceDescriptor.Builder descriptor =
        ServiceDescriptor.newBuilder(original.getName())
            .setSchemaDescriptor(original.getSchemaDescriptor());
    methods.forEach(m -> descriptor.addMethod(m.getMethodDescriptor()));
    ServerServiceDefinition.Builder builder = ServerServiceDefinition.builder(descriptor.build());
    methods.forEach(builder::addMethod);
    return builder.build();
  }

  @Override
  public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> response) {
    // With authentication on, the holder is the caller: a request may leave it empty (the
    // authorization point already refused one naming another holder).
    Caller caller = Caller.current();
    if (caller.authenticated() && request.getHolder().isEmpty()) {
      request = request.toBuilder().setHolder(caller.identity()).build();
    }
    AcquireRequest acquire = request;
    Runnable validate =
        () -> {
          Validation.acquire(acquire);
          Validation.acquireWait(acquire);
        };
    // The wait is this node's business (AcquireWaits), never the log's.
    Supplier<LogCommand> command =
        () ->
            acquire.hasWait()
                ? LogCommand.newBuilder().setAcquire(acquire.toBuilder().clearWait()).build()
                : LogCommand.newBuilder().setAcquire(acquire).build();
    long waitNanos =
        acquire.hasWait()
            ? acquire.getWait().getSeconds() * 1_000_000_000L + acquire.getWait().getNanos()
            : 0;
    if (waitNanos > 0
        && waits != null
        && response instanceof ServerCallStreamObserver<AcquireResponse> call) {
      LogCommand c = calls.prepare(validate, command, response);
      if (c != null
          && !waits.submit(
              c,
              waitNanos,
              call,
              (reply, error) -> calls.answer(reply, error, LogReply::getAcquire, call))) {
        calls
            .propose(c)
            .whenComplete((reply, error) -> calls.answer(reply, error, LogReply::getAcquire, call));
      }
      return;
    }
    calls.write(validate, command, LogReply::getAcquire, response);
  }

  @Override
  public void acquireMany(
      AcquireManyRequest request, StreamObserver<AcquireManyResponse> response) {
    Caller caller = Caller.current();
    if (caller.authenticated() && request.getHolder().isEmpty()) {
      request = request.toBuilder().setHolder(caller.identity()).build();
    }
    AcquireManyRequest many = request;
    calls.write(
        () -> Validation.acquireMany(many),
        () -> LogCommand.newBuilder().setAcquireMany(many).build(),
        LogReply::getAcquireMany,
        response);
  }

  @Override
  public void renew(RenewRequest request, StreamObserver<RenewResponse> response) {
    calls.write(
        () -> Validation.renew(request),
        () -> LogCommand.newBuilder().setRenew(request).build(),
        LogReply::getRenew,
        response);
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> response) {
    calls.write(
        () -> Validation.release(request),
        () -> LogCommand.newBuilder().setRelease(request).build(),
        LogReply::getRelease,
        response);
  }

  @Override
  public void update(UpdateRequest request, StreamObserver<UpdateResponse> response) {
    calls.write(
        () -> Validation.update(request),
        () -> LogCommand.newBuilder().setUpdate(request).build(),
        LogReply::getUpdate,
        response);
  }

  @Override
  public void createSession(
      CreateSessionRequest request, StreamObserver<CreateSessionResponse> response) {
    Caller caller = Caller.current();
    if (caller.authenticated() && request.getHolder().isEmpty()) {
      request = request.toBuilder().setHolder(caller.identity()).build();
    }
    CreateSessionRequest create = request;
    calls.write(
        () -> Validation.createSession(create),
        () -> LogCommand.newBuilder().setCreateSession(create).build(),
        LogReply::getCreateSession,
        response);
  }

  @Override
  public void keepAlive(KeepAliveRequest request, StreamObserver<KeepAliveResponse> response) {
    calls.write(
        () -> Validation.keepAlive(request),
        () -> LogCommand.newBuilder().setKeepAlive(request).build(),
        LogReply::getKeepAlive,
        response);
  }

  @Override
  public void closeSession(
      CloseSessionRequest request, StreamObserver<CloseSessionResponse> response) {
    calls.write(
        () -> Validation.closeSession(request),
        () -> LogCommand.newBuilder().setCloseSession(request).build(),
        LogReply::getCloseSession,
        response);
  }

  @Override
  public void transfer(TransferRequest request, StreamObserver<TransferResponse> response) {
    calls.write(
        () -> Validation.transfer(request),
        () -> LogCommand.newBuilder().setTransfer(request).build(),
        LogReply::getTransfer,
        response);
  }

  @Override
  public void acceptTransfer(
      AcceptTransferRequest request, StreamObserver<TransferResponse> response) {
    Caller caller = Caller.current();
    if (caller.authenticated() && request.getHolder().isEmpty()) {
      request = request.toBuilder().setHolder(caller.identity()).build();
    }
    AcceptTransferRequest accept = request;
    calls.write(
        () -> Validation.acceptTransfer(accept),
        () -> LogCommand.newBuilder().setAcceptTransfer(accept).build(),
        LogReply::getAcceptTransfer,
        response);
  }

  @Override
  public void getSession(GetSessionRequest request, StreamObserver<GetSessionResponse> response) {
    calls.read(
        () -> Validation.getSession(request),
        () -> ReadQuery.newBuilder().setGetSession(request).build(),
        request.getStale(),
        ReadReply::getGetSession,
        r ->
            !r.getFound()
                ? CompletableFuture.completedFuture(r)
                : deadlines
                    .withSessionDeadlines(List.of(r.getSession()), request.getStale())
                    .thenApply(s -> r.toBuilder().setSession(s.get(0)).build()),
        response);
  }

  @Override
  public void listSessions(
      ListSessionsRequest request, StreamObserver<ListSessionsResponse> response) {
    calls.read(
        () -> Validation.listSessions(request),
        () -> ReadQuery.newBuilder().setListSessions(request).build(),
        request.getStale(),
        ReadReply::getListSessions,
        r ->
            deadlines
                .withSessionDeadlines(r.getSessionsList(), request.getStale())
                .thenApply(
                    s ->
                        s == r.getSessionsList()
                            ? r
                            : r.toBuilder().clearSessions().addAllSessions(s).build()),
        response);
  }

  /** A lease read shows the deadline the leader acts on (see {@link LeaseDeadlines}). */
  @Override
  public void get(GetRequest request, StreamObserver<GetResponse> response) {
    calls.read(
        () -> Validation.get(request),
        () -> ReadQuery.newBuilder().setGet(request).build(),
        request.getStale(),
        ReadReply::getGet,
        r ->
            !r.getFound()
                ? CompletableFuture.completedFuture(r)
                : deadlines
                    .withDeadlines(List.of(r.getLease()), request.getStale())
                    .thenApply(l -> r.toBuilder().setLease(l.get(0)).build()),
        response);
  }

  @Override
  public void list(ListRequest request, StreamObserver<ListResponse> response) {
    if (!request.getHolder().isEmpty()
        && !calls.formatInForce(LogFormat.SESSIONS, "listing by holder", response)) {
      return;
    }
    calls.read(
        () -> Validation.list(request),
        () -> ReadQuery.newBuilder().setList(request).build(),
        request.getStale(),
        ReadReply::getList,
        r ->
            deadlines
                .withDeadlines(r.getLeasesList(), request.getStale())
                .thenApply(
                    l ->
                        l == r.getLeasesList()
                            ? r
                            : r.toBuilder().clearLeases().addAllLeases(l).build()),
        response);
  }
}
