package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client whose transport does not match the node's, or a host that does not resolve: one line
 * that names the cause and the option that fixes it, at once rather than after --timeout, against
 * real nodes (one with mutual TLS, one plaintext).
 */
class ConnectionErrorsTest {
  /**
   * Far more than any failure here may take: a command that used it up retried instead of failing
   * fast.
   */
  static final String TIMEOUT = "60s";

  static final Duration FAST = Duration.ofSeconds(30);

  @TempDir static Path dir;
  static Path certs;
  static TestCluster tls;
  static TestCluster plain;

  @BeforeAll
  static void start() throws Exception {
    certs = Files.createDirectories(dir.resolve("certs"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    TestCerts.Authority other = TestCerts.authority(certs, "other");
    TestCerts.Identity n1 = TestCerts.node(certs, ca, "n1");
    TestCerts.node(certs, ca, "admin");
    TestCerts.node(certs, other, "stranger");
    tls = TestCluster.start(1, dir.resolve("tls"), b -> TestCerts.mutualTls(b, n1, ca, "admin"));
    plain = TestCluster.start(1, dir.resolve("plain"));
  }

  @AfterAll
  static void stop() {
    if (tls != null) {
      tls.close();
    }
    if (plain != null) {
      plain.close();
    }
  }

  static String[] args(TestCluster cluster, String... args) {
    List<String> all =
        new ArrayList<>(List.of("--endpoints", Cli.endpoints(cluster), "--timeout", TIMEOUT));
    all.addAll(List.of(args));
    return all.toArray(String[]::new);
  }

  static String file(String name) {
    return certs.resolve(name).toString();
  }

  /** Runs the command and checks that it failed well before its timeout. */
  static Cli.Run fast(String... args) {
    long start = System.nanoTime();
    Cli.Run r = run(args);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertTrue(
        took.compareTo(FAST) < 0,
        "failed at once, not after retrying for --timeout; took " + took + ": " + r);
    return r;
  }

  @Test
  void withoutAClientCertificateTheNodeSaysItRequiresOne() {
    String at = Cli.endpoints(tls);
    fast(args(tls, "--cacert", file("ca.pem"), "lease", "get", "x/y"))
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "leasehold lease get: " + at + " requires a client certificate: give --cert and --key");
  }

  @Test
  void aClientCertificateOfAnotherCaIsRefusedNamingTheFile() {
    String at = Cli.endpoints(tls);
    fast(args(
            tls,
            "--cacert",
            file("ca.pem"),
            "--cert",
            file("stranger.pem"),
            "--key",
            file("stranger-key.pem"),
            "lease",
            "get",
            "x/y"))
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            at + " refused the client certificate --cert " + file("stranger.pem"));
  }

  @Test
  void plaintextToATlsPortSaysThePortSpeaksTls() {
    String at = Cli.endpoints(tls);
    fast(args(tls, "lease", "get", "x/y"))
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            at + " speaks TLS and this client plaintext: give --cacert FILE");
  }

  @Test
  void tlsToAPlaintextPortSaysThePortDoesNotSpeakTls() {
    String at = Cli.endpoints(plain);
    fast(args(plain, "--cacert", file("ca.pem"), "lease", "get", "x/y"))
        .failed(LeaseholdCommand.EXIT_USAGE, at + " does not speak TLS: drop --cacert");
  }

  @Test
  void theWrongCaSaysTheNodesCertificateIsNotSignedByItNamingTheFile() {
    String at = Cli.endpoints(tls);
    fast(args(
            tls,
            "--cacert",
            file("other.pem"),
            "--cert",
            file("admin.pem"),
            "--key",
            file("admin-key.pem"),
            "lease",
            "get",
            "x/y"))
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            at + "'s certificate is not signed by the CA in --cacert " + file("other.pem"));
  }

  @Test
  void everyEndpointFailingTheSameWayIsOneLineNamingThemAll() {
    String at = Cli.endpoints(tls);
    String again = at.replace("127.0.0.1", "localhost");
    String err =
        fast("--endpoints", at + "," + again, "--timeout", TIMEOUT, "lease", "get", "x/y")
            .failed(LeaseholdCommand.EXIT_USAGE, " speaks TLS and this client plaintext")
            .err();
    // Which one is named first depends on which the client tried first.
    assertTrue(
        err.contains(at + " speaks TLS") && err.contains("likewise " + again)
            || err.contains(again + " speaks TLS") && err.contains("likewise " + at),
        err);
  }

  @Test
  void aHostThatDoesNotResolveIsOneLineNamingItAndNoGrpcWarnings() {
    List<LogRecord> logged = new ArrayList<>();
    Logger grpc = Logger.getLogger("io.grpc");
    Handler handler =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
              synchronized (logged) {
                logged.add(record);
              }
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    grpc.addHandler(handler);
    try {
      Cli.Run r =
          fast(
                  "--endpoints",
                  "nosuchhost.invalid:7400",
                  "--timeout",
                  TIMEOUT,
                  "lease",
                  "get",
                  "x/y")
              .failed(
                  LeaseholdCommand.EXIT_UNREACHABLE,
                  "leasehold lease get: unknown host nosuchhost.invalid in --endpoints nosuchhost.invalid:7400");
      assertFalse(r.err().contains("Exception"), r.err());
      synchronized (logged) {
        assertEquals(
            List.of(),
            logged.stream().map(LogRecord::getMessage).toList(),
            "gRPC logged nothing to stderr");
      }
      // --verbose lets them through (and adds the stack trace).
      Cli.Run verbose =
          run(
              "--endpoints",
              "nosuchhost.invalid:7400",
              "--timeout",
              TIMEOUT,
              "-v",
              "lease",
              "get",
              "x/y");
      assertEquals(LeaseholdCommand.EXIT_UNREACHABLE, verbose.exit(), verbose::toString);
      assertTrue(verbose.err().contains("\tat "), verbose.err());
      synchronized (logged) {
        assertFalse(logged.isEmpty(), "with --verbose, gRPC's own warning about the name shows");
      }
    } finally {
      grpc.removeHandler(handler);
      LeaseholdCommand.quietGrpcLogs(false);
    }
  }

  @Test
  void oneEndpointThatCannotBeConnectedToFallsThroughToTheOthers() {
    String good = Cli.endpoints(plain);
    run("--endpoints", "nosuchhost.invalid:7400," + good, "--timeout", TIMEOUT, "lease", "list")
        .ok();
    run("--endpoints", Cli.endpoints(tls) + "," + good, "--timeout", TIMEOUT, "lease", "list").ok();
  }

  @Test
  void backupWhichOpensItsOwnChannelsSaysTheSame() {
    String at = Cli.endpoints(tls);
    fast("--endpoints", at, "backup", dir.resolve("backup").toString())
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "leasehold backup: "
                + at
                + " speaks TLS and this client plaintext: give --cacert FILE");
    fast("--endpoints", at, "--cacert", file("ca.pem"), "backup", dir.resolve("backup").toString())
        .failed(LeaseholdCommand.EXIT_USAGE, at + " requires a client certificate");
  }

  @Test
  void theRightOptionsStillWork() {
    run(args(
            tls,
            "--cacert",
            file("ca.pem"),
            "--cert",
            file("admin.pem"),
            "--key",
            file("admin-key.pem"),
            "lease",
            "list"))
        .ok();
    run(args(plain, "lease", "list")).ok();
  }
}
