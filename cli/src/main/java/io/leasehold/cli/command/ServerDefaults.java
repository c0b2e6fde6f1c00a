package io.leasehold.cli.command;

import io.leasehold.cli.DurationConverter;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.NodeConfig.ApiLimits;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The {@code server} options' defaults, taken from {@link NodeConfig} so that the node, its builder
 * and the help text ({@code ${DEFAULT-VALUE}}) cannot disagree. An option not listed here has no
 * default, or one from its annotation (an environment variable).
 */
public final class ServerDefaults implements IDefaultValueProvider {
  private static final Map<String, String> BY_OPTION =
      Map.ofEntries(
          Map.entry("--client-port", text(NodeConfig.DEFAULT_CLIENT_PORT)),
          Map.entry("--peer-port", text(NodeConfig.DEFAULT_PEER_PORT)),
          Map.entry("--cluster-name", NodeConfig.DEFAULT_CLUSTER_NAME),
          Map.entry("--election-timeout-min", text(NodeConfig.DEFAULT_ELECTION_TIMEOUT_MIN)),
          Map.entry("--election-timeout-max", text(NodeConfig.DEFAULT_ELECTION_TIMEOUT_MAX)),
          Map.entry("--tick-interval", text(NodeConfig.DEFAULT_TICK_INTERVAL)),
          Map.entry("--stall-threshold", text(NodeConfig.DEFAULT_STALL_THRESHOLD)),
          Map.entry("--request-timeout", text(NodeConfig.DEFAULT_REQUEST_TIMEOUT)),
          Map.entry("--snapshot-threshold", text(NodeConfig.DEFAULT_SNAPSHOT_THRESHOLD)),
          Map.entry("--history-max-events", text(NodeConfig.DEFAULT_HISTORY_MAX_EVENTS)),
          Map.entry("--history-max-age", text(NodeConfig.DEFAULT_HISTORY_MAX_AGE)),
          Map.entry("--watch-queue-limit", text(NodeConfig.DEFAULT_WATCH_QUEUE_LIMIT)),
          Map.entry("--watch-progress-interval", text(NodeConfig.DEFAULT_WATCH_PROGRESS_INTERVAL)),
          Map.entry("--watch-message-rate", text(NodeConfig.DEFAULT_WATCH_MESSAGE_RATE)),
          Map.entry("--watch-max-delay", text(NodeConfig.DEFAULT_WATCH_MAX_DELAY)),
          Map.entry("--max-pending-writes", text(NodeConfig.DEFAULT_MAX_PENDING_WRITES)),
          Map.entry("--max-acquires-per-second", text(ApiLimits.DEFAULT_ACQUIRES_PER_SECOND)),
          Map.entry("--max-watches-per-connection", text(ApiLimits.DEFAULT_WATCHES_PER_CONNECTION)),
          Map.entry("--max-watches-per-identity", text(ApiLimits.DEFAULT_WATCHES_PER_IDENTITY)),
          Map.entry("--max-renew-items", text(ApiLimits.DEFAULT_RENEW_ITEMS)),
          Map.entry("--max-request-bytes", text(ApiLimits.DEFAULT_REQUEST_BYTES)),
          Map.entry("--max-metadata-bytes", text(ApiLimits.DEFAULT_METADATA_BYTES)),
          Map.entry("--grpc-keepalive-interval", text(NodeConfig.DEFAULT_GRPC_KEEPALIVE_INTERVAL)),
          Map.entry("--grpc-keepalive-timeout", text(NodeConfig.DEFAULT_GRPC_KEEPALIVE_TIMEOUT)));

  @Override
  public String defaultValue(ArgSpec arg) {
    return arg instanceof OptionSpec option ? BY_OPTION.get(option.longestName()) : null;
  }

  private static String text(long number) {
    return Long.toString(number);
  }

  private static String text(Duration d) {
    return DurationConverter.format(d);
  }
}
