package io.leasehold.server.auth;

import io.leasehold.proto.v1.AuditRecord;
import io.leasehold.proto.v1.BootstrapAdmin;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.server.NodeConfig;
import io.leasehold.statemachine.core.AccessView;
import io.leasehold.statemachine.core.LogFormat;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's authentication and authorization: the token file, the authorization point, the initial
 * admin's grant (proposed by the leader once the log format carries auth), and the audit records of
 * what is not itself a log command (cluster actions, refused admin calls).
 */
public final class NodeAuth implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeAuth.class);

  /**
   * Refused admin calls recorded in the audit history per second, at most: more are only logged.
   */
  static final int DENIALS_AUDITED_PER_SECOND = 10;

  private final boolean enabled;
  private final String initialAdmin;
  private final Supplier<AccessView> access;
  private final IntSupplier logFormat;
  private final BooleanSupplier isLeader;
  private final Function<LogCommand, CompletableFuture<LogReply>> propose;
  private final Authorizer authorizer;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean bootstrapping = new AtomicBoolean();
  private long denialSecond;
  private int denialsThisSecond;

  /**
   * @param propose proposes a command to the leader (the node's replicated write path)
   * @param proposeHere proposes a command as this node, which must lead
   * @param caughtUp completes once this node has applied everything committed when it was called
   */
  public NodeAuth(
      NodeConfig config,
      Supplier<AccessView> access,
      IntSupplier logFormat,
      BooleanSupplier isLeader,
      Function<LogCommand, CompletableFuture<LogReply>> propose,
      Function<LogCommand, CompletableFuture<LogReply>> proposeHere,
      Supplier<CompletableFuture<?>> caughtUp)
      throws IOException {
    this.enabled = config.authenticationEnabled();
    this.access = access;
    this.logFormat = logFormat;
    this.isLeader = isLeader;
    this.propose = propose;
    Optional<TokenFile> tokens =
        config.authTokenFile().isEmpty()
            ? Optional.empty()
            : Optional.of(TokenFile.load(config.authTokenFile().get(), config.tlsReloadInterval()));
    this.initialAdmin =
        config.initialAdmin().orElse(tokens.map(TokenFile::firstIdentity).orElse(""));
    this.authorizer =
        new Authorizer(
            enabled, new Authenticator(tokens), access, () -> initialAdmin, this::denied, caughtUp);
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-auth-" + config.id());
              t.setDaemon(true);
              return t;
            });
    if (enabled && !initialAdmin.isEmpty()) {
      timer.scheduleWithFixedDelay(() -> bootstrap(proposeHere), 1, 1, TimeUnit.SECONDS);
    }
  }

  public Authorizer authorizer() {
    return authorizer;
  }

  public boolean enabled() {
    return enabled;
  }

  public String initialAdmin() {
    return initialAdmin;
  }

  /** The roles and grants in force on this node. */
  public AccessView access() {
    return access.get();
  }

  /** The line a node logs at start about who may call it. */
  public void logStart(String nodeId, boolean clientTls) {
    if (!enabled) {
      LOG.warn(
          "node {} is open: requests carry no identity, any client that reaches the client port may act as any holder "
              + "and as an admin (turn on --client-cert-auth or --auth-token-file; docs/operations.md, \"Security\")",
          nodeId);
    } else {
      LOG.info(
          "node {} authenticates every request ({}); initial admin: {}",
          nodeId,
          clientTls
              ? "client certificates or bearer tokens"
              : "bearer tokens over plaintext: use TLS in production",
          initialAdmin.isEmpty() ? "none" : initialAdmin);
    }
  }

  /** Records a cluster action (membership, snapshot, backup, leadership) in the audit history. */
  public void record(Caller caller, String action, String target, String outcome, String detail) {
    if (logFormat.getAsInt() < LogFormat.AUTH) {
      LOG.info(
          "audit (not replicated: log format {}): {} {} {} by {}: {}",
          logFormat.getAsInt(),
          action,
          target,
          detail,
          caller.identity(),
          outcome);
      return;
    }
    LogCommand c =
        LogCommand.newBuilder()
            .setCaller(caller.identity())
            .setAuditRecord(
                AuditRecord.newBuilder()
                    .setAction(action)
                    .setTarget(target)
                    .setOutcome(outcome)
                    .setDetail(detail))
            .build();
    propose
        .apply(c)
        .whenComplete(
            (r, e) -> {
              if (e != null) {
                LOG.warn(
                    "audit record of {} {} by {} not written: {}",
                    action,
                    target,
                    caller.identity(),
                    e.toString());
              }
            });
  }

  private void denied(Caller caller, String method, String reason) {
    long second = System.nanoTime() / 1_000_000_000L;
    boolean audited;
    synchronized (this) {
      if (second != denialSecond) {
        denialSecond = second;
        denialsThisSecond = 0;
      }
      audited = ++denialsThisSecond <= DENIALS_AUDITED_PER_SECOND;
    }
    String action = method.substring(method.lastIndexOf('/') + 1);
    if (audited) {
      record(caller, action, "", "denied: " + reason, method);
    } else {
      LOG.warn(
          "refused {} to {} ({}); not in the audit history: more than {} refusals this second",
          method,
          caller.identity(),
          reason,
          DENIALS_AUDITED_PER_SECOND);
    }
  }

  private void bootstrap(Function<LogCommand, CompletableFuture<LogReply>> proposeHere) {
    try {
      if (!isLeader.getAsBoolean()
          || logFormat.getAsInt() < LogFormat.AUTH
          || access.get().hasUnrestrictedAdmin()
          || !bootstrapping.compareAndSet(false, true)) {
        return;
      }
      proposeHere
          .apply(
              LogCommand.newBuilder()
                  .setBootstrapAdmin(BootstrapAdmin.newBuilder().setIdentity(initialAdmin))
                  .build())
          .whenComplete(
              (r, e) -> {
                bootstrapping.set(false);
                if (e == null) {
                  LOG.info("initial admin {} granted the admin role", initialAdmin);
                }
              });
    } catch (RuntimeException e) {
      bootstrapping.set(false);
      LOG.warn("granting the initial admin failed; trying again: {}", e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
