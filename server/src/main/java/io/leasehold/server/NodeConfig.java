package io.leasehold.server;

import io.leasehold.server.watch.WatchHub;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.Limits;
import io.leasehold.statemachine.core.Validation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Everything a node needs, with every default in one place. Built with {@link #builder}; invalid
 * combinations fail in {@link Builder#build} with a message naming the option.
 *
 * @param listenHost the address the node binds both ports to; defaults to its own peer host
 * @param join start without a group of its own: the node waits to be added to a running cluster
 *     ({@code Cluster/AddMember}) and then catches up from the leader; {@code peers} need list only
 *     this node, though other members make a leader known sooner
 * @param movePartBytes the most of a moving namespace's state one Raft entry carries: a larger
 *     state is staged in its destination in parts of at most this size before its adoption (log
 *     format 7; docs/design/multi-raft.md, "Moving a namespace")
 * @param leaseGroups the Raft groups this node hosts besides the meta group when the cluster forms
 *     ({@code --lease-groups}): 1, the default, is the meta group alone; N above 1 adds lease
 *     groups 1..N, each with its own log, state and leader, their leaders spread over the members
 *     by priority (docs/design/multi-raft.md). A joining node given the cluster's N hosts them
 *     empty until a member adds it to each
 * @param leaseGroupSize how many of the peers each lease group sits on when the cluster forms
 *     ({@code --lease-group-size}): 0, the default, puts every lease group on every peer; R puts
 *     lease group k on the R peers from position {@code (k - 1) × R mod peers} of {@code peers} on,
 *     and the node serves the other groups through their members (docs/design/multi-raft.md,
 *     "Groups on subsets of the nodes")
 * @param metricsPort the port of the Prometheus HTTP endpoint ({@code /metrics}), if any
 * @param metricsPlaintext serve the metrics port over plain HTTP even when the client port speaks
 *     TLS (etcd's {@code --listen-metrics-urls http://…}): for probes and scrapers that hold no
 *     client certificate
 * @param ui serve the read-only dashboard ({@code /ui}) on the metrics port (on by default; the
 *     metrics port must be on for it to be reachable)
 * @param grpcKeepaliveInterval how long a client connection may be silent before the node sends it
 *     an HTTP/2 PING; grpc-java raises anything below 10 s to 10 s
 * @param grpcKeepaliveTimeout how long the node waits for that PING's ACK before it closes the
 *     connection and cancels its calls (Watch streams included)
 * @param raftProperties Ratis settings ({@code raft.*} keys) applied over the node's own, for
 *     experts and tests; the node's defaults are what is tested
 * @param traceWrites a file to trace every log entry's steps through this node into, if any (a
 *     diagnostic: {@link io.leasehold.server.raft.WriteTrace})
 * @param faultControl a file through which the fault tests hold this node's Raft traffic, if any
 *     ({@link io.leasehold.server.raft.FaultControl}; never in production)
 * @param clientTls TLS on the client port and the metrics port; its CA, when given, verifies the
 *     certificates clients present
 * @param peerTls mutual TLS on the Raft port: every member presents its certificate and verifies
 *     the other's against the CA, which is therefore required
 * @param clientCertAuth whether a client must present a certificate the client CA verifies (without
 *     it, a certificate a client does present is still verified)
 * @param tlsReloadInterval how often the TLS files are read again; changed files apply to new
 *     connections without a restart
 * @param authTokenFile bearer tokens for clients that cannot present a certificate: one {@code
 *     token,identity} line each, read again at the TLS reload interval when it changes
 * @param initialAdmin the identity that administers the cluster until an admin role is granted (the
 *     first token file entry's, if not given); meaningful only with authentication on
 * @param limits this node's limits against abuse, enforced where calls arrive ({@link
 *     io.leasehold.server.api.RequestLimits})
 */
public record NodeConfig(
    String id,
    List<Peer> peers,
    Path dataDir,
    Optional<String> listenHost,
    String clusterName,
    Duration electionTimeoutMin,
    Duration electionTimeoutMax,
    Duration tickInterval,
    Duration stallThreshold,
    Duration requestTimeout,
    long snapshotThreshold,
    long logSegmentSizeBytes,
    long logPurgeGap,
    long historyMaxEvents,
    Duration historyMaxAge,
    int watchQueueLimit,
    Duration watchProgressInterval,
    int maxPendingWrites,
    int watchMessageRate,
    Duration watchMaxDelay,
    int watchSenders,
    Duration grpcKeepaliveInterval,
    Duration grpcKeepaliveTimeout,
    boolean join,
    int leaseGroups,
    int leaseGroupSize,
    int movePartBytes,
    Optional<Integer> metricsPort,
    boolean metricsPlaintext,
    boolean ui,
    Map<String, String> raftProperties,
    Optional<Path> traceWrites,
    Optional<Path> faultControl,
    Optional<TlsFiles> clientTls,
    Optional<TlsFiles> peerTls,
    boolean clientCertAuth,
    Duration tlsReloadInterval,
    Optional<Path> authTokenFile,
    Optional<String> initialAdmin,
    ApiLimits limits) {

  // The defaults, read by the builder and by the CLI's `server` options (its help shows these).
  public static final int DEFAULT_CLIENT_PORT = 7400;
  public static final int DEFAULT_PEER_PORT = 7401;
  public static final String DEFAULT_CLUSTER_NAME = "leasehold";
  // Ratis's follower checks for a silent leader once per timeout, so it stands for election
  // after between min and about twice max of silence: with these, the first of two followers
  // stands about 0.55 s after a leader dies (0.8 s in nine failovers of ten), a failover fits
  // well inside the 2 s minimum TTL, and a follower still rides out a 400 ms pause.
  public static final Duration DEFAULT_ELECTION_TIMEOUT_MIN = Duration.ofMillis(400);
  public static final Duration DEFAULT_ELECTION_TIMEOUT_MAX = Duration.ofMillis(650);
  public static final Duration DEFAULT_TICK_INTERVAL = Duration.ofMillis(100);
  public static final Duration DEFAULT_STALL_THRESHOLD = Duration.ofMillis(500);
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);
  public static final long DEFAULT_SNAPSHOT_THRESHOLD = 100_000;
  public static final int DEFAULT_LEASE_GROUPS = 1;
  public static final int MAX_LEASE_GROUPS = 16;
  public static final int DEFAULT_MOVE_PART_BYTES = 1 << 20;

  /**
   * The most a move's part may be: with its command around it, an entry well within what Ratis
   * appends (4 MiB at least, RaftSettings).
   */
  public static final int MAX_MOVE_PART_BYTES = 3 << 20;

  public static final long DEFAULT_LOG_SEGMENT_SIZE_BYTES = 32L << 20;
  public static final long DEFAULT_LOG_PURGE_GAP = 1024;
  public static final long DEFAULT_HISTORY_MAX_EVENTS = 100_000;
  public static final Duration DEFAULT_HISTORY_MAX_AGE = Duration.ofHours(1);
  public static final int DEFAULT_WATCH_QUEUE_LIMIT = 10_000;
  public static final Duration DEFAULT_WATCH_PROGRESS_INTERVAL = Duration.ofSeconds(1);
  public static final int DEFAULT_MAX_PENDING_WRITES = 1024;
  public static final int DEFAULT_WATCH_MESSAGE_RATE = WatchHub.DEFAULT_MESSAGE_RATE;
  public static final Duration DEFAULT_WATCH_MAX_DELAY = WatchHub.DEFAULT_MAX_DELAY;
  public static final Duration DEFAULT_GRPC_KEEPALIVE_INTERVAL = Duration.ofSeconds(30);
  public static final Duration DEFAULT_GRPC_KEEPALIVE_TIMEOUT = Duration.ofSeconds(10);
  // Reading three small files this often costs nothing; a rotated certificate is in use for
  // new connections within this time.
  public static final Duration DEFAULT_TLS_RELOAD_INTERVAL = Duration.ofSeconds(10);

  /**
   * Per-node limits against abuse, checked at the API edge (each node counts only the calls it
   * receives; none is replicated). docs/operations.md, "Limits".
   *
   * @param acquiresPerSecond Acquire and Registry/Register calls each identity (each remote address
   *     on a node without authentication) may make per second, with a burst of as many
   * @param watchesPerConnection Watch streams open at once on one client connection
   * @param watchesPerIdentity Watch streams open at once for one identity (remote address)
   * @param renewItems names in one Renew, at most the replicated {@link Limits#MAX_RENEW_ITEMS}
   * @param requestBytes the largest request message the node reads
   * @param metadataBytes the largest request metadata (headers) the node reads
   */
  public record ApiLimits(
      int acquiresPerSecond,
      int watchesPerConnection,
      int watchesPerIdentity,
      int renewItems,
      int requestBytes,
      int metadataBytes) {
    public static final int DEFAULT_ACQUIRES_PER_SECOND = 10_000;
    public static final int DEFAULT_WATCHES_PER_CONNECTION = 1_000;
    public static final int DEFAULT_WATCHES_PER_IDENTITY = 10_000;
    public static final int DEFAULT_RENEW_ITEMS = Limits.MAX_RENEW_ITEMS;

    /**
     * Fits the largest valid request, a Renew of 10,000 names of 512 bytes (about 5.3 MB), with
     * room.
     */
    public static final int DEFAULT_REQUEST_BYTES = 8 << 20;

    public static final int MIN_REQUEST_BYTES = 1 << 20;

    /**
     * A request is one log entry, which Ratis's transport carries in one message (64 MB at most).
     */
    public static final int MAX_REQUEST_BYTES = 32 << 20;

    /** gRPC's own default. */
    public static final int DEFAULT_METADATA_BYTES = 8 << 10;

    public static final int MIN_METADATA_BYTES = 1 << 10;

    public static ApiLimits defaults() {
      return new ApiLimits(
          DEFAULT_ACQUIRES_PER_SECOND,
          DEFAULT_WATCHES_PER_CONNECTION,
          DEFAULT_WATCHES_PER_IDENTITY,
          DEFAULT_RENEW_ITEMS,
          DEFAULT_REQUEST_BYTES,
          DEFAULT_METADATA_BYTES);
    }
  }

  public NodeConfig {
    peers = List.copyOf(peers);
  }

  public Peer self() {
    return peers.stream().filter(p -> p.id().equals(id)).findFirst().orElseThrow();
  }

  public Optional<Peer> peer(String peerId) {
    return peers.stream().filter(p -> p.id().equals(peerId)).findFirst();
  }

  /**
   * Whether requests carry an identity: a client certificate is required, or bearer tokens are
   * configured. Then every lease's holder is its caller's identity and roles decide what each may
   * do.
   */
  public boolean authenticationEnabled() {
    return clientCertAuth || authTokenFile.isPresent();
  }

  public String bindHost() {
    return listenHost.orElse(self().host());
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A one-node cluster on loopback with default ports: {@code leasehold server --standalone}. */
  public static Builder standalone() {
    return builder()
        .id("n1")
        .peers(List.of(new Peer("n1", "127.0.0.1", DEFAULT_PEER_PORT, DEFAULT_CLIENT_PORT)));
  }

  public static final class Builder {
    private String id;
    private List<Peer> peers = List.of();
    private Path dataDir;
    private String listenHost;
    private String clusterName = DEFAULT_CLUSTER_NAME;
    private Duration electionTimeoutMin = DEFAULT_ELECTION_TIMEOUT_MIN;
    private Duration electionTimeoutMax = DEFAULT_ELECTION_TIMEOUT_MAX;
    private Duration tickInterval = DEFAULT_TICK_INTERVAL;
    private Duration stallThreshold = DEFAULT_STALL_THRESHOLD;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private long snapshotThreshold = DEFAULT_SNAPSHOT_THRESHOLD;
    private long logSegmentSizeBytes = DEFAULT_LOG_SEGMENT_SIZE_BYTES;
    private long logPurgeGap = DEFAULT_LOG_PURGE_GAP;
    private long historyMaxEvents = DEFAULT_HISTORY_MAX_EVENTS;
    private Duration historyMaxAge = DEFAULT_HISTORY_MAX_AGE;
    private int watchQueueLimit = DEFAULT_WATCH_QUEUE_LIMIT;
    private Duration watchProgressInterval = DEFAULT_WATCH_PROGRESS_INTERVAL;
    private int maxPendingWrites = DEFAULT_MAX_PENDING_WRITES;
    private int watchMessageRate = DEFAULT_WATCH_MESSAGE_RATE;
    private Duration watchMaxDelay = DEFAULT_WATCH_MAX_DELAY;
    // Depends on the machine (half its cores), so no constant: WatchHub.defaultSenders() says why.
    private int watchSenders = WatchHub.defaultSenders();
    private Duration grpcKeepaliveInterval = DEFAULT_GRPC_KEEPALIVE_INTERVAL;
    private Duration grpcKeepaliveTimeout = DEFAULT_GRPC_KEEPALIVE_TIMEOUT;
    private boolean join;
    private int leaseGroups = DEFAULT_LEASE_GROUPS;
    private int leaseGroupSize;
    private int movePartBytes = DEFAULT_MOVE_PART_BYTES;
    private Integer metricsPort;
    private boolean metricsPlaintext;
    private boolean ui = true;
    private Path traceWrites;
    private Path faultControl;
    private final Map<String, String> raftProperties = new LinkedHashMap<>();
    private Path tlsCertFile;
    private Path tlsKeyFile;
    private Path tlsCaFile;
    private Path peerTlsCertFile;
    private Path peerTlsKeyFile;
    private Path peerTlsCaFile;
    private boolean clientCertAuth;
    private Path authTokenFile;
    private String initialAdmin;
    private Duration tlsReloadInterval = DEFAULT_TLS_RELOAD_INTERVAL;
    private int maxAcquiresPerSecond = ApiLimits.DEFAULT_ACQUIRES_PER_SECOND;
    private int maxWatchesPerConnection = ApiLimits.DEFAULT_WATCHES_PER_CONNECTION;
    private int maxWatchesPerIdentity = ApiLimits.DEFAULT_WATCHES_PER_IDENTITY;
    private int maxRenewItems = ApiLimits.DEFAULT_RENEW_ITEMS;
    private int maxRequestBytes = ApiLimits.DEFAULT_REQUEST_BYTES;
    private int maxMetadataBytes = ApiLimits.DEFAULT_METADATA_BYTES;

    public Builder id(String id) {
      this.id = id;
      return this;
    }

    public Builder peers(List<Peer> peers) {
      this.peers = new ArrayList<>(peers);
      return this;
    }

    /** Parses a comma-separated list of {@code id=host:peerPort:clientPort}. */
    public Builder peers(String spec) {
      List<Peer> parsed = new ArrayList<>();
      for (String part : spec.split(",")) {
        if (!part.isBlank()) {
          parsed.add(Peer.parse(part.trim()));
        }
      }
      return peers(parsed);
    }

    public Builder dataDir(Path dataDir) {
      this.dataDir = dataDir;
      return this;
    }

    public Builder listenHost(String host) {
      this.listenHost = host;
      return this;
    }

    public Builder clusterName(String name) {
      this.clusterName = name;
      return this;
    }

    public Builder electionTimeout(Duration min, Duration max) {
      this.electionTimeoutMin = min;
      this.electionTimeoutMax = max;
      return this;
    }

    public Builder tickInterval(Duration d) {
      this.tickInterval = d;
      return this;
    }

    public Builder stallThreshold(Duration d) {
      this.stallThreshold = d;
      return this;
    }

    public Builder requestTimeout(Duration d) {
      this.requestTimeout = d;
      return this;
    }

    public Builder snapshotThreshold(long entries) {
      this.snapshotThreshold = entries;
      return this;
    }

    public Builder logSegmentSizeBytes(long bytes) {
      this.logSegmentSizeBytes = bytes;
      return this;
    }

    public Builder logPurgeGap(long entries) {
      this.logPurgeGap = entries;
      return this;
    }

    /** The history keeps at most this many events and none older than {@code maxAge}. */
    public Builder history(long maxEvents, Duration maxAge) {
      this.historyMaxEvents = maxEvents;
      this.historyMaxAge = maxAge;
      return this;
    }

    public Builder watchQueueLimit(int events) {
      this.watchQueueLimit = events;
      return this;
    }

    public Builder watchProgressInterval(Duration d) {
      this.watchProgressInterval = d;
      return this;
    }

    /**
     * Writes this node lets wait for the leader at once; beyond it a write gets RESOURCE_EXHAUSTED.
     */
    public Builder maxPendingWrites(int writes) {
      this.maxPendingWrites = writes;
      return this;
    }

    /**
     * Watch messages per second this node aims to send to all its watchers together (they are
     * batched to fit).
     */
    public Builder watchMessageRate(int messages) {
      this.watchMessageRate = messages;
      return this;
    }

    /** However many watchers share the message rate, none waits longer than this for its events. */
    public Builder watchMaxDelay(Duration d) {
      this.watchMaxDelay = d;
      return this;
    }

    /** Threads that send watch messages (default: half the cores, at least one). */
    public Builder watchSenders(int threads) {
      this.watchSenders = threads;
      return this;
    }

    /**
     * A client connection silent this long gets an HTTP/2 PING (grpc-java raises anything below 10
     * s to 10 s).
     */
    public Builder grpcKeepaliveInterval(Duration d) {
      this.grpcKeepaliveInterval = d;
      return this;
    }

    /** A PING not answered within this closes the connection and cancels its calls. */
    public Builder grpcKeepaliveTimeout(Duration d) {
      this.grpcKeepaliveTimeout = d;
      return this;
    }

    /**
     * Starts the node in join mode: no group of its own, it waits to be added to a running cluster.
     */
    public Builder join(boolean join) {
      this.join = join;
      return this;
    }

    /**
     * Lease groups when the cluster forms: 1 (the default) is the meta group alone; N adds lease
     * groups 1..N beside it.
     */
    public Builder leaseGroups(int groups) {
      this.leaseGroups = groups;
      return this;
    }

    /**
     * How many of the peers each lease group sits on: 0 (the default) for every peer, or an odd
     * number from 3 up to the number of peers.
     */
    public Builder leaseGroupSize(int size) {
      this.leaseGroupSize = size;
      return this;
    }

    /**
     * The most of a moving namespace's state one Raft entry carries (1 KiB to 3 MiB; 1 MiB by
     * default): a larger state is staged in parts. The fault tests make it small so that every move
     * stages.
     */
    public Builder movePartBytes(int bytes) {
      this.movePartBytes = bytes;
      return this;
    }

    /** Serves Prometheus metrics on this port (0 picks a free one); off unless set. */
    public Builder metricsPort(int port) {
      this.metricsPort = port;
      return this;
    }

    /**
     * Plain HTTP on the metrics port even with TLS on the client port (no client certificate needed
     * there).
     */
    public Builder metricsPlaintext(boolean plaintext) {
      this.metricsPlaintext = plaintext;
      return this;
    }

    /** Serves the read-only dashboard at {@code /ui} on the metrics port (default on). */
    public Builder ui(boolean on) {
      this.ui = on;
      return this;
    }

    /**
     * Sets a Ratis property ({@code raft.*}) over the node's own settings: for experts and tests.
     */
    public Builder raftProperty(String key, String value) {
      this.raftProperties.put(key, value);
      return this;
    }

    /** Traces every log entry's steps through the node into this file (a diagnostic). */
    public Builder traceWrites(Path file) {
      this.traceWrites = file;
      return this;
    }

    /** The fault tests hold this node's Raft traffic as this file says (never in production). */
    public Builder faultControl(Path file) {
      this.faultControl = file;
      return this;
    }

    /**
     * This node's certificate (PEM) on the client and metrics ports; with {@link #tlsKeyFile} turns
     * TLS on there.
     */
    public Builder tlsCertFile(Path file) {
      this.tlsCertFile = file;
      return this;
    }

    /** The PKCS#8 PEM private key of {@link #tlsCertFile}. */
    public Builder tlsKeyFile(Path file) {
      this.tlsKeyFile = file;
      return this;
    }

    /** CA certificates (PEM) that verify client certificates on the client and metrics ports. */
    public Builder tlsCaFile(Path file) {
      this.tlsCaFile = file;
      return this;
    }

    /**
     * This node's certificate (PEM) on the Raft port, presented to peers both as server and as
     * client.
     */
    public Builder peerTlsCertFile(Path file) {
      this.peerTlsCertFile = file;
      return this;
    }

    /** The PKCS#8 PEM private key of {@link #peerTlsCertFile}. */
    public Builder peerTlsKeyFile(Path file) {
      this.peerTlsKeyFile = file;
      return this;
    }

    /** CA certificates (PEM) that verify the other members' certificates. */
    public Builder peerTlsCaFile(Path file) {
      this.peerTlsCaFile = file;
      return this;
    }

    /** Clients must present a certificate that {@link #tlsCaFile} verifies. */
    public Builder clientCertAuth(boolean require) {
      this.clientCertAuth = require;
      return this;
    }

    /** Bearer tokens, one {@code token,identity} line each; turns authentication on. */
    public Builder authTokenFile(Path file) {
      this.authTokenFile = file;
      return this;
    }

    /** The identity that administers the cluster until an admin role is granted. */
    public Builder initialAdmin(String identity) {
      this.initialAdmin = identity;
      return this;
    }

    /** How often the TLS files are read again for changes (default 10 s). */
    public Builder tlsReloadInterval(Duration d) {
      this.tlsReloadInterval = d;
      return this;
    }

    /**
     * Acquire and Register calls per second per identity (per remote address without
     * authentication), burst as many.
     */
    public Builder maxAcquiresPerSecond(int calls) {
      this.maxAcquiresPerSecond = calls;
      return this;
    }

    /** Watch streams open at once on one client connection. */
    public Builder maxWatchesPerConnection(int watches) {
      this.maxWatchesPerConnection = watches;
      return this;
    }

    /** Watch streams open at once per identity (per remote address without authentication). */
    public Builder maxWatchesPerIdentity(int watches) {
      this.maxWatchesPerIdentity = watches;
      return this;
    }

    /** Names in one Renew call, at most the replicated limit of 10,000. */
    public Builder maxRenewItems(int items) {
      this.maxRenewItems = items;
      return this;
    }

    /** The largest request message this node reads (gRPC's max inbound message size). */
    public Builder maxRequestBytes(int bytes) {
      this.maxRequestBytes = bytes;
      return this;
    }

    /** The largest request metadata this node reads (gRPC's max inbound metadata size). */
    public Builder maxMetadataBytes(int bytes) {
      this.maxMetadataBytes = bytes;
      return this;
    }

    public NodeConfig build() {
      require(id != null && !id.isBlank(), "id: must be set (e.g. --id n1)");
      require(
          !peers.isEmpty(),
          "peers: must list every member as id=host:peerPort:clientPort (or use --standalone)");
      Set<String> ids = new HashSet<>();
      Set<String> endpoints = new HashSet<>();
      for (Peer p : peers) {
        require(ids.add(p.id()), "peers: id " + p.id() + " appears twice");
        require(
            endpoints.add(p.host() + ":" + p.peerPort()),
            "peers: " + p.host() + ":" + p.peerPort() + " is used twice");
        require(
            endpoints.add(p.host() + ":" + p.clientPort()),
            "peers: " + p.host() + ":" + p.clientPort() + " is used twice");
      }
      require(ids.contains(id), "id: " + id + " is not one of the peers " + ids);
      require(dataDir != null, "data-dir: must be set");
      require(clusterName != null && !clusterName.isBlank(), "cluster-name: must not be empty");
      positive("election-timeout-min", electionTimeoutMin);
      positive("election-timeout-max", electionTimeoutMax);
      require(
          electionTimeoutMax.compareTo(electionTimeoutMin) > 0,
          "election-timeout: max ("
              + electionTimeoutMax.toMillis()
              + "ms) must exceed min ("
              + electionTimeoutMin.toMillis()
              + "ms)");
      // The shortest lease must outlive an election, or a failover alone would leave its holder
      // unable to renew before its TTL runs out (docs/operations.md, "TTLs and timeouts").
      require(
          electionTimeoutMax.compareTo(Limits.MIN_TTL) < 0,
          "election-timeout-max: must be below the minimum lease TTL ("
              + Limits.MIN_TTL.toMillis()
              + "ms), got "
              + electionTimeoutMax.toMillis()
              + "ms");
      positive("tick-interval", tickInterval);
      positive("stall-threshold", stallThreshold);
      positive("request-timeout", requestTimeout);
      require(
          snapshotThreshold > 0, "snapshot-threshold: must be positive, got " + snapshotThreshold);
      require(
          leaseGroups >= 1 && leaseGroups <= MAX_LEASE_GROUPS,
          "lease-groups: must be between 1 and " + MAX_LEASE_GROUPS + ", got " + leaseGroups);
      require(
          leaseGroupSize == 0
              || (leaseGroupSize >= 3
                  && leaseGroupSize % 2 == 1
                  && (join || leaseGroupSize <= peers.size())),
          "lease-group-size: must be 0 (every peer) or an odd number from 3 up to the number of"
              + " peers ("
              + peers.size()
              + "), got "
              + leaseGroupSize);
      require(
          leaseGroupSize == 0 || leaseGroups > 1,
          "lease-group-size: needs --lease-groups above 1, got --lease-groups " + leaseGroups);
      require(
          movePartBytes >= 1 << 10 && movePartBytes <= MAX_MOVE_PART_BYTES,
          "move-part-bytes: must be between 1024 and "
              + MAX_MOVE_PART_BYTES
              + ", got "
              + movePartBytes);
      require(
          logSegmentSizeBytes >= 16 << 10,
          "log-segment-size: must be at least 16 KiB, got " + logSegmentSizeBytes);
      require(logPurgeGap > 0, "log-purge-gap: must be positive, got " + logPurgeGap);
      require(
          historyMaxEvents > 0, "history-max-events: must be positive, got " + historyMaxEvents);
      positive("history-max-age", historyMaxAge);
      require(watchQueueLimit > 0, "watch-queue-limit: must be positive, got " + watchQueueLimit);
      positive("watch-progress-interval", watchProgressInterval);
      require(
          maxPendingWrites > 0, "max-pending-writes: must be positive, got " + maxPendingWrites);
      require(
          watchMessageRate > 0, "watch-message-rate: must be positive, got " + watchMessageRate);
      Objects.requireNonNull(watchMaxDelay, "watch-max-delay");
      // Below 1 ms the hub does not coalesce at all; above the progress interval an idle-looking
      // watcher would get progress messages while its events still wait.
      require(
          watchMaxDelay.toNanos() >= WatchHub.MIN_COALESCE_NANOS
              && watchMaxDelay.compareTo(watchProgressInterval) <= 0,
          "watch-max-delay: must be from 1ms to the watch progress interval ("
              + watchProgressInterval.toMillis()
              + "ms), got "
              + watchMaxDelay.toMillis()
              + "ms");
      require(
          watchSenders > 0 && watchSenders <= 256,
          "watch-senders: must be 1-256, got " + watchSenders);
      positive("grpc-keepalive-interval", grpcKeepaliveInterval);
      positive("grpc-keepalive-timeout", grpcKeepaliveTimeout);
      require(
          metricsPort == null
              || metricsPort == 0
              || peers.stream()
                  .filter(p -> p.id().equals(id))
                  .noneMatch(p -> p.clientPort() == metricsPort || p.peerPort() == metricsPort),
          "metrics-port: " + metricsPort + " is this node's client or peer port");
      require(
          metricsPort == null || (metricsPort >= 0 && metricsPort <= 65535),
          "metrics-port: must be 0-65535, got " + metricsPort);
      raftProperties.forEach(
          (key, value) ->
              require(
                  key.startsWith("raft."),
                  "raft-property: " + key + " is not a Ratis property (they start with raft.)"));
      Optional<TlsFiles> clientTls = clientTls();
      Optional<TlsFiles> peerTls = peerTls();
      positive("tls-reload-interval", tlsReloadInterval);
      if (authTokenFile != null) {
        readable("auth-token-file", authTokenFile);
      }
      if (initialAdmin != null) {
        require(
            clientCertAuth || authTokenFile != null,
            "initial-admin: needs authentication on (--client-cert-auth or --auth-token-file), or it names no one");
        try {
          Validation.holder("initial-admin", initialAdmin);
        } catch (InvalidArgumentException e) {
          throw new IllegalArgumentException(e.getMessage());
        }
      }
      require(
          maxAcquiresPerSecond > 0,
          "max-acquires-per-second: must be positive, got " + maxAcquiresPerSecond);
      require(
          maxWatchesPerConnection > 0,
          "max-watches-per-connection: must be positive, got " + maxWatchesPerConnection);
      require(
          maxWatchesPerIdentity > 0,
          "max-watches-per-identity: must be positive, got " + maxWatchesPerIdentity);
      require(
          maxRenewItems > 0 && maxRenewItems <= Limits.MAX_RENEW_ITEMS,
          "max-renew-items: must be from 1 to "
              + Limits.MAX_RENEW_ITEMS
              + ", got "
              + maxRenewItems);
      require(
          maxRequestBytes >= ApiLimits.MIN_REQUEST_BYTES
              && maxRequestBytes <= ApiLimits.MAX_REQUEST_BYTES,
          "max-request-bytes: must be from "
              + ApiLimits.MIN_REQUEST_BYTES
              + " (1 MiB) to "
              + ApiLimits.MAX_REQUEST_BYTES
              + " (32 MiB), got "
              + maxRequestBytes);
      require(
          maxMetadataBytes >= ApiLimits.MIN_METADATA_BYTES,
          "max-metadata-bytes: must be at least "
              + ApiLimits.MIN_METADATA_BYTES
              + " (1 KiB), got "
              + maxMetadataBytes);
      ApiLimits limits =
          new ApiLimits(
              maxAcquiresPerSecond,
              maxWatchesPerConnection,
              maxWatchesPerIdentity,
              maxRenewItems,
              maxRequestBytes,
              maxMetadataBytes);
      return new NodeConfig(
          id,
          peers,
          dataDir,
          Optional.ofNullable(listenHost),
          clusterName,
          electionTimeoutMin,
          electionTimeoutMax,
          tickInterval,
          stallThreshold,
          requestTimeout,
          snapshotThreshold,
          logSegmentSizeBytes,
          logPurgeGap,
          historyMaxEvents,
          historyMaxAge,
          watchQueueLimit,
          watchProgressInterval,
          maxPendingWrites,
          watchMessageRate,
          watchMaxDelay,
          watchSenders,
          grpcKeepaliveInterval,
          grpcKeepaliveTimeout,
          join,
          leaseGroups,
          leaseGroupSize,
          movePartBytes,
          Optional.ofNullable(metricsPort),
          metricsPlaintext,
          ui,
          Map.copyOf(raftProperties),
          Optional.ofNullable(traceWrites),
          Optional.ofNullable(faultControl),
          clientTls,
          peerTls,
          clientCertAuth,
          tlsReloadInterval,
          Optional.ofNullable(authTokenFile),
          Optional.ofNullable(initialAdmin),
          limits);
    }

    private Optional<TlsFiles> clientTls() {
      require(
          tlsCertFile != null || tlsKeyFile == null,
          "tls-key-file: needs --tls-cert-file (the certificate it belongs to)");
      require(
          tlsKeyFile != null || tlsCertFile == null,
          "tls-cert-file: needs --tls-key-file (the certificate's private key)");
      require(
          tlsCertFile != null || tlsCaFile == null,
          "tls-ca-file: needs --tls-cert-file and --tls-key-file (the client port verifies client certificates only over TLS)");
      require(
          tlsCaFile != null || !clientCertAuth,
          "client-cert-auth: needs --tls-ca-file (the CA that verifies client certificates)");
      if (tlsCertFile == null) {
        return Optional.empty();
      }
      readable("tls-cert-file", tlsCertFile);
      readable("tls-key-file", tlsKeyFile);
      if (tlsCaFile != null) {
        readable("tls-ca-file", tlsCaFile);
      }
      return Optional.of(new TlsFiles(tlsCertFile, tlsKeyFile, Optional.ofNullable(tlsCaFile)));
    }

    // A peer is client and server at once: one-sided TLS would let anyone who reaches the Raft
    // port send appends and votes, so peer TLS is always mutual and needs all three files.
    private Optional<TlsFiles> peerTls() {
      if (peerTlsCertFile == null && peerTlsKeyFile == null && peerTlsCaFile == null) {
        return Optional.empty();
      }
      require(
          peerTlsCertFile != null,
          "peer-tls-cert-file: required with --peer-tls-key-file or --peer-tls-ca-file (peer TLS is mutual)");
      require(
          peerTlsKeyFile != null,
          "peer-tls-key-file: required with --peer-tls-cert-file (the certificate's private key)");
      require(
          peerTlsCaFile != null,
          "peer-tls-ca-file: required with --peer-tls-cert-file (peers verify each other's certificates)");
      readable("peer-tls-cert-file", peerTlsCertFile);
      readable("peer-tls-key-file", peerTlsKeyFile);
      readable("peer-tls-ca-file", peerTlsCaFile);
      return Optional.of(new TlsFiles(peerTlsCertFile, peerTlsKeyFile, Optional.of(peerTlsCaFile)));
    }

    private static void readable(String option, Path file) {
      require(
          Files.isRegularFile(file) && Files.isReadable(file),
          option
              + ": cannot read "
              + file
              + (Files.exists(file) ? " (not a readable file)" : " (no such file)"));
    }

    private static void positive(String option, Duration d) {
      Objects.requireNonNull(d, option);
      require(!d.isNegative() && !d.isZero(), option + ": must be positive, got " + d);
    }

    private static void require(boolean ok, String message) {
      if (!ok) {
        throw new IllegalArgumentException(message);
      }
    }
  }
}
