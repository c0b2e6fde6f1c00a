// How to run (from the repository root):
//
//   mvn -B -q -pl benchmarks -am package -DskipTests && java -jar benchmarks/target/benchmarks.jar
// ApplyBenchmark -f 3
//
// Three forks (about 7.5 minutes) because one fork on a small VM varies by ±30%; quote the
// three-fork score and error.
//
// One benchmark only: append its name, e.g. `ApplyBenchmark.renewBatch1000`; add `-prof gc` for
// allocation per operation. The whole class takes about 2.5 minutes (five benchmarks, one fork
// each).
package io.leasehold.benchmarks;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.CommandBatch;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Throughput of the apply path: {@link LeaseCore#apply} over a real {@link RocksDbStore}, one log
 * entry per invocation at the next index (term 1, leader time increasing), on one thread, because
 * Ratis applies entries one at a time. The store is in the log format a new cluster runs (batches,
 * {@link LogFormat#NEWEST}).
 *
 * <p>Each invocation builds its {@link LogCommand}, as the adapter decodes one per entry; the
 * {@code FromBytes} variant parses it from the wire bytes as a follower does. Not measured: Ratis
 * itself, the log, serialising the reply and notifying watchers.
 *
 * <p>The store lives for the whole trial (warmup and measurement), so {@code acquireNewName}
 * measures a store that keeps growing (one new lease per operation, a few million by the end); the
 * name count is printed at teardown. The renew pools stay the same size.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Threads(1)
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 10, time = 2)
public class ApplyBenchmark {
  private static final long TERM = 1;
  private static final String HOLDER = "bench-holder-0001";
  private static final Duration TTL = Duration.newBuilder().setSeconds(10).build();
  private static final int SMALL_POOL = 10_000;
  private static final int BATCH_POOL = 100_000;
  private static final int BATCH = 1_000;

  /** Acquisitions a batched entry carries: as many as a leader batches at most. */
  private static final int ACQUIRE_BATCH = LogFormat.MAX_BATCH;

  private Path dir;
  private RocksDbStore store;
  private LeaseCore core;
  private long index;
  private long leaderTimeMicros = 1_700_000_000_000_000L;

  /** Held leases: names[i] was granted with token tokens[i]. */
  private String[] names = new String[0];

  private long[] tokens = new long[0];
  private String method;
  private int cursor;
  private long newNames;

  /**
   * For the FromBytes variant: each batch of the pool as a serialised LogCommand without its leader
   * time.
   */
  private byte[][] batchBytes;

  /** Kept so dead-code elimination cannot drop apply, and checked at teardown. */
  private ApplyResult last;

  @Setup(Level.Trial)
  public void setUp(BenchmarkParams params) throws IOException {
    dir = Files.createTempDirectory("leasehold-apply-bench");
    store = RocksDbStore.open(dir.resolve("db"));
    core = new LeaseCore(store);
    // As a new cluster's leader does first: from this entry on, entries may carry batches.
    core.apply(
        TERM,
        ++index,
        LogCommand.newBuilder()
            .setLeaderTimeMicros(++leaderTimeMicros)
            .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.NEWEST))
            .build());
    if (core.logFormat() != LogFormat.NEWEST) {
      throw new IllegalStateException("the store did not switch to log format " + LogFormat.NEWEST);
    }
    method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
    switch (method) {
      case "acquireIdempotent", "renewSingle" -> hold(SMALL_POOL);
      case "acquireReleaseBatch256" -> tokens = new long[ACQUIRE_BATCH / 2];
      case "renewBatch1000" -> hold(BATCH_POOL);
      case "renewBatch1000FromBytes" -> {
        hold(BATCH_POOL);
        batchBytes = new byte[BATCH_POOL / BATCH][];
        for (int b = 0; b < batchBytes.length; b++) {
          batchBytes[b] =
              LogCommand.newBuilder().setRenew(renewBatch(b * BATCH)).build().toByteArray();
        }
        LogCommand parsed = LogCommand.parseFrom(entryBytes(batchBytes[0], 42));
        if (!parsed.equals(
            LogCommand.newBuilder().setLeaderTimeMicros(42).setRenew(renewBatch(0)).build())) {
          throw new IllegalStateException(
              "the spliced entry bytes do not parse to the intended command");
        }
      }
      default -> {}
    }
  }

  /**
   * Acquires {@code count} leases through the core, as clients would have, and keeps their tokens.
   */
  private void hold(int count) throws IOException {
    names = new String[count];
    tokens = new long[count];
    for (int i = 0; i < count; i++) {
      names[i] = "bench/held-" + i;
      ApplyResult r = core.apply(TERM, ++index, acquire(names[i]));
      if (r.reply().getAcquire().getOutcome() != Outcome.GRANTED) {
        throw new IllegalStateException("pool setup: " + r.reply());
      }
      tokens[i] = r.reply().getAcquire().getLease().getToken();
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    try {
      check();
      if (method.equals("acquireNewName")) {
        System.out.printf(
            "%n[acquireNewName] the store grew by %,d leases over the trial%n", newNames);
      }
    } finally {
      store.close();
      Dirs.deleteRecursively(dir);
    }
  }

  /** The benchmarks must have measured the intended path, not a rejection or an invalid no-op. */
  private void check() {
    if (last == null) {
      return;
    }
    LogReply reply = last.reply();
    boolean ok =
        switch (reply.getReplyCase()) {
          // A fresh name gets a new token (this entry's); a re-acquire keeps the lease's token.
          case ACQUIRE ->
              reply.getAcquire().getOutcome() == Outcome.GRANTED
                  && (reply.getAcquire().getLease().getToken() == firstToken(last.revision()))
                      == method.equals("acquireNewName");
          case BATCH ->
              reply.getBatch().getRepliesCount() == ACQUIRE_BATCH
                  && reply.getBatch().getRepliesList().stream()
                      .allMatch(
                          r ->
                              r.hasAcquire()
                                  ? r.getAcquire().getOutcome() == Outcome.GRANTED
                                  : r.getRelease().getOutcome() == Outcome.RELEASED)
                  && reply
                          .getBatch()
                          .getReplies(ACQUIRE_BATCH / 2 - 1)
                          .getAcquire()
                          .getLease()
                          .getToken()
                      == firstToken(last.revision()) + ACQUIRE_BATCH / 2 - 1;
          case RENEW ->
              reply.getRenew().getResultsList().stream()
                  .allMatch(r -> r.getOutcome() == Outcome.RENEWED);
          default -> false;
        };
    if (!ok || last.revision() != index) {
      throw new IllegalStateException(
          "the last applied entry did not do what was measured: " + reply);
    }
  }

  /** The token the first command of entry {@code index} grants, in the newest log format. */
  private static long firstToken(long index) {
    return index * LogFormat.MAX_BATCH;
  }

  private AcquireRequest.Builder acquireRequest(String name) {
    return AcquireRequest.newBuilder().setName(name).setHolder(HOLDER).setTtl(TTL);
  }

  private LogCommand acquire(String name) {
    return LogCommand.newBuilder()
        .setLeaderTimeMicros(++leaderTimeMicros)
        .setAcquire(acquireRequest(name))
        .build();
  }

  private RenewRequest.Builder renewBatch(int from) {
    RenewRequest.Builder renew = RenewRequest.newBuilder();
    for (int i = from; i < from + BATCH; i++) {
      renew.addItems(RenewItem.newBuilder().setName(names[i]).setToken(tokens[i]));
    }
    return renew;
  }

  private int nextInPool() {
    int i = cursor;
    cursor = i + 1 == names.length ? 0 : i + 1;
    return i;
  }

  /** A new lease per operation: a miss in the store, then an insert. */
  @Benchmark
  public ApplyResult acquireNewName() throws IOException {
    String name = "bench/n-" + newNames++;
    return last = core.apply(TERM, ++index, acquire(name));
  }

  /**
   * A log entry of {@value #ACQUIRE_BATCH} commands, as a leader batches them under acquire-release
   * load: half acquire new names, half release the names the previous entry acquired (so the store
   * stays small). Each command is its own transaction and reply; the entry has one store commit.
   * The score is commands per second.
   */
  @Benchmark
  @OperationsPerInvocation(ACQUIRE_BATCH)
  public ApplyResult acquireReleaseBatch256() throws IOException {
    CommandBatch.Builder batch = CommandBatch.newBuilder();
    int half = ACQUIRE_BATCH / 2;
    for (int i = 0; i < half; i++) {
      batch.addCommands(
          LogCommand.newBuilder().setAcquire(acquireRequest("bench/n-" + (newNames + i))));
    }
    for (int i = 0; i < half && newNames > 0; i++) {
      batch.addCommands(
          LogCommand.newBuilder()
              .setRelease(
                  ReleaseRequest.newBuilder()
                      .setName("bench/n-" + (newNames - half + i))
                      .setToken(tokens[i])));
    }
    ApplyResult r =
        core.apply(
            TERM,
            ++index,
            LogCommand.newBuilder()
                .setLeaderTimeMicros(++leaderTimeMicros)
                .setBatch(batch)
                .build());
    for (int i = 0; i < half; i++) {
      tokens[i] = r.reply().getBatch().getReplies(i).getAcquire().getLease().getToken();
    }
    newNames += half;
    return last = r;
  }

  /** The holder acquires a name it already holds (a retry): read, renew, write. */
  @Benchmark
  public ApplyResult acquireIdempotent() throws IOException {
    return last = core.apply(TERM, ++index, acquire(names[nextInPool()]));
  }

  /** One lease renewed per log entry. */
  @Benchmark
  public ApplyResult renewSingle() throws IOException {
    int i = nextInPool();
    LogCommand command =
        LogCommand.newBuilder()
            .setLeaderTimeMicros(++leaderTimeMicros)
            .setRenew(
                RenewRequest.newBuilder()
                    .addItems(RenewItem.newBuilder().setName(names[i]).setToken(tokens[i])))
            .build();
    return last = core.apply(TERM, ++index, command);
  }

  /** One log entry renewing 1,000 leases; the score is leases per second. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public ApplyResult renewBatch1000() throws IOException {
    int from = nextBatch();
    LogCommand command =
        LogCommand.newBuilder()
            .setLeaderTimeMicros(++leaderTimeMicros)
            .setRenew(renewBatch(from))
            .build();
    return last = core.apply(TERM, ++index, command);
  }

  /**
   * As {@link #renewBatch1000}, but parsed from the entry's bytes as a follower's adapter does
   * ({@code LogCommand.parseFrom} of a read-only buffer). The fresh leader time is written as a
   * field in front of the pre-serialised batch: protobuf merges the two, as if serialised whole.
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public ApplyResult renewBatch1000FromBytes() throws IOException {
    byte[] entry = entryBytes(batchBytes[nextBatch() / BATCH], ++leaderTimeMicros);
    LogCommand command = LogCommand.parseFrom(ByteBuffer.wrap(entry).asReadOnlyBuffer());
    return last = core.apply(TERM, ++index, command);
  }

  /** The bytes of a log entry: the leader time field, then the rest of the command. */
  private static byte[] entryBytes(byte[] body, long leaderTimeMicros) throws IOException {
    int head =
        CodedOutputStream.computeInt64Size(
            LogCommand.LEADER_TIME_MICROS_FIELD_NUMBER, leaderTimeMicros);
    byte[] entry = new byte[head + body.length];
    CodedOutputStream out = CodedOutputStream.newInstance(entry, 0, head);
    out.writeInt64(LogCommand.LEADER_TIME_MICROS_FIELD_NUMBER, leaderTimeMicros);
    out.flush();
    System.arraycopy(body, 0, entry, head, body.length);
    return entry;
  }

  private int nextBatch() {
    int from = cursor;
    cursor = from + BATCH >= names.length ? 0 : from + BATCH;
    return from;
  }
}
