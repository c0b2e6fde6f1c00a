package io.leasehold.cli;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.ConnectionFailedException;
import io.leasehold.client.InvalidRequestException;
import io.leasehold.client.LeaseholdException;
import java.io.PrintWriter;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine;

/**
 * Every failure becomes one line on stderr, {@code leasehold <command>: <problem>}, and the exit
 * code that goes with it; the stack trace follows only with --verbose.
 */
final class Errors {
  private Errors() {}

  /** Bad usage (unknown command or option, bad value, missing option): exit code 2. */
  static int usage(CommandLine.ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    String message = e.getMessage();
    if (e instanceof CommandLine.UnmatchedArgumentException u
        && !cl.getSubcommands().isEmpty()
        && !u.getUnmatched().isEmpty()
        && !u.getUnmatched().get(0).startsWith("-")) {
      message = "unknown command '" + u.getUnmatched().get(0) + "'";
      List<String> suggestions = u.getSuggestions();
      message +=
          suggestions.isEmpty()
              ? " (commands: " + String.join(", ", visibleCommands(cl)) + ")"
              : "; did you mean " + String.join(" or ", suggestions) + "?";
    } else if (e instanceof CommandLine.UnmatchedArgumentException u
        && !u.getSuggestions().isEmpty()) {
      message += "; did you mean " + String.join(" or ", u.getSuggestions()) + "?";
    }
    print(
        cl,
        message + " (see '" + cl.getCommandSpec().qualifiedName() + " --help')",
        verbose(cl) ? e : null);
    return LeaseholdCommand.EXIT_USAGE;
  }

  /** A failure while a command ran: its exit code by kind. */
  static int execution(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
    int code;
    String message;
    if (e instanceof CliFailure f) {
      code = f.exitCode();
      message = f.getMessage();
    } else if (e instanceof ConnectionFailedException f) {
      // A setting that does not match the nodes' is a configuration error; a name may resolve
      // later.
      code = f.reason().mayPass() ? LeaseholdCommand.EXIT_UNREACHABLE : LeaseholdCommand.EXIT_USAGE;
      message = connectionFailed(f, root(cl));
    } else if (e instanceof ClusterUnavailableException u) {
      code = LeaseholdCommand.EXIT_UNREACHABLE;
      message =
          "cluster unreachable at "
              + String.join(",", root(cl).endpoints())
              + ": no node answered within "
              + Human.duration(root(cl).timeout())
              + lastError(u);
    } else if (e instanceof InvalidRequestException || e instanceof IllegalArgumentException) {
      code = LeaseholdCommand.EXIT_USAGE;
      message = e.getMessage();
    } else if (e instanceof LeaseholdException) {
      code = LeaseholdCommand.EXIT_FAILED;
      message = e.getMessage();
    } else {
      code = LeaseholdCommand.EXIT_FAILED;
      message = e.toString();
    }
    print(cl, message, verbose(cl) ? e : null);
    return code;
  }

  private static void print(CommandLine cl, String message, Throwable trace) {
    PrintWriter err = cl.getErr();
    String line =
        message == null
            ? "failed"
            : message.lines().map(String::strip).collect(Collectors.joining(" "));
    err.println(cl.getCommandSpec().qualifiedName() + ": " + line);
    if (trace != null) {
      trace.printStackTrace(err);
    }
    err.flush();
  }

  private static String lastError(ClusterUnavailableException u) {
    if (u.getCause() instanceof StatusRuntimeException s) {
      Status status = s.getStatus();
      String description = status.getDescription() == null ? "" : ": " + status.getDescription();
      // gRPC's "io exception" says nothing by itself; what it wraps does ("Connection refused").
      Throwable cause = status.getCause();
      if (cause != null
          && cause.getMessage() != null
          && !description.contains(cause.getMessage())) {
        description +=
            " (" + cause.getMessage().replaceFirst("^\\w+\\(\\.\\.\\) failed: ", "") + ")";
      }
      return " (last error " + status.getCode() + description + ")";
    }
    return u.getMessage() == null ? "" : " (" + u.getMessage() + ")";
  }

