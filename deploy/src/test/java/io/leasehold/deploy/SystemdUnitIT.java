package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The systemd unit's ExecStart, run as systemd would run it for leasehold@n1..n3: the environment
 * file read as systemd reads it, specifiers and variables expanded by systemd's rules, and the
 * process given that environment. Only the install locations are moved into a temporary directory
 * (the jar, the state directory), and each shipped environment file is edited as an operator would,
 * with this machine's addresses and free ports. The three nodes form a cluster and serve.
 */
class SystemdUnitIT {
  final Path deploy = Path.of(System.getProperty("leasehold.deploy", "."));
  final Path jar = Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));
  final List<Process> nodes = new ArrayList<>();
  @TempDir Path dir;

  @AfterEach
  void stop() throws InterruptedException {
    LocalProcesses.stopAll(nodes);
  }

  @Test
  void theUnitsExecStartWithItsEnvironmentFileRunsANodeOfAThreeNodeCluster() throws Exception {
    Unit unit = Unit.parse(Files.readString(deploy.resolve("systemd/leasehold@.service")));
    assertEquals("/etc/leasehold/%i.env", unit.service("EnvironmentFile"));
    assertEquals("leasehold/%i", unit.service("StateDirectory"));
    Map<String, Integer> client = new LinkedHashMap<>();
    Map<String, Integer> peer = new LinkedHashMap<>();
    Map<String, Integer> metrics = new LinkedHashMap<>();
    for (String id : List.of("n1", "n2", "n3")) {
      client.put(id, LocalProcesses.freePort());
      peer.put(id, LocalProcesses.freePort());
      metrics.put(id, LocalProcesses.freePort());
    }
    for (String id : client.keySet()) {
      // The shipped file, edited as the operator would: this machine's address and free ports.
      String env = Files.readString(deploy.resolve("systemd/" + id + ".env"));
      for (int i = 1; i <= 3; i++) {
        String other = "n" + i;
        env =
            env.replace(
                "10.0.0." + i + ":7401:7400",
                "127.0.0.1:" + peer.get(other) + ":" + client.get(other));
      }
      env = env.replace("--metrics-port 7402", "--metrics-port " + metrics.get(id));
      Path envFile = dir.resolve("etc/leasehold/" + id + ".env");
      Files.createDirectories(envFile.getParent());
      Files.writeString(envFile, env);
      Map<String, String> environment = Unit.environmentFile(Files.readString(envFile));
      assertEquals(
          String.join(
              ",",
              List.of(
                  "n1=127.0.0.1:" + peer.get("n1") + ":" + client.get("n1"),
                  "n2=127.0.0.1:" + peer.get("n2") + ":" + client.get("n2"),
                  "n3=127.0.0.1:" + peer.get("n3") + ":" + client.get("n3"))),
          environment.get("LEASEHOLD_PEERS"),
          id + ".env lists the same members as the others");

      // systemd makes the StateDirectory (mode StateDirectoryMode) before it starts the process.
      Path state = dir.resolve("var/lib/leasehold/" + id);
      Files.createDirectories(
          state,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      List<String> command = new ArrayList<>();
      for (String word : unit.execStart(id, environment)) {
        command.add(relocate(word));
      }
      assertEquals(
          List.of("--id", id),
          command.subList(command.indexOf("server") + 1, command.indexOf("server") + 3));
      ProcessBuilder pb =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve(id + ".log").toFile());
      pb.environment().putAll(environment);
      nodes.add(pb.start());
    }

    List<String> endpoints = client.values().stream().map(p -> "127.0.0.1:" + p).toList();
    HttpClient http = HttpClient.newHttpClient();
    for (String id : client.keySet()) {
      int port = metrics.get(id);
      await(
          id + " /healthz answers 200 (its log: " + dir.resolve(id + ".log") + ")",
          Duration.ofSeconds(90),
          () -> {
            assertTrue(
                nodes.get(List.copyOf(client.keySet()).indexOf(id)).isAlive(),
                id + " exited: " + log(id));
            HttpResponse<String> r =
                http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
          });
    }
    try (LeaseholdClient c =
        LeaseholdClient.builder().endpoints(endpoints).holder("systemd-test").build()) {
      Lease lease =
          c.blocking()
              .acquire("lock/systemd", LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)));
      assertEquals(lease.token(), c.blocking().get("lock/systemd").orElseThrow().token());
      assertEquals(3, c.clusterStatus().join().members().size(), "three members");
      lease.release().get(30, TimeUnit.SECONDS);
    }
    // The data went where the unit says: the state directory systemd made for the instance.
    for (String id : client.keySet()) {
      try (var files = Files.list(dir.resolve("var/lib/leasehold/" + id))) {
        assertTrue(files.findAny().isPresent(), id + " keeps its data in its StateDirectory");
      }
    }
  }

  /** The install locations the unit names, moved into the test's directory. */
  private String relocate(String word) {
    if (word.equals("/usr/bin/java") && !Files.isExecutable(Path.of(word))) {
      return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
    if (word.equals("/opt/leasehold/leasehold.jar")) {
      return jar.toAbsolutePath().toString();
    }
    if (word.startsWith("/var/lib/leasehold/")) {
      return dir.resolve(word.substring(1)).toString();
    }
    return word;
  }

  private String log(String id) {
    try {
      String all = Files.readString(dir.resolve(id + ".log"));
      return all.substring(Math.max(0, all.length() - 2000));
    } catch (IOException e) {
      return e.toString();
    }
  }

  interface Check {
    boolean test() throws Exception;
  }

  static void await(String what, Duration timeout, Check condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() - deadline < 0) {
      try {
        if (condition.test()) {
          return;
        }
      } catch (IOException e) {
        last = e; // not listening yet
      }
      TimeUnit.MILLISECONDS.sleep(250);
    }
    throw new AssertionError(
        "timed out after " + timeout.toSeconds() + " s waiting for " + what, last);
  }

  /**
   * The parts of a unit file this test needs, read by the rules of systemd.unit(5) and
   * systemd.service(5).
   */
  record Unit(Map<String, String> serviceSection) {
    static Unit parse(String text) {
      Map<String, String> service = new LinkedHashMap<>();
      String section = "";
      StringBuilder pending = null;
      for (String line : text.split("\n", -1)) {
        if (pending != null) {
          // A continued line: the backslash and newline become one space.
          pending.append(' ').append(line.strip());
        } else {
          String t = line.strip();
          if (t.isEmpty() || t.startsWith("#") || t.startsWith(";")) {
            continue;
          }
          if (t.startsWith("[")) {
            section = t;
            continue;
          }
          pending = new StringBuilder(t);
        }
        if (pending.charAt(pending.length() - 1) == '\\') {
          pending.setLength(pending.length() - 1);
          continue;
        }
        String entry = pending.toString();
        pending = null;
        int eq = entry.indexOf('=');
        if (section.equals("[Service]") && eq > 0) {
          service.put(entry.substring(0, eq).strip(), entry.substring(eq + 1).strip());
        }
      }
      return new Unit(service);
    }

    String service(String key) {
      String v = serviceSection.get(key);
      if (v == null) {
        throw new AssertionError("the unit's [Service] has no " + key);
      }
      return v;
    }

    /**
     * ExecStart's argv for the instance: specifiers first, then {@code ${VAR}} replaced in place
     * (one word) and a word that is exactly {@code $VAR} split at whitespace into zero or more
     * words, as systemd.service(5) says.
     */
    List<String> execStart(String instance, Map<String, String> env) {
      String line = service("ExecStart").replace("%i", instance).replace("%%", "%");
      List<String> argv = new ArrayList<>();
      Pattern braced = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");
      for (String word : line.trim().split("\\s+")) {
        Matcher whole = Pattern.compile("\\$([A-Za-z_][A-Za-z0-9_]*)").matcher(word);
        if (whole.matches()) {
          String v = env.getOrDefault(whole.group(1), "").trim();
          if (!v.isEmpty()) {
            argv.addAll(List.of(v.split("\\s+")));
          }
          continue;
        }
        argv.add(
            braced
                .matcher(word)
                .replaceAll(m -> Matcher.quoteReplacement(env.getOrDefault(m.group(1), ""))));
      }
      return argv;
    }

    /** An EnvironmentFile: KEY=VALUE lines, # and ; comments, values optionally quoted. */
    static Map<String, String> environmentFile(String text) {
      Map<String, String> env = new LinkedHashMap<>();
      for (String line : text.split("\n")) {
        String t = line.strip();
        if (t.isEmpty() || t.startsWith("#") || t.startsWith(";")) {
          continue;
        }
        int eq = t.indexOf('=');
        if (eq <= 0) {
          throw new AssertionError("not KEY=VALUE: " + line);
        }
        String value = t.substring(eq + 1).strip();
        if (value.length() >= 2
            && (value.startsWith("\"") && value.endsWith("\"")
                || value.startsWith("'") && value.endsWith("'"))) {
          value = value.substring(1, value.length() - 1);
        }
        env.put(t.substring(0, eq).strip(), value);
      }
      return env;
    }
  }
}
