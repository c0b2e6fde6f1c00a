package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/jvm.sh, which the launcher and local-cluster.sh source: which java it chooses from a tree
 * of stub JDKs (shell scripts that print a version, or a JDK's release file), the class-data
 * cache's name, freshness and flags, and a failed training run. No real JDK beyond the one running
 * the test is needed, and no training run is made.
 */
class JvmScriptTest {
  static final Path DEPLOY = Path.of(System.getProperty("leasehold.deploy", "."));
  static final Path SCRIPT = DEPLOY.resolve("jvm.sh");
  static final String DEFAULTS =
      "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+UseStringDeduplication -Xmx512m";

  /** The CLI's defaults (every command but server and bench). */
  static final String CLI_DEFAULTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData";

  /** Added to every start on Java 24 and later. */
  static final String LAUNCH_24 = "--sun-misc-unsafe-memory-access=allow";

  /** The defaults on Java 25 and later. */
  static final String DEFAULTS_25 = DEFAULTS + " -XX:+UseCompactObjectHeaders";

  @TempDir Path dir;
  Path jvms;
  Path pathBin;
  Path calls;
  Path jar;

  record Run(int exit, String out, String err) {}

  @BeforeEach
  void tree() throws IOException {
    assumeTrue(
        Files.isExecutable(Path.of("/bin/bash")),
        "bash is not installed: the launcher's scripts need it");
    calls = dir.resolve("calls.log");
    jvms = dir.resolve("jvm");
    stubByVersionOutput(
        jvms.resolve("jdk-21"),
        "openjdk version \"21.0.2\" 2024-01-16",
        "OpenJDK Runtime Environment (build 21.0.2+13-58)");
    stubByReleaseFile(jvms.resolve("jdk-25"), "25.0.1", "25.0.1+8-LTS");
    stubByVersionOutput(jvms.resolve("jdk-11"), "openjdk version \"11.0.22\" 2024-01-16");
    stubByVersionOutput(jvms.resolve("jre-8"), "java version \"1.8.0_392\"");
    Path broken = jvms.resolve("broken/bin/java");
    executable(broken, "#!/bin/sh\nexit 1\n");
    // Another name for jdk-21, as Debian's default-java is: one candidate, under the first name
    // found.
    Files.createSymbolicLink(jvms.resolve("latest"), jvms.resolve("jdk-21"));
    // `java` on PATH: a link into a JDK elsewhere, as /usr/bin/java is on Debian.
    stubByVersionOutput(dir.resolve("elsewhere/jdk-17"), "openjdk version \"17.0.9\" 2023-10-17");
    pathBin = Files.createDirectories(dir.resolve("pathbin"));
    Files.createSymbolicLink(pathBin.resolve("java"), dir.resolve("elsewhere/jdk-17/bin/java"));
    jar = dir.resolve("dist/leasehold.jar");
    Files.createDirectories(jar.getParent());
    Files.writeString(jar, "not a jar");
  }

  /** A JDK whose java prints these lines for -version (and logs every call). */
  void stubByVersionOutput(Path home, String... versionLines) throws IOException {
    StringBuilder s = new StringBuilder("#!/bin/sh\necho \"$0 $*\" >> '" + calls + "'\n");
    for (String line : versionLines) {
      s.append("echo '").append(line).append("' >&2\n");
    }
    executable(home.resolve("bin/java"), s.toString());
  }

  /** A JDK with a release file; its java fails if asked for its version. */
  void stubByReleaseFile(Path home, String version, String runtime) throws IOException {
    executable(home.resolve("bin/java"), "#!/bin/sh\necho \"$0 $*\" >> '" + calls + "'\nexit 1\n");
    Files.writeString(
        home.resolve("release"),
        "IMPLEMENTOR=\"Test\"\nJAVA_RUNTIME_VERSION=\""
            + runtime
            + "\"\nJAVA_VERSION=\""
            + version
            + "\"\n");
  }

  static void executable(Path file, String content) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, content);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  Map<String, String> env(String... pairs) {
    Map<String, String> env = new HashMap<>();
    env.put("PATH", pathBin + ":/usr/bin:/bin");
    env.put("LEASEHOLD_JDK_DIRS", jvms.toString());
    env.put("HOME", dir.toString());
    env.put("TMPDIR", dir.toString());
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  Run bash(Map<String, String> env, List<String> command) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().clear();
    pb.environment().putAll(env);
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(command + " did not finish: " + Files.readString(err));
    }
    return new Run(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /** Sources jvm.sh, selects the java and prints "bin|major|version". */
  Run select(Map<String, String> env) throws Exception {
    return bash(
        env,
        List.of(
            "/bin/bash",
            "-c",
            "set -euo pipefail; . \"$1\"; leasehold_select_java; "
                + "echo \"$LEASEHOLD_JAVA_BIN|$LEASEHOLD_JAVA_MAJOR|$LEASEHOLD_JAVA_VERSION\"",
            "test",
            SCRIPT.toString()));
  }

  /** deploy/jvm.sh run as a script: report or cache, for the test's jar. */
  Run script(Map<String, String> env, String command) throws Exception {
    return bash(env, List.of("/bin/bash", SCRIPT.toString(), command, jar.toString()));
  }

  static String line(String out, String prefix) {
    return out.lines()
        .filter(l -> l.startsWith(prefix))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no '" + prefix + "' line in: " + out));
  }

  /** The nodes' cache path the report names (the part between "cache: " and " ("). */
  String cachePath(Map<String, String> env) throws Exception {
    return reportedPath(env, "cache: ");
  }

  /** The CLI's cache path the report names. */
  String cliCachePath(Map<String, String> env) throws Exception {
    return reportedPath(env, "cli cache: ");
  }

  String reportedPath(Map<String, String> env, String label) throws Exception {
    Run r = script(env, "report");
    assertEquals(0, r.exit(), r.err());
    String cache = line(r.out(), label).substring(label.length());
    return cache.substring(0, cache.indexOf(" ("));
  }

  @Test
  void theNewestJava17OrLaterOfThePathAndTheJdkDirectoriesIsChosen() throws Exception {
    Run r = select(env());
    assertEquals(0, r.exit(), r.err());
    assertEquals(jvms.resolve("jdk-25/bin/java") + "|25|25.0.1+8-LTS", r.out().strip());
    assertEquals("", r.err(), "no note on a plain selection");
    assertFalse(
        Files.readString(calls).contains("jdk-25/bin/java"),
        "a release file is read, the JVM not started: " + Files.readString(calls));
  }

  @Test
  void versionsAreReadFromJavaVersionWhenAJdkHasNoReleaseFile() throws Exception {
    Files.delete(jvms.resolve("jdk-25/release"));
    Run r = select(env());
    assertEquals(0, r.exit(), r.err());
    assertEquals(
        jvms.resolve("jdk-21/bin/java") + "|21|21.0.2+13-58",
        r.out().strip(),
        "jdk-25 (no version now) is passed over");
  }

  @Test
  void javasOlderThan17AreIgnoredAndThePathsJavaWinsATie() throws Exception {
    Path old = dir.resolve("old");
    stubByVersionOutput(old.resolve("jdk-11"), "openjdk version \"11.0.22\" 2024-01-16");
    stubByVersionOutput(old.resolve("jre-8"), "java version \"1.8.0_392\"");
    stubByVersionOutput(old.resolve("jdk-17-same"), "openjdk version \"17.0.9\" 2023-10-17");
    Run r = select(env("LEASEHOLD_JDK_DIRS", old.toString()));
    assertEquals(0, r.exit(), r.err());
    assertEquals(pathBin.resolve("java") + "|17|17.0.9", r.out().strip());

    stubByVersionOutput(old.resolve("jdk-17-newer"), "openjdk version \"17.0.12\" 2024-07-16");
    Run newer = select(env("LEASEHOLD_JDK_DIRS", old.toString()));
    assertEquals(
        old.resolve("jdk-17-newer/bin/java") + "|17|17.0.12",
        newer.out().strip(),
        "a later update of the same major wins");
  }

  @Test
  void javaHomeWinsOverNewerJdksAndLeaseholdJavaOverJavaHome() throws Exception {
    Run home = select(env("JAVA_HOME", jvms.resolve("jdk-21").toString()));
    assertEquals(0, home.exit(), home.err());
    assertEquals(jvms.resolve("jdk-21/bin/java") + "|21|21.0.2+13-58", home.out().strip());

    Run explicit =
        select(
            env(
                "JAVA_HOME",
                jvms.resolve("jdk-21").toString(),
                "LEASEHOLD_JAVA",
                jvms.resolve("jdk-11/bin/java").toString()));
    assertEquals(0, explicit.exit(), explicit.err());
    assertEquals(jvms.resolve("jdk-11/bin/java") + "|11|11.0.22", explicit.out().strip());

    Run missing = select(env("LEASEHOLD_JAVA", dir.resolve("nowhere/java").toString()));
    assertNotEquals(0, missing.exit());
    assertEquals("", missing.out());
    assertTrue(
        missing
            .err()
            .contains(
                "LEASEHOLD_JAVA="
                    + dir.resolve("nowhere/java")
                    + " is not an executable java binary"),
        missing.err());
  }

  @Test
  void theCacheIsNamedForTheJarTheRuntimeAndTheJavasXxFlags() throws Exception {
    String aot = cachePath(env());
    assertTrue(aot.matches(".*/dist/leasehold-jdk25\\.0\\.1\\+8-LTS-[0-9a-f]{8}\\.aot"), aot);
    assertEquals(jar.getParent().toString(), Path.of(aot).getParent().toString(), "beside the jar");
    String jsa = cachePath(env("JAVA_HOME", jvms.resolve("jdk-21").toString()));
    assertTrue(
        jsa.matches(".*/dist/leasehold-jdk21\\.0\\.2\\+13-58-[0-9a-f]{8}\\.jsa"),
        "a CDS archive below 25: " + jsa);

    assertEquals(
        aot,
        cachePath(env("LEASEHOLD_JAVA_OPTS", DEFAULTS_25)),
        "the defaults are the flags when LEASEHOLD_JAVA_OPTS is unset");
    assertEquals(
        aot,
        cachePath(env("LEASEHOLD_JAVA_OPTS", DEFAULTS_25 + " -Xmx1g -Xlog:aot")),
        "heap size and logging keep the cache");
    assertNotEquals(
        aot,
        cachePath(env("LEASEHOLD_JAVA_OPTS", DEFAULTS_25 + " -XX:CICompilerCount=2")),
        "another -XX flag, another cache");
    String cli = cliCachePath(env());
    assertTrue(
        cli.matches(".*/dist/leasehold-cli-jdk25\\.0\\.1\\+8-LTS-[0-9a-f]{8}\\.aot"),
        "the CLI's cache: " + cli);
    assertNotEquals(
        cli,
        cliCachePath(env("LEASEHOLD_CLI_JAVA_OPTS", CLI_DEFAULTS + " -XX:CICompilerCount=2")),
        "the CLI's flags name it");

    Run report = script(env(), "report");
    assertEquals(
        "java: " + jvms.resolve("jdk-25/bin/java") + " (25.0.1+8-LTS)",
        line(report.out(), "java: "));
    assertEquals(
        "flags: " + DEFAULTS_25, line(report.out(), "flags: "), "compact object headers on 25");
    assertEquals(
        "flags: " + DEFAULTS,
        line(
            script(env("JAVA_HOME", jvms.resolve("jdk-21").toString()), "report").out(), "flags: "),
        "no compact object headers below 25");
    assertTrue(report.out().contains("(missing: made at the next start)"), report.out());
    assertTrue(script(env("LEASEHOLD_AOT", "off"), "report").out().contains("cache: off"));
    assertTrue(
        script(env("LEASEHOLD_JAVA_OPTS", "-Xmx1g -XX:SharedArchiveFile=/x.jsa"), "report")
            .out()
            .contains("cache: chosen by the flags"));
    assertTrue(
        script(env("JAVA_HOME", jvms.resolve("jdk-11").toString()), "report")
            .out()
            .contains("cache: none for this java"));
  }

  @Test
  void aFreshCacheIsUsedWithItsWarningsOnStderrAndOnlyWhereTheFlagsLeaveRoomForIt()
      throws Exception {
    String aot = cachePath(env());
    Files.writeString(Path.of(aot), "cache");
    Run flags = script(env(), "cache");
    assertEquals(0, flags.exit(), flags.err());
    assertEquals(
        List.of("-XX:AOTCache=" + aot, "-Xlog:aot*=off:stdout", "-Xlog:aot*=warning:stderr"),
        flags.out().lines().toList());
    assertEquals("", flags.err(), "a fresh cache is used as it is");

    Map<String, String> java21 = env("JAVA_HOME", jvms.resolve("jdk-21").toString());
    String jsa = cachePath(java21);
    Files.writeString(Path.of(jsa), "archive");
    assertEquals(
        List.of(
            "-XX:SharedArchiveFile=" + jsa, "-Xlog:cds*=off:stdout", "-Xlog:cds*=warning:stderr"),
        script(java21, "cache").out().lines().toList());

    assertEquals(
        "",
        script(env("LEASEHOLD_AOT", "off"), "cache").out(),
        "LEASEHOLD_AOT=off: no cache flags");
    assertEquals(
        "",
        script(env("LEASEHOLD_JAVA_OPTS", DEFAULTS + " -XX:AOTCache=/elsewhere.aot"), "cache")
            .out(),
        "the flags choose their own cache");
    assertEquals(
        "",
        script(env("LEASEHOLD_JAVA_OPTS", DEFAULTS + " -Xshare:off"), "cache").out(),
        "sharing off");
  }

  /**
   * A cache older than the jar is stale and remade; here the training node (a stub java) exits at
   * once, so the training fails: the note and the log's tail go to stderr, nothing to stdout, no
   * cache flags are given, and the training is not tried again until the jar changes.
   */
  @Test
  void aFailedTrainingRunIsReportedOnStderrAndNotRetriedUntilTheJarChanges() throws Exception {
    String aot = cachePath(env());
    Files.writeString(Path.of(aot), "cache");
    Files.setLastModifiedTime(
        Path.of(aot), FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    assertTrue(
        script(env(), "report")
            .out()
            .contains("(stale: older than the jar, remade at the next start)"));

    Run failed = script(env(), "cache");
    assertEquals(0, failed.exit(), "a failed training never fails the start: " + failed.err());
    assertEquals("", failed.out(), "no cache flags, nothing else on stdout");
    assertTrue(
        failed.err().contains("leasehold: making an AOT cache for Java 25.0.1+8-LTS"),
        failed.err());
    assertTrue(failed.err().contains("the training run failed"), failed.err());
    assertTrue(
        failed.err().contains("a training node exited before the cluster served"),
        "the log's tail: " + failed.err());
    assertTrue(Files.exists(Path.of(aot + ".failed")), "the failure is remembered");
    String log = Files.readString(Path.of(aot + ".log"));
    assertTrue(
        log.contains("training cluster: ")
            && log.contains("n1 also -XX:AOTCacheOutput=" + aot + ".part"),
        "a three-node training cluster, its first node with the one-step AOT flag: " + log);
    List<String> left = new ArrayList<>();
    try (var files = Files.list(dir)) {
      files
          .filter(f -> f.getFileName().toString().startsWith("leasehold-training."))
          .forEach(f -> left.add(f.toString()));
    }
    assertEquals(List.of(), left, "the training's temporary directory is removed");

    long startsBefore = javaStarts();
    Run again = script(env(), "cache");
    assertEquals("", again.out());
    assertEquals("", again.err(), "not tried again for the same jar");
    assertEquals(startsBefore, javaStarts(), "no training node started");
    assertTrue(
        script(env(), "report").out().contains("(training failed for this jar: "),
        "the report says so");

    Files.setLastModifiedTime(
        Path.of(aot + ".failed"), FileTime.fromMillis(System.currentTimeMillis() - 30_000));
    Run newJar = script(env(), "cache");
    assertTrue(
        newJar.err().contains("leasehold: making an AOT cache"),
        "a newer jar is trained again: " + newJar.err());
  }

  /**
   * A training node that could not bind its ports (taken between the check and the bind by some
   * other program) is started again on others, at most three starts in all.
   */
  @Test
  void aTrainingNodeThatCouldNotBindIsStartedAgainOnOtherPorts() throws Exception {
    executable(
        jvms.resolve("jdk-25/bin/java"),
        "#!/bin/sh\necho \"$0 $*\" >> '"
            + calls
            + "'\n"
            + "echo 'leasehold server: java.net.BindException: Address already in use' >&2\nexit 1\n");
    String aot = cachePath(env());
    Run failed = script(env(), "cache");
    assertEquals(0, failed.exit(), failed.err());
    String log = Files.readString(Path.of(aot + ".log"));
    assertEquals(
        3,
        log.lines().filter(l -> l.contains("training cluster: ")).count(),
        "three starts: " + log);
    assertEquals(
        2,
        log.lines().filter(l -> l.contains("a port was taken meanwhile; again on others")).count(),
        log);
    assertTrue(log.contains("a training node exited before the cluster served"), log);
  }

  /** The nodes the stub javas were asked to start (not their -version calls). */
  long javaStarts() throws IOException {
    return Files.exists(calls)
        ? Files.readAllLines(calls).stream().filter(l -> l.contains(" server ")).count()
        : 0;
  }

  /**
   * The launcher itself, in a copy of the repository's layout with a built jar, runs the chosen
   * java with the cache flags, then LEASEHOLD_JAVA_OPTS or the defaults, then -jar and the
   * arguments.
   */
  /** A copy of the repository's layout with the launcher, jvm.sh and (unless told) a built jar. */
  Path repo(boolean withJar) throws IOException {
    Path repo = dir.resolve("repo");
    Files.createDirectories(repo.resolve("deploy"));
    Files.copy(DEPLOY.resolve("../leasehold"), repo.resolve("leasehold"));
    Files.copy(SCRIPT, repo.resolve("deploy/jvm.sh"));
    Files.createDirectories(repo.resolve("cli/target"));
    if (withJar) {
      Files.writeString(repo.resolve("cli/target/leasehold.jar"), "not a jar");
    }
    return repo;
  }

  /** A Java 25 whose java prints its arguments, one a line. */
  Map<String, String> echoJava() throws IOException {
    Path echo = dir.resolve("echo-jdk");
    executable(echo.resolve("bin/java"), "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n");
    Files.writeString(
        echo.resolve("release"),
        "JAVA_RUNTIME_VERSION=\"25.0.1+8-LTS\"\nJAVA_VERSION=\"25.0.1\"\n");
    return env("LEASEHOLD_JAVA", echo.resolve("bin/java").toString());
  }

  static List<String> words(String... groups) {
    List<String> all = new ArrayList<>();
    for (String g : groups) {
      all.addAll(List.of(g.split(" ")));
    }
    return all;
  }

  @Test
  void theLauncherRunsTheChosenJavaWithTheCacheAndTheFlags() throws Exception {
    Path repo = repo(true);
    Path repoJar = repo.resolve("cli/target/leasehold.jar");
    Map<String, String> env = echoJava();
    String launcher = repo.resolve("leasehold").toString();

    jar = repoJar;
    String cli = cliCachePath(env);
    Files.writeString(Path.of(cli), "cache");
    Run run = bash(env, List.of("/bin/bash", launcher, "lease", "get", "a b"));
    assertEquals(0, run.exit(), run.err());
    List<String> expected =
        new ArrayList<>(
            List.of("-XX:AOTCache=" + cli, "-Xlog:aot*=off:stdout", "-Xlog:aot*=warning:stderr"));
    expected.addAll(words(CLI_DEFAULTS, LAUNCH_24, "-jar " + repoJar, "lease get"));
    expected.add("a b");
    assertEquals(expected, run.out().lines().toList(), "a CLI command: the CLI's flags and cache");
    assertEquals("", run.err());

    // With no cache yet, a CLI command runs without one rather than wait for a training.
    Files.delete(Path.of(cli));
    Run noCache =
        bash(env, List.of("/bin/bash", launcher, "--endpoints", "h:1", "lease", "get", "a"));
    assertEquals(0, noCache.exit(), noCache.err());
    assertEquals(
        words(CLI_DEFAULTS, LAUNCH_24, "-jar " + repoJar, "--endpoints h:1 lease get a"),
        noCache.out().lines().toList());
    assertEquals("", noCache.err(), "no training for a CLI command");
    assertFalse(Files.exists(Path.of(cli)), "and no cache made");

    // A node and the bench take the nodes' flags and cache.
    String aot = cachePath(env);
    Files.writeString(Path.of(aot), "cache");
    Files.writeString(Path.of(cli), "cache");
    List<String> nodeCache =
        List.of("-XX:AOTCache=" + aot, "-Xlog:aot*=off:stdout", "-Xlog:aot*=warning:stderr");
    for (List<String> args :
        List.of(List.of("server", "--standalone"), List.of("--timeout", "3s", "bench", "renew"))) {
      List<String> command = new ArrayList<>(List.of("/bin/bash", launcher));
      command.addAll(args);
      Run node = bash(env, command);
      assertEquals(0, node.exit(), node.err());
      List<String> nodeExpected = new ArrayList<>(nodeCache);
      nodeExpected.addAll(words(DEFAULTS_25, LAUNCH_24, "-jar " + repoJar));
      nodeExpected.addAll(args);
      assertEquals(nodeExpected, node.out().lines().toList(), args.toString());
    }

    Map<String, String> own = new HashMap<>(env);
    own.put("LEASEHOLD_CLI_JAVA_OPTS", "-Xmx64m");
    own.put("LEASEHOLD_JAVA_OPTS", "-Xmx1g");
    own.put("LEASEHOLD_AOT", "off");
    assertEquals(
        words("-Xmx64m", LAUNCH_24, "-jar " + repoJar, "--version"),
        bash(own, List.of("/bin/bash", launcher, "--version")).out().lines().toList(),
        "LEASEHOLD_CLI_JAVA_OPTS for the CLI");
    assertEquals(
        words("-Xmx1g", LAUNCH_24, "-jar " + repoJar, "server"),
        bash(own, List.of("/bin/bash", launcher, "server")).out().lines().toList(),
        "LEASEHOLD_JAVA_OPTS for a node");
  }

  /**
   * The launcher builds the jar only saying that it does and why, with Maven (a stub here that logs
   * its arguments and writes the jar), and with LEASEHOLD_BUILD=never fails with the command.
   */
  @Test
  void theLauncherSaysWhyItBuildsOrFailsWithTheCommand() throws Exception {
    Path repo = repo(false);
    Path repoJar = repo.resolve("cli/target/leasehold.jar");
    executable(
        pathBin.resolve("mvn"),
        "#!/bin/sh\necho \"mvn $*\" >> '" + calls + "'\necho built > '" + repoJar + "'\n");
    Map<String, String> env = echoJava();
    env.put("LEASEHOLD_AOT", "off");
    String launcher = repo.resolve("leasehold").toString();

    Map<String, String> never = new HashMap<>(env);
    never.put("LEASEHOLD_BUILD", "never");
    Run refused = bash(never, List.of("/bin/bash", launcher, "--version"));
    assertEquals(2, refused.exit(), refused.err());
    assertEquals(
        "leasehold: cli/target/leasehold.jar is not built yet, and LEASEHOLD_BUILD=never; build it with: cd "
            + repo
            + " && mvn -B -q -DskipTests -pl cli -am package",
        refused.err().strip());
    assertFalse(Files.exists(calls) && Files.readString(calls).contains("mvn "), "no build");

    Run first = bash(env, List.of("/bin/bash", launcher, "--version"));
    assertEquals(0, first.exit(), first.err());
    assertTrue(
        first
            .err()
            .startsWith(
                "leasehold: cli/target/leasehold.jar is not built yet; building it (cd "
                    + repo
                    + " && mvn -B -q -DskipTests -pl cli -am package;"),
        first.err());
    assertTrue(
        Files.readString(calls).contains("mvn -B -q -DskipTests -pl cli -am package"),
        Files.readString(calls));
    assertTrue(first.out().endsWith("--version\n"), "then runs the command: " + first.out());

    Run current = bash(env, List.of("/bin/bash", launcher, "--version"));
    assertEquals("", current.err(), "a current jar is not built again");

    Path source = repo.resolve("server/src/main/java/A.java");
    Files.createDirectories(source.getParent());
    Files.writeString(source, "class A {}");
    Files.setLastModifiedTime(repoJar, FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    Run changed = bash(env, List.of("/bin/bash", launcher, "--version"));
    assertTrue(
        changed
            .err()
            .startsWith(
                "leasehold: server/src/main/java/A.java is newer than cli/target/leasehold.jar; building it"),
        changed.err());

    Files.setLastModifiedTime(repoJar, FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    Run stale = bash(never, List.of("/bin/bash", launcher, "--version"));
    assertEquals(0, stale.exit(), "LEASEHOLD_BUILD=never runs the jar it finds: " + stale.err());
  }

  @Test
  void theLauncherAndTheLocalClusterScriptTakeTheirJavaFromJvmSh() throws Exception {
    String launcher = Files.readString(DEPLOY.resolve("../leasehold"));
    String cluster = Files.readString(DEPLOY.resolve("local-cluster.sh"));
    for (Map.Entry<String, String> script :
        Map.of("leasehold", launcher, "local-cluster.sh", cluster).entrySet()) {
      assertTrue(script.getValue().contains("jvm.sh\""), script.getKey() + " sources jvm.sh");
      assertTrue(
          script.getValue().contains("\"$LEASEHOLD_JAVA_BIN\""),
          script.getKey() + " runs the java jvm.sh chose");
      assertFalse(
          script.getValue().contains("JAVA_HOME/bin"),
          script.getKey() + " picks no java of its own");
    }
    assertTrue(
        cluster.contains("${LEASEHOLD_JAVA_OPTS:-$(leasehold_default_flags)}"),
        "local-cluster.sh: the launcher's defaults");
  }
}