  /**
   * What a connection that could not be set up means for the CLI's options, and what to change: one
   * line, naming the endpoint and the option or file.
   */
  static String connectionFailed(ConnectionFailedException f, LeaseholdCommand root) {
    ClientTls tls = root.tls();
    String at = f.endpoint();
    String cacert = "--cacert" + tls.caCert().map(p -> " " + p).orElse("");
    String detail = f.detail().isEmpty() ? "" : " (" + f.detail() + ")";
    String message =
        switch (f.reason()) {
          case UNKNOWN_HOST ->
              "unknown host "
                  + host(at)
                  + " in --endpoints "
                  + at
                  + ": the name does not resolve; check its spelling (and the DNS, if it should resolve)";
          case TLS_REQUIRED ->
              at
                  + " speaks TLS and this client plaintext: give --cacert FILE, the CA that signed the nodes' "
                  + "certificates (with --cert and --key where the nodes require client certificates)";
          case NOT_TLS ->
              at
                  + " does not speak TLS: drop --cacert, --cert and --key for a node without TLS, "
                  + "or check that the port is a node's client port";
          case UNTRUSTED_CERTIFICATE ->
              at
                  + "'s certificate is not signed by the CA in "
                  + cacert
                  + ": give --cacert the CA that signed the nodes' certificates";
          case CERTIFICATE_EXPIRED ->
              at
                  + "'s certificate has expired or is not valid yet"
                  + detail
                  + ": the node needs a current certificate (or check this machine's clock)";
          case CERTIFICATE_NAME_MISMATCH ->
              at
                  + "'s certificate does not name "
                  + host(at)
                  + detail
                  + ": give --endpoints a name or address the certificate holds, or reissue it with this one";
          case CLIENT_CERTIFICATE_REQUIRED ->
              at
                  + " requires a client certificate: give --cert and --key "
                  + "(a certificate signed by the CA the nodes trust, with its private key)";
          case CLIENT_CERTIFICATE_REJECTED ->
              at
                  + " refused the client certificate --cert"
                  + tls.cert().map(p -> " " + p).orElse("")
                  + detail
                  + ": it must be current and signed by the CA the nodes trust";
          case TLS_HANDSHAKE_FAILED ->
              "the TLS handshake with "
                  + at
                  + " failed"
                  + detail
                  + ": check --cacert, --cert and --key "
                  + "against the nodes' TLS settings"
                  + (tls.cert().isEmpty()
                      ? " (a node that requires client certificates needs --cert and --key)"
                      : "");
        };
    List<String> others =
        f.failures().entrySet().stream()
            .filter(x -> !x.getKey().equals(at))
            .map(x -> x.getKey() + (x.getValue() == f.reason() ? "" : " (" + x.getValue() + ")"))
            .toList();
    return others.isEmpty() ? message : message + "; likewise " + String.join(", ", others);
  }

  /** The host of {@code host:port} or {@code [v6]:port}. */
  private static String host(String endpoint) {
    int colon = endpoint.lastIndexOf(':');
    String host = colon > 0 ? endpoint.substring(0, colon) : endpoint;
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  private static List<String> visibleCommands(CommandLine cl) {
    return cl.getSubcommands().values().stream()
        .filter(c -> !c.getCommandSpec().usageMessage().hidden())
        .map(CommandLine::getCommandName)
        .distinct()
        .toList();
  }

  private static LeaseholdCommand root(CommandLine cl) {
    return (LeaseholdCommand) cl.getCommandSpec().root().userObject();
  }

  private static boolean verbose(CommandLine cl) {
    return cl.getCommandSpec().root().userObject() instanceof LeaseholdCommand l && l.verbose();
  }
}
