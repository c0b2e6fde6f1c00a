package io.leasehold.cli;

import io.leasehold.cli.command.AuditCommand;
import io.leasehold.cli.command.AuthCommand;
import io.leasehold.cli.command.BackupCommand;
import io.leasehold.cli.command.BanCommand;
import io.leasehold.cli.command.ClusterCommand;
import io.leasehold.cli.command.CompletionCommand;
import io.leasehold.cli.command.ElectCommand;
import io.leasehold.cli.command.EndpointCommand;
import io.leasehold.cli.command.LeaseCommand;
import io.leasehold.cli.command.LockCommand;
import io.leasehold.cli.command.NamespaceCommand;
import io.leasehold.cli.command.PolicyCommand;
import io.leasehold.cli.command.RestoreCommand;
import io.leasehold.cli.command.RouteCommand;
import io.leasehold.cli.command.ServerCommand;
import io.leasehold.cli.command.ServiceCommand;
import io.leasehold.cli.command.SessionCommand;
import io.leasehold.cli.command.WatchCommand;
import io.leasehold.cli.command.bench.BenchCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.UnmatchedArgumentException;

/** The {@code leasehold} command. */
@Command(
    name = "leasehold",
    mixinStandardHelpOptions = true,
    versionProvider = LeaseholdCommand.Version.class,
    description = {
      "Raft-replicated time-limited leases with fencing tokens.",
      "",
      "Who holds a name, since when, until when, and why did it end:",
      "  leasehold lease get lock/billing-job",
      "  leasehold lease history lock/billing-job",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      " 0:success",
      " 1:operation failed (e.g. conflict, not held)",
      " 2:usage error (bad option or configuration, e.g. TLS options that do not match the nodes')",
      " 3:cluster unreachable (no node answered, or a host name does not resolve)"
    })
public final class LeaseholdCommand implements Runnable {
  public static final int EXIT_OK = 0;
  public static final int EXIT_FAILED = 1;
  public static final int EXIT_USAGE = 2;
  public static final int EXIT_UNREACHABLE = 3;

  /** Where the CLI looks for the cluster when neither --endpoints nor LEASEHOLD_ENDPOINTS says. */
  public static final String DEFAULT_ENDPOINTS = "127.0.0.1:7400";

