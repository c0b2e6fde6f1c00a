package io.leasehold.server.fuzz;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Instance;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One run of the API fuzz test: a cluster of the variant's, the generated calls sent to it one at a
 * time, what each call was answered, and the checks afterwards.
 *
 * <p>Per call: no INTERNAL, UNKNOWN, DATA_LOSS or UNIMPLEMENTED; an INVALID_ARGUMENT names a field
 * of the request; every other refusal says why; no call goes unanswered until its deadline; an
 * identity is refused exactly the calls it may not make.
 *
 * <p>Afterwards ({@link #verify}): every node still answers and one leads; no watch stream or write
 * is left behind on any node; the replicas are byte-identical; the JVM's thread count is back
 * within a small margin of the count after warm-up; and the state equals that of a fresh cluster to
 * which only the accepted writes were sent again, in the same order (tokens of the first run
 * translated to those of the replay, grant by grant).
 */
final class FuzzSession implements AutoCloseable {
  static final Duration CALL_DEADLINE = Duration.ofSeconds(20);

  /** Threads the JVM may have beyond the count after warm-up once the run has settled. */
  static final int THREAD_MARGIN = 12;

  private static final Set<Status.Code> FORBIDDEN =
      EnumSet.of(
          Status.Code.INTERNAL,
          Status.Code.UNKNOWN,
          Status.Code.DATA_LOSS,
          Status.Code.UNIMPLEMENTED);

  /** Codes after which a write may or may not have been applied. */
  private static final Set<Status.Code> AMBIGUOUS =
      EnumSet.of(
          Status.Code.UNAVAILABLE,
          Status.Code.DEADLINE_EXCEEDED,
          Status.Code.CANCELLED,
          Status.Code.ABORTED,
          Status.Code.UNKNOWN,
          Status.Code.INTERNAL);

  private static final int MAX_REPORTED = 40;

  /** {@code -Dleasehold.fuzz.verbose=true}: one line per call. */
  private static final boolean VERBOSE = Boolean.getBoolean("leasehold.fuzz.verbose");

  private final FuzzVariant variant;
  private final Set<String> identityNames;
  final long seed;
  final int tries;
  private final Path root;
  private FuzzRun run;
  private final List<Sent> log = new ArrayList<>();
  private final List<String> violations = new ArrayList<>();

  /** Per RPC, per outcome (status code, or OK), how many calls. */
  private final Map<String, Map<String, Integer>> outcomes = new TreeMap<>();

  private final List<Templates.KnownLease> granted = new ArrayList<>();
  private final Set<Long> grantedTokens = new java.util.HashSet<>();
  private final Set<String> namesSeen = new TreeSet<>(Atoms.NAMES);
  private final Set<String> holdersSeen = new TreeSet<>(Atoms.HOLDERS);
  private long revision;
  private int warmUpCalls;
  private int baselineThreads;
  private Map<String, Integer> baselineThreadNames;
  private long fuzzStartedNanos;
  private long fuzzNanos;
  private int silentWatches;
  private int replayed;

  /** A call as it was sent and answered. */
  record Sent(
      int index,
      FuzzCall call,
      Rpc rpc,
      int node,
      int identity,
      byte[] payload,
      Status.Code code,
      String description,
      Message response,
      long nanos) {}

  private FuzzSession(FuzzVariant variant, long seed, int tries, Path root) {
    this.variant = variant;
    this.identityNames =
        variant.identities().stream()
            .map(FuzzVariant.Identity::name)
            .collect(Collectors.toUnmodifiableSet());
    this.seed = seed;
    this.tries = tries;
    this.root = root;
  }

  /**
   * Starts the variant's cluster, warms it up with a valid call of every RPC, and takes the thread
   * baseline.
   */
  static FuzzSession start(FuzzVariant variant, long seed, int tries) throws IOException {
    Path root = Files.createTempDirectory("leasehold-fuzz-" + variant.name() + "-");
    FuzzSession s = new FuzzSession(variant, seed, tries, root);
    try {
      s.run = FuzzRun.start(variant, root.resolve("fuzzed"));
      s.warmUp();
      s.baselineThreads = threadCount();
      s.baselineThreadNames = threadNames();
      s.fuzzStartedNanos = System.nanoTime();
    } catch (IOException | RuntimeException | Error e) {
      s.close();
      throw e;
    }
    return s;
  }

  /**
   * Each RPC twice, valid, on different nodes: pools, channels and lazily made threads exist before
   * the baseline.
   */
  private void warmUp() {
    List<Rpc> rpcs = Rpc.all();
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < rpcs.size(); i++) {
        send(
            new FuzzCall(
                rpcs.get(i),
                FuzzCall.Form.VALID,
                i + round,
                0,
                1000L * round + i,
                List.of("lock/warm"),
                List.of(1L)));
      }
    }
    warmUpCalls = log.size();
  }

  // ---- one call ----

  void send(FuzzCall call) {
    Rpc rpc = call.rpc();
    Values v = call.values();
    int node = Math.floorMod(call.node(), run.nodes.size());
    int identity = Math.floorMod(call.identity(), variant.identities().size());
    byte[] payload = guard(rpc, build(call, v));
    ManagedChannel channel = run.channel(identity, node);
    long started = System.nanoTime();
    Answer a;
    boolean shortDeadline = false;
    if (rpc.streaming) {
      a = stream(rpc, channel, payload, v);
    } else {
      // Reads now and then get a deadline too short to meet: the server must cope with calls
      // cancelled under it.
      shortDeadline = !rpc.write && !rpc.name.startsWith("leasehold.v1.Cluster/") && v.chance(0.03);
      a =
          unary(
              rpc,
              channel,
              payload,
              shortDeadline ? Duration.ofMillis(1 + v.below(5)) : CALL_DEADLINE);
    }
    long nanos = System.nanoTime() - started;
    Sent sent =
        new Sent(
            log.size(),
            call,
            rpc,
            node,
            identity,
            payload,
            a.code,
            a.description,
            a.response,
            nanos);
    log.add(sent);
    outcomes
        .computeIfAbsent(rpc.shortName(), k -> new TreeMap<>())
        .merge(a.code.name(), 1, Integer::sum);
    check(sent, a, shortDeadline);
    if (VERBOSE) {
      System.out.printf(
          "fuzz #%d %s %s -> %s %s (%d ms)%n",
          sent.index(),
          call,
          describe(rpc, payload),
          a.code,
          a.description == null
              ? ""
              : a.description.length() > 200 ? a.description.substring(0, 200) : a.description,
          nanos / 1_000_000);
    }
    if (a.code == Status.Code.OK && a.response != null) {
      learn(a.response);
    }
  }

  private byte[] build(FuzzCall call, Values v) {
    Rpc rpc = call.rpc();
    Message valid = Templates.valid(rpc, v, context());
    return switch (call.form()) {
      case VALID -> valid.toByteArray();
      case MUTATED -> RandomMessages.mutate(valid, v).toByteArray();
      case SCRATCH -> {
        byte[] b = RandomMessages.scratch(rpc.request, v).toByteArray();
        yield v.chance(0.25) ? WireMutations.mutate(b, rpc.request.getDescriptorForType(), v) : b;
      }
      case WIRE -> WireMutations.mutate(valid.toByteArray(), rpc.request.getDescriptorForType(), v);
      case RAW -> RandomMessages.bytes(v, v.below(64));
    };
  }

  /**
   * Membership calls that would change the membership are changed into ones that must not ({@link
   * MembershipGuard}); grants and revocations naming one of the variant's identities are sent for
   * an outsider ({@link AuthGuard}).
   */
  private byte[] guard(Rpc rpc, byte[] payload) {
    boolean membership =
        rpc.name.equals("leasehold.v1.Cluster/AddMember")
            || rpc.name.equals("leasehold.v1.Cluster/RemoveMember");
    boolean grants =
        rpc.name.equals("leasehold.v1.Auth/GrantRole")
            || rpc.name.equals("leasehold.v1.Auth/RevokeRole");
    if (!membership && !grants) {
      return payload;
    }
    Message parsed;
    try {
      parsed = rpc.parseRequest(payload);
    } catch (InvalidProtocolBufferException unparseable) {
      return payload;
    }
    Message guarded;
    if (grants) {
      guarded = AuthGuard.guard(parsed, identityNames);
    } else {
      List<Member> members = members();
      guarded =
          parsed instanceof AddMemberRequest add
              ? MembershipGuard.guard(add, members)
              : MembershipGuard.guard((RemoveMemberRequest) parsed, members);
    }
    return guarded == parsed ? payload : guarded.toByteArray();
  }

  private record Answer(Status.Code code, String description, Message response, String note) {}

  private Answer unary(Rpc rpc, ManagedChannel channel, byte[] payload, Duration deadline) {
    byte[] reply;
    try {
      reply =
          ClientCalls.blockingUnaryCall(
              channel,
              rpc.raw,
              CallOptions.DEFAULT.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS),
              payload);
    } catch (StatusRuntimeException e) {
      return new Answer(e.getStatus().getCode(), e.getStatus().getDescription(), null, "");
    }
    try {
      return new Answer(Status.Code.OK, null, rpc.parseResponse(reply), "");
    } catch (InvalidProtocolBufferException e) {
      return new Answer(
          Status.Code.OK,
          null,
          null,
          "the reply does not parse as "
              + rpc.response.getDescriptorForType().getName()
              + ": "
              + e);
    }
  }

  /**
   * A Watch is opened, read until its first message, and cancelled. A Backup is read to its end, or
   * (now and then) cancelled after its first chunk.
   */
  private Answer stream(Rpc rpc, ManagedChannel channel, byte[] payload, Values v) {
    boolean watch = rpc.method().equals("Watch");
    boolean cancelEarly = watch || v.chance(0.3);
    ClientCall<byte[], byte[]> call =
        channel.newCall(
            rpc.raw,
            CallOptions.DEFAULT.withDeadlineAfter(CALL_DEADLINE.toMillis(), TimeUnit.MILLISECONDS));
    LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    CompletableFuture<Status> closed = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            events.add(message);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
            events.add(status);
          }
        },
        new Metadata());
    call.request(Integer.MAX_VALUE);
    call.sendMessage(payload);
    call.halfClose();
    List<byte[]> messages = new ArrayList<>();
    Status status = null;
    boolean cancelled = false;
    String note = "";
    try {
      long deadline =
          System.nanoTime()
              + (watch ? Duration.ofSeconds(3) : CALL_DEADLINE.plusSeconds(5)).toNanos();
      while (status == null) {
        Object e = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e == null) {
          break; // a watch that sent nothing yet: cancelled below
        }
        if (e instanceof Status s) {
          status = s;
        } else {
          messages.add((byte[]) e);
          if (cancelEarly) {
            break;
          }
        }
      }
      if (status == null) {
        if (watch && messages.isEmpty()) {
          silentWatches++;
        }
        call.cancel("fuzz: done with this stream", null);
        cancelled = true;
        status = closed.get(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Answer(Status.Code.CANCELLED, "interrupted", null, "");
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return new Answer(
          Status.Code.DEADLINE_EXCEEDED,
          "the stream did not close within 10 s of its cancellation",
          null,
          "the stream did not close within 10 s of its cancellation");
    }
    for (byte[] m : messages) {
      try {
        if (watch) {
          WatchResponse.parseFrom(m);
        } else {
          BackupChunk.parseFrom(m);
        }
      } catch (InvalidProtocolBufferException e) {
        note = "a stream message does not parse: " + e;
      }
    }
    if (!watch && status.isOk()) {
      try {
        if (messages.isEmpty() || !BackupChunk.parseFrom(messages.get(0)).hasHeader()) {
          note = "a complete backup without a header in its first message";
        }
      } catch (InvalidProtocolBufferException e) {
        note = "a backup chunk does not parse: " + e;
      }
    }
    // Our own cancellation after the stream was open is a success for the call.
    if (cancelled && status.getCode() == Status.Code.CANCELLED) {
      return new Answer(Status.Code.OK, null, null, note);
    }
    return new Answer(status.getCode(), status.getDescription(), null, note);
  }

  private void check(Sent s, Answer a, boolean shortDeadline) {
    FuzzVariant.Identity identity = variant.identities().get(s.identity());
    if (!a.note.isEmpty()) {
      violation(s, a.note);
    }
    if (FORBIDDEN.contains(s.code())) {
      violation(s, s.code() + ": " + s.description());
    }
    if (s.code() != Status.Code.OK
        && s.code() != Status.Code.CANCELLED
        && (s.description() == null || s.description().isBlank())) {
      violation(s, s.code() + " without a message saying why");
    }
    if (s.code() == Status.Code.INVALID_ARGUMENT && !namesField(s.rpc(), s.description())) {
      violation(
          s,
          "INVALID_ARGUMENT that names no field of "
              + s.rpc().request.getDescriptorForType().getName()
              + ": "
              + s.description());
    }
    if (s.code() == Status.Code.DEADLINE_EXCEEDED
        && !shortDeadline
        && !asksToWait(s)
        && s.nanos() >= CALL_DEADLINE.minusSeconds(1).toNanos()) {
      violation(s, "no answer within " + CALL_DEADLINE.toSeconds() + " s");
    }
    boolean denied =
        s.code() == Status.Code.PERMISSION_DENIED || s.code() == Status.Code.UNAUTHENTICATED;
    // A read given a deadline too short to meet may end before any answer, refusal or not.
    boolean unanswered = shortDeadline && s.code() == Status.Code.DEADLINE_EXCEEDED;
    if (!identity.mayCall().test(s.rpc().name)
        && !denied
        && !unparseable(s)
        && !tooLarge(s)
        && !unanswered) {
      violation(
          s,
          identity.name() + " may not call " + s.rpc().name + ", but the call ended " + s.code());
    }
    if (identity.mayCall().test(s.rpc().name)
        && s.code() == Status.Code.PERMISSION_DENIED
        && !notTheHolder(s, identity)) {
      violation(
          s,
          identity.name() + " may call " + s.rpc().name + ", but was refused: " + s.description());
    }
    if (s.rpc().write && AMBIGUOUS.contains(s.code()) && !shortDeadline) {
      violation(
          s,
          "a write ended "
              + s.code()
              + " ("
              + s.description()
              + "): it may or may not have been applied, so the replay cannot"
              + " be compared with this run");
    }
  }

  /**
   * Bytes that are no request of the method's type are refused as such (INVALID_ARGUMENT "request:
   * not a valid …") before any authorization: there is no request to authorize. Anything that
   * parses is authorized first.
   */
  /**
   * A request over the node's --max-request-bytes: gRPC refuses it before anything reads it, so
   * before authorization.
   */
  /**
   * A call whose request asks its node to hold it (a blocking Resolve, an Acquire with a wait): it
   * may rightly outlast the call's deadline.
   */
  private static boolean asksToWait(Sent s) {
    try {
      return switch (s.rpc().name) {
        case "leasehold.v1.Registry/Resolve" ->
            io.leasehold.proto.v1.ResolveRequest.parseFrom(s.payload()).getWaitForVersion() != 0;
        case "leasehold.v1.Leases/Acquire" ->
            io.leasehold.proto.v1.AcquireRequest.parseFrom(s.payload()).hasWait();
        default -> false;
      };
    } catch (com.google.protobuf.InvalidProtocolBufferException notParsed) {
      return false;
    }
  }

  private static boolean tooLarge(Sent s) {
    return s.code() == Status.Code.RESOURCE_EXHAUSTED
        && s.description() != null
        && s.description().startsWith("gRPC message exceeds maximum size");
  }

  private static boolean unparseable(Sent s) {
    return s.code() == Status.Code.INVALID_ARGUMENT
        && s.description() != null
        && s.description().startsWith("request: not a valid ");
  }

  /**
   * With authentication, the one refusal of a call the identity may make: the request names a
   * holder other than the caller (the authorization point's "holder: must be the caller's identity
   * …"), or changes a lease that another identity holds (the core's "FIELD: lease … is held by X,
   * not by the caller …", X not the caller). Without authentication, never.
   */
  private boolean notTheHolder(Sent s, FuzzVariant.Identity identity) {
    String d = s.description();
    if (!variant.authenticated() || d == null) {
      return false;
    }
    if (d.startsWith(
        "holder: must be the caller's identity " + identity.name() + " (or empty), not ")) {
      return true;
    }
    java.util.regex.Matcher m = HELD_BY_ANOTHER.matcher(d);
    if (m.matches() && m.group(2).equals(identity.name()) && !m.group(1).equals(identity.name())) {
      return true;
    }
    java.util.regex.Matcher o = OFFERED_TO_ANOTHER.matcher(d);
    return o.matches() && o.group(2).equals(identity.name()) && !o.group(1).equals(identity.name());
  }

  /** The core's refusal of an acceptance by an identity the transfer was not offered to. */
  private static final java.util.regex.Pattern OFFERED_TO_ANOTHER =
      java.util.regex.Pattern.compile(
          "holder: the transfer of .* was offered to (.*), not to (.*)",
          java.util.regex.Pattern.DOTALL);

  /** The core's refusal of a change to another identity's lease, after the field it concerns. */
  private static final java.util.regex.Pattern HELD_BY_ANOTHER =
      java.util.regex.Pattern.compile(
          "[A-Za-z0-9_.\\[\\]]+: lease .* is held by (.*), not by the caller (.*)",
          java.util.regex.Pattern.DOTALL);

  /**
   * The message starts with a field of the request ("items[0].token: ...", "attributes.address:
   * ..."), or "request" for unparseable bytes.
   */
  static boolean namesField(Rpc rpc, String description) {
    if (description == null) {
      return false;
    }
    int end = 0;
    while (end < description.length()
        && (Character.isLetterOrDigit(description.charAt(end)) || description.charAt(end) == '_')) {
      end++;
    }
    String first = description.substring(0, end);
    return first.equals("request")
        || rpc.request.getDescriptorForType().findFieldByName(first) != null;
  }

  /**
   * Grants (for later valid requests to refer to), names and holders (for the history compared),
   * the latest revision.
   */
  private void learn(Message response) {
    for (FieldDescriptor f : response.getDescriptorForType().getFields()) {
      if (f.isRepeated()
          || f.getJavaType() != FieldDescriptor.JavaType.MESSAGE
          || !response.hasField(f)) {
        if (f.getName().equals("revision") && f.getJavaType() == FieldDescriptor.JavaType.LONG) {
          revision = Math.max(revision, (Long) response.getField(f));
        }
        continue;
      }
      Object value = response.getField(f);
      if (value instanceof Lease l) {
        known(l.getName(), l.getToken(), l.getHolder());
      } else if (value instanceof Instance i) {
        known("service/" + i.getService() + "/" + i.getInstance(), i.getToken(), i.getHolder());
      }
    }
  }

  private void known(String name, long token, String holder) {
    namesSeen.add(name);
    holdersSeen.add(holder);
    if (token > 0 && grantedTokens.add(token)) {
      granted.add(new Templates.KnownLease(name, token));
    }
  }

  private Templates.RunContext context() {
    return new Templates.RunContext() {
      @Override
      public Optional<Templates.KnownLease> lease(int k, String prefix) {
        List<Templates.KnownLease> matching = new ArrayList<>();
        for (int i = granted.size() - 1; i >= 0 && matching.size() <= k; i--) {
          if (granted.get(i).name().startsWith(prefix)) {
            matching.add(granted.get(i));
          }
        }
        return matching.isEmpty()
            ? Optional.empty()
            : Optional.of(matching.get(Math.min(k, matching.size() - 1)));
      }

      @Override
      public long revision() {
        return revision;
      }

      @Override
      public List<Member> members() {
        return FuzzSession.this.members();
      }

      @Override
      public String leaderId() {
        return run.cluster.leader().map(LeaseholdNode::id).orElse("");
      }
    };
  }

  private List<Member> members() {
    return run.nodes.stream().map(run.cluster::member).toList();
  }

  private void violation(Sent s, String what) {
    violations.add(
        "call #"
            + s.index()
            + " ("
            + s.call()
            + "): "
            + what
            + "\n      request: "
            + describe(s.rpc(), s.payload()));
  }

  static String describe(Rpc rpc, byte[] payload) {
    String text;
    try {
      text = TextFormat.shortDebugString(rpc.parseRequest(payload));
    } catch (InvalidProtocolBufferException e) {
      text =
          "(does not parse) "
              + HexFormat.of().formatHex(Arrays.copyOf(payload, Math.min(64, payload.length)))
              + (payload.length > 64 ? "..." : "");
    }
    return payload.length
        + " bytes: "
        + (text.length() > 300 ? text.substring(0, 297) + "..." : text);
  }

  // ---- afterwards ----

  /**
   * The checks after the run; throws an AssertionError listing every problem found, during the run
   * or now.
   */
  void verify() throws IOException {
    fuzzNanos = System.nanoTime() - fuzzStartedNanos;
    List<String> problems = new ArrayList<>(violations);
    checkNodes(problems);
    checkDrained(problems);
    checkReplicas(problems);
    checkThreads(problems);
    checkCoverage(problems);
    ClusterState.Scope scope = new ClusterState.Scope(namesSeen, holdersSeen);
    ClusterState fuzzed = ClusterState.read(run.observerOnLeader(), scope);
    run.close();
    run = null;
    long replayStarted = System.nanoTime();
    try (FuzzRun fresh = FuzzRun.start(variant, root.resolve("replay"))) {
      replay(fresh, problems);
      ClusterState replayedState = ClusterState.read(fresh.observerOnLeader(), scope);
      List<String> diff = fuzzed.differences(replayedState, 20);
      if (!diff.isEmpty()) {
        problems.add(
            "the state after the run differs from the state the "
                + replayed
                + " accepted writes alone produce:\n    "
                + String.join("\n    ", diff));
      }
      System.out.println(report(fuzzed, System.nanoTime() - replayStarted));
    }
    if (!problems.isEmpty()) {
      List<String> shown =
          problems.size() > MAX_REPORTED ? problems.subList(0, MAX_REPORTED) : problems;
      throw new AssertionError(
          problems.size()
              + " problem(s) in the API fuzz run (variant "
              + variant.name()
              + ", seed "
              + seed
              + ", "
              + tries
              + " tries; rerun with -Dleasehold.fuzz.seed="
              + seed
              + " -Dleasehold.fuzz.tries="
              + tries
              + "):\n  "
              + String.join("\n  ", shown)
              + (problems.size() > shown.size()
                  ? "\n  … and " + (problems.size() - shown.size()) + " more"
                  : ""));
    }
  }

  private void checkNodes(List<String> problems) {
    for (int i = 0; i < run.nodes.size(); i++) {
      String id = run.nodes.get(i);
      LeaseholdNode node = run.cluster.node(id);
      if (node.divisionClosed().isDone()) {
        problems.add("node " + id + ": Ratis closed its division: " + node.divisionClosed().join());
      }
      try {
        ClusterGrpc.newBlockingStub(run.channel(0, i))
            .withDeadlineAfter(20, TimeUnit.SECONDS)
            .status(StatusRequest.getDefaultInstance());
      } catch (StatusRuntimeException e) {
        problems.add("node " + id + " no longer answers Cluster/Status: " + e.getStatus());
      }
    }
    try {
      run.cluster.awaitLeader();
    } catch (AssertionError e) {
      problems.add("no leader after the run: " + e.getMessage());
    }
  }

  private void checkDrained(List<String> problems) {
    try {
      TestCluster.await(
          () ->
              "every node to drop its watchers and held writes: "
                  + run.cluster.running().stream()
                      .map(
                          n ->
                              n.id()
                                  + " watchers "
                                  + n.watchHub().watchers()
                                  + " writes "
                                  + n.replicator().pendingWrites())
                      .toList(),
          Duration.ofSeconds(15),
          () ->
              run.cluster.running().stream()
                  .allMatch(
                      n -> n.watchHub().watchers() == 0 && n.replicator().pendingWrites() == 0));
    } catch (AssertionError e) {
      problems.add(e.getMessage());
    }
  }

  private void checkReplicas(List<String> problems) {
    try {
      run.cluster.awaitConverged();
      List<LeaseholdNode> nodes = run.cluster.running();
      byte[] first = TestCluster.dump(nodes.get(0));
      for (LeaseholdNode n : nodes.subList(1, nodes.size())) {
        if (!Arrays.equals(first, TestCluster.dump(n))) {
          problems.add(
              "the replicas differ: " + n.id() + "'s state is not " + nodes.get(0).id() + "'s");
        }
      }
    } catch (AssertionError e) {
      problems.add("the replicas did not converge: " + e.getMessage());
    }
  }

  private void checkThreads(List<String> problems) {
    try {
      TestCluster.await(
          () ->
              "the JVM's threads to settle back to at most "
                  + (baselineThreads + THREAD_MARGIN)
                  + " (after warm-up: "
                  + baselineThreads
                  + ", now "
                  + threadCount()
                  + "); grown: "
                  + grown(),
          Duration.ofSeconds(30),
          () -> threadCount() <= baselineThreads + THREAD_MARGIN);
    } catch (AssertionError e) {
      problems.add("thread leak? " + e.getMessage());
    }
  }

  /**
   * With enough tries, every RPC was called, accepted at least once and refused as invalid at least
   * once: 1,000 for each identity, as the calls are spread over them (and most of an unprivileged
   * identity's are refused before anything else is checked).
   */
  private void checkCoverage(List<String> problems) {
    if (tries < 1000L * variant.identities().size()) {
      return;
    }
    for (Rpc rpc : Rpc.all()) {
      Map<String, Integer> o = outcomes.getOrDefault(rpc.shortName(), Map.of());
      if (!o.containsKey("OK") && !Rpc.NEEDS_LEASE_GROUPS.contains(rpc.name)) {
        problems.add("coverage: " + rpc.shortName() + " was never answered OK: " + o);
      }
      if (!o.containsKey("INVALID_ARGUMENT")) {
        problems.add(
            "coverage: " + rpc.shortName() + " was never refused as INVALID_ARGUMENT: " + o);
      }
    }
  }

  /**
   * The accepted writes, in order, with each token of the first run replaced by the token the
   * replay got for the same grant.
   */
  private void replay(FuzzRun fresh, List<String> problems) {
    Map<Long, Long> tokens = new HashMap<>();
    int reported = 0;
    for (Sent s : log) {
      if (s.code() != Status.Code.OK || !s.rpc().write || s.response() == null) {
        continue;
      }
      replayed++;
      Message request;
      try {
        request = s.rpc().parseRequest(s.payload());
      } catch (InvalidProtocolBufferException e) {
        problems.add("call #" + s.index() + " was accepted, but its bytes do not parse here: " + e);
        continue;
      }
      // A token the run never saw granted names no lease: 1 never does, and was issued before any
      // grant.
      Message translated =
          ProtoWalk.mapTokens(request, t -> tokens.containsKey(t) ? tokens.get(t) : t > 0 ? 1 : t);
      Answer a =
          unary(
              s.rpc(),
              fresh.channel(s.identity(), s.node()),
              translated.toByteArray(),
              CALL_DEADLINE);
      if (a.code != Status.Code.OK || a.response == null) {
        if (reported++ < 10) {
          problems.add(
              "replay of call #"
                  + s.index()
                  + " ("
                  + s.call()
                  + ") was refused: "
                  + a.code
                  + " "
                  + a.description
                  + "\n      request: "
                  + describe(s.rpc(), translated.toByteArray()));
        }
        continue;
      }
      List<Long> before = ProtoWalk.tokens(s.response());
      List<Long> now = ProtoWalk.tokens(a.response);
      if (before.size() == now.size()) {
        for (int i = 0; i < before.size(); i++) {
          Long earlier = tokens.putIfAbsent(before.get(i), now.get(i));
          if (earlier != null && !earlier.equals(now.get(i)) && reported++ < 10) {
            problems.add(
                "replay of call #"
                    + s.index()
                    + ": token "
                    + before.get(i)
                    + " of the run was "
                    + earlier
                    + " in the replay, and is now "
                    + now.get(i));
          }
        }
      }
      String expected =
          TextFormat.shortDebugString(ProtoWalk.without(s.response(), ProtoWalk::runDependent));
      String got =
          TextFormat.shortDebugString(ProtoWalk.without(a.response, ProtoWalk::runDependent));
      if (!expected.equals(got) && reported++ < 10) {
        problems.add(
            "replay of call #"
                + s.index()
                + " ("
                + s.call()
                + ") was answered differently:\n      run:    "
                + expected
                + "\n      replay: "
                + got
                + "\n      request: "
                + describe(s.rpc(), translated.toByteArray()));
      }
    }
  }

  private String report(ClusterState state, long replayNanos) {
    StringBuilder b = new StringBuilder();
    int fuzzCalls = log.size() - warmUpCalls;
    b.append(
        String.format(
            "API fuzz, variant %s, seed %d: %d calls in %.1f s (after %d warm-up calls); %d accepted writes replayed"
                + " in %.1f s; final state: %d leases, %d policies, %d bans, %d routes, %d instances, %d histories, %d roles, %d identities"
                + " with grants; %d watches cancelled before their first message%n",
            variant.name(),
            seed,
            fuzzCalls,
            fuzzNanos / 1e9,
            warmUpCalls,
            replayed,
            replayNanos / 1e9,
            state.count("lease"),
            state.count("policy"),
            state.count("ban"),
            state.count("route"),
            state.count("instance"),
            state.count("history"),
            state.count("role"),
            state.count("grants of"),
            silentWatches));
    Map<String, Integer> forms = new TreeMap<>();
    for (Sent s : log.subList(warmUpCalls, log.size())) {
      forms.merge(
          s.call().form() + (s.code() == Status.Code.OK ? " OK" : " refused"), 1, Integer::sum);
    }
    b.append("  by form: ").append(forms).append('\n');
    for (Map.Entry<String, Map<String, Integer>> e : outcomes.entrySet()) {
      b.append(String.format("  %-28s %s%n", e.getKey(), e.getValue()));
    }
    List<Sent> slowest =
        log.stream().sorted(Comparator.comparingLong(Sent::nanos).reversed()).limit(5).toList();
    b.append("  slowest: ")
        .append(
            slowest.stream()
                .map(
                    s ->
                        "#"
                            + s.index()
                            + " "
                            + s.rpc().shortName()
                            + " "
                            + s.code()
                            + " "
                            + s.nanos() / 1_000_000
                            + " ms")
                .collect(Collectors.joining(", ")));
    return b.toString();
  }

  static int threadCount() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  /** Live threads by name with the digits taken out ("grpc-default-executor-#"). */
  static Map<String, Integer> threadNames() {
    Map<String, Integer> names = new TreeMap<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      names.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
    }
    return names;
  }

  private String grown() {
    Map<String, Integer> now = threadNames();
    Set<String> keys = new LinkedHashSet<>(now.keySet());
    List<String> out = new ArrayList<>();
    for (String k : keys) {
      int d = now.get(k) - baselineThreadNames.getOrDefault(k, 0);
      if (d > 0) {
        out.add(k + " +" + d);
      }
    }
    return out.toString();
  }

  @Override
  public void close() {
    try {
      if (run != null) {
        run.close();
      }
    } finally {
      run = null;
      deleteTree(root);
    }
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      System.err.println("could not delete " + dir + ": " + e);
    }
  }
}
