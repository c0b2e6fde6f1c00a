package io.leasehold.cli.command;

import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.leasehold.cli.DurationConverter;
import io.leasehold.server.NodeConfig;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * The {@code server} options' defaults are NodeConfig's: in the help text and in the node they
 * configure.
 */
class ServerDefaultsTest {
  /** What each option with a default sets, read from a NodeConfig. */
  private static final Map<String, Function<NodeConfig, Object>> SETS =
      Map.ofEntries(
          entry("--client-port", c -> c.self().clientPort()),
          entry("--peer-port", c -> c.self().peerPort()),
          entry("--cluster-name", NodeConfig::clusterName),
          entry("--lease-groups", NodeConfig::leaseGroups),
          entry("--lease-group-size", NodeConfig::leaseGroupSize),
          entry("--election-timeout-min", NodeConfig::electionTimeoutMin),
          entry("--election-timeout-max", NodeConfig::electionTimeoutMax),
          entry("--tick-interval", NodeConfig::tickInterval),
          entry("--stall-threshold", NodeConfig::stallThreshold),
          entry("--request-timeout", NodeConfig::requestTimeout),
          entry("--snapshot-threshold", NodeConfig::snapshotThreshold),
          entry("--history-max-events", NodeConfig::historyMaxEvents),
          entry("--history-max-age", NodeConfig::historyMaxAge),
          entry("--watch-queue-limit", NodeConfig::watchQueueLimit),
          entry("--watch-progress-interval", NodeConfig::watchProgressInterval),
          entry("--watch-message-rate", NodeConfig::watchMessageRate),
          entry("--watch-max-delay", NodeConfig::watchMaxDelay),
          entry("--max-pending-writes", NodeConfig::maxPendingWrites),
          entry("--max-acquires-per-second", c -> c.limits().acquiresPerSecond()),
          entry("--max-watches-per-connection", c -> c.limits().watchesPerConnection()),
          entry("--max-watches-per-identity", c -> c.limits().watchesPerIdentity()),
          entry("--max-renew-items", c -> c.limits().renewItems()),
          entry("--max-request-bytes", c -> c.limits().requestBytes()),
          entry("--max-metadata-bytes", c -> c.limits().metadataBytes()),
          entry("--grpc-keepalive-interval", NodeConfig::grpcKeepaliveInterval),
          entry("--grpc-keepalive-timeout", NodeConfig::grpcKeepaliveTimeout));

  // An option's line in the help starts at most six columns in; its description's further lines far
  // beyond.
  private static final Pattern OPTION_LINE = Pattern.compile("^ {0,6}(?:-\\w, )?(--[a-z][a-z-]*)");
  private static final Pattern SHOWN_DEFAULT = Pattern.compile("\\(default: ([^;)]+)");

  /** NodeConfig's builder with nothing set but what a standalone node must have. */
  private static NodeConfig builderDefaults() {
    return NodeConfig.standalone().dataDir(Path.of("leasehold-data", "n1")).build();
  }

  @Test
  void theHelpShowsNodeConfigsDefaultForEveryOptionThatHasOne() {
    CommandLine cl = new CommandLine(new ServerCommand());
    String help = cl.getUsageMessage(Ansi.OFF);
    Map<String, String> shown = shownDefaults(help);
    NodeConfig defaults = builderDefaults();
    for (String name : SETS.keySet()) {
      OptionSpec option = cl.getCommandSpec().findOption(name);
      assertNotNull(shown.get(name), () -> name + " shows its default in:\n" + help);
      assertEquals(
          SETS.get(name).apply(defaults),
          value(option, shown.get(name)),
          () -> name + " in:\n" + help);
    }
  }

  @Test
  void everyOptionThatShowsItsDefaultIsChecked() {
    TreeSet<String> showing = new TreeSet<>();
    for (Field f : ServerCommand.class.getDeclaredFields()) {
      Option o = f.getAnnotation(Option.class);
      if (o != null && String.join(" ", o.description()).contains("${DEFAULT-VALUE}")) {
        showing.add(o.names()[o.names().length - 1]);
      }
    }
    assertEquals(new TreeSet<>(SETS.keySet()), showing);
  }

  @Test
  void aNodeGivenNoOptionsIsConfiguredAsNodeConfigsBuilderDefaults() {
    CommandLine cl = new CommandLine(new ServerCommand());
    cl.parseArgs("--standalone", "--metrics-port", "off");
    assertEquals(builderDefaults(), ((ServerCommand) cl.getCommand()).build());
  }

  @Test
  void durationsAreShownAsTheyAreWritten() {
    for (String text : new String[] {"2ms", "600ms", "1s", "90s", "5m", "1h", "0ms"}) {
      assertEquals(text, DurationConverter.format(DurationConverter.parse(text)));
    }
    assertEquals("1500ms", DurationConverter.format(Duration.ofMillis(1500)));
  }

  /** Option name to the text after "(default:" in its description, its wrapped lines joined. */
  private static Map<String, String> shownDefaults(String help) {
    Map<String, StringBuilder> blocks = new HashMap<>();
    StringBuilder current = null;
    for (String line : help.lines().toList()) {
      Matcher m = OPTION_LINE.matcher(line);
      if (m.find()) {
        current = blocks.computeIfAbsent(m.group(1), k -> new StringBuilder());
        current.append(line.substring(m.end()));
      } else if (current != null && line.startsWith(" ".repeat(20))) {
        current.append(' ').append(line.strip());
      } else {
        current = null;
      }
    }
    Map<String, String> shown = new HashMap<>();
    blocks.forEach(
        (name, text) -> {
          Matcher m = SHOWN_DEFAULT.matcher(text.toString().replaceAll("\\s+", " "));
          if (m.find()) {
            shown.put(name, m.group(1).strip());
          }
        });
    return shown;
  }

  private static Object value(OptionSpec option, String text) {
    Class<?> type = option.type();
    if (type == Duration.class) {
      return DurationConverter.parse(text);
    } else if (type == int.class) {
      return Integer.valueOf(text);
    } else if (type == long.class) {
      return Long.valueOf(text);
    }
    return text;
  }
}