  /** The subcommands, in the order help lists them; {@link CommandTree} adds them. */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          LeaseCommand.class,
          SessionCommand.class,
          LockCommand.class,
          ElectCommand.class,
          WatchCommand.class,
          ServiceCommand.class,
          RouteCommand.class,
          PolicyCommand.class,
          BanCommand.class,
          ClusterCommand.class,
          NamespaceCommand.class,
          EndpointCommand.class,
          AuthCommand.class,
          AuditCommand.class,
          ServerCommand.class,
          BackupCommand.class,
          RestoreCommand.class,
          BenchCommand.class,
          CompletionCommand.class,
          CommandLine.HelpCommand.class);

  /** grpc-java's loggers' parent (java.util.logging); see {@link #quietGrpcLogs}. */
  private static final Logger GRPC_LOG = Logger.getLogger("io.grpc");

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  // Global options: INHERIT puts them on every subcommand, before or after its name.
  @Option(
      names = "--endpoints",
      scope = ScopeType.INHERIT,
      paramLabel = "HOST:PORT",
      split = ",",
      defaultValue = "${env:LEASEHOLD_ENDPOINTS:-" + DEFAULT_ENDPOINTS + "}",
      description =
          "Client addresses of cluster nodes (also from LEASEHOLD_ENDPOINTS; default: "
              + DEFAULT_ENDPOINTS
              + ").")
  List<String> endpoints = new ArrayList<>();

  @Option(
      names = "--timeout",
      scope = ScopeType.INHERIT,
      converter = DurationConverter.Positive.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description =
          "How long a request may take, retries on other nodes included (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(
      names = {"-o", "--output"},
      scope = ScopeType.INHERIT,
      defaultValue = "table",
      paramLabel = "table|json|wide",
      description =
          "table (default), json (stable; JSON Lines for streams) or wide (more columns).")
  OutputFormat output;

  @Option(
      names = "--cacert",
      scope = ScopeType.INHERIT,
      paramLabel = "FILE",
      defaultValue = "${env:LEASEHOLD_CACERT}",
      description =
          "Talk TLS, trusting the nodes' certificates this CA (PEM) verifies (also from LEASEHOLD_CACERT).")
  String caCert;

  @Option(
      names = "--cert",
      scope = ScopeType.INHERIT,
      paramLabel = "FILE",
      defaultValue = "${env:LEASEHOLD_CERT}",
      description =
          "Client certificate (PEM) for nodes that require one; needs --key and --cacert (also from LEASEHOLD_CERT).")
  String cert;

  @Option(
      names = "--key",
      scope = ScopeType.INHERIT,
      paramLabel = "FILE",
      defaultValue = "${env:LEASEHOLD_KEY}",
      description = "The private key of --cert (PKCS#8 PEM) (also from LEASEHOLD_KEY).")
  String key;

  @Option(
      names = "--bearer-token",
      scope = ScopeType.INHERIT,
      paramLabel = "TOKEN",
      defaultValue = "${env:LEASEHOLD_BEARER_TOKEN}",
      description =
          "A bearer token from the nodes' --auth-token-file, for when no client certificate is used; "
              + "send it only over TLS (also from LEASEHOLD_BEARER_TOKEN).")
  String token;

  @Option(
      names = {"-v", "--verbose"},
      scope = ScopeType.INHERIT,
      description = "Stack traces with errors, and the client's log.")
  boolean verbose;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a command is required (see leasehold --help)");
  }

  public List<String> endpoints() {
    return endpoints;
  }

  /**
   * TLS to the cluster from --cacert, --cert and --key (plaintext without them).
   *
   * @throws CommandLine.ParameterException (exit code 2) naming the option, for a wrong combination
   *     or an unreadable file
   */
  public ClientTls tls() {
    try {
      return ClientTls.of(caCert, cert, key);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  /** The bearer token from --bearer-token or LEASEHOLD_BEARER_TOKEN, if any. */
  public Optional<String> token() {
    return token == null || token.isBlank() ? Optional.empty() : Optional.of(token.strip());
  }

  public Duration timeout() {
    return timeout;
  }

  public OutputFormat output() {
    return output;
  }

  public boolean verbose() {
    return verbose;
  }

  /** The whole command tree (help, completion, tests). */
  public static CommandLine commandLine() {
    return commandLine(new String[0]);
  }

  /**
   * The command line for these arguments: at each level only the subcommand they name (see {@link
   * CommandTree}); {@code --version} alone needs none.
   */
  public static CommandLine commandLine(String... args) {
    CommandLine cl = new CommandLine(new LeaseholdCommand());
    boolean versionOnly = args.length == 1 && (args[0].equals("--version") || args[0].equals("-V"));
    if (!versionOnly) {
      CommandTree.addSubcommands(cl, LeaseholdCommand.class, args, 0);
    }
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.setParameterExceptionHandler(Errors::usage);
    cl.setExecutionExceptionHandler(Errors::execution);
    cl.setExecutionStrategy(LeaseholdCommand::executeMatched);
    return cl;
  }

  /**
   * picocli lets arguments that match nothing through when --help or --version follows them ({@code
   * leasehold session --help} printed the root help and exited 0); like any other unmatched
   * argument they are a usage error, reported by the parameter exception handler.
   */
  private static int executeMatched(ParseResult parsed) {
    boolean verbose =
        parsed.commandSpec().userObject() instanceof LeaseholdCommand l && l.verbose();
    boolean server =
        parsed.hasSubcommand()
            && parsed.subcommand().commandSpec().userObject() instanceof ServerCommand;
    if (!server) {
      quietGrpcLogs(!verbose);
    }
    for (ParseResult level = parsed; level != null; level = level.subcommand()) {
      CommandLine cl = level.commandSpec().commandLine();
      boolean takesUnmatched =
          cl.isUnmatchedArgumentsAllowed()
              || !level.commandSpec().unmatchedArgsBindings().isEmpty();
      if (!level.unmatched().isEmpty() && !takesUnmatched) {
        throw new UnmatchedArgumentException(cl, level.unmatched());
      }
    }
    return new CommandLine.RunLast().execute(parsed);
  }

  public static void main(String[] args) {
    commonPoolOfAtLeastTwo();
    quietClientLogs(args);
    System.exit(commandLine(args).execute(args));
  }

  /**
   * The client's INFO and WARN lines would break "one line on stderr"; they show with --verbose.
   * Must run before the first logger is made (slf4j-simple reads its configuration once).
   */
  static void quietClientLogs(String[] args) {
    boolean verbose = Arrays.stream(args).anyMatch(a -> a.equals("-v") || a.equals("--verbose"));
    // The SDK's, and gRPC's shaded Netty's, which logs through slf4j when it finds it (a node,
    // 'leasehold server', keeps gRPC's).
    boolean server = Arrays.asList(args).contains("server");
    for (String logger :
        server
            ? new String[] {"io.leasehold.client"}
            : new String[] {"io.leasehold.client", "io.grpc"}) {
      String key = "org.slf4j.simpleLogger.log." + logger;
      if (System.getProperty(key) == null) {
        System.setProperty(key, verbose ? "info" : "off");
      }
    }
  }

  /**
   * grpc-java logs through java.util.logging, to stderr: a host name that does not resolve printed
   * a WARNING with a stack trace for every attempt to resolve it, before the one line that says
   * what is wrong. Those show with --verbose only (a node, 'leasehold server', keeps them). The
   * logger is held here: the JDK keeps loggers weakly, and a collected one would forget its level.
   */
  static void quietGrpcLogs(boolean quiet) {
    if (quiet) {
      GRPC_LOG.setLevel(Level.OFF);
    } else if (GRPC_LOG.getLevel() == Level.OFF) {
      GRPC_LOG.setLevel(null);
    }
  }

  /**
   * On one or two cores the JDK sizes the common ForkJoinPool at one thread and then runs every
   * default-executor {@code CompletableFuture.*Async} stage (Ratis has many) on a new thread of its
   * own. Two workers avoid that thread-per-task mode. Must run before the pool is first used; an
   * explicit {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism} wins.
   */
  static void commonPoolOfAtLeastTwo() {
    String key = "java.util.concurrent.ForkJoinPool.common.parallelism";
    if (System.getProperty(key) == null && Runtime.getRuntime().availableProcessors() <= 2) {
      System.setProperty(key, "2");
    }
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = LeaseholdCommand.class.getPackage().getImplementationVersion();
      return new String[] {"leasehold " + (v == null ? "(development build)" : v)};
    }
  }
}
