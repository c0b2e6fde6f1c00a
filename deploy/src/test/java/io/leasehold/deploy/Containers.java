package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.images.builder.ImageFromDockerfile;

/** What the container tests share: the engine check, the images and waits. */
final class Containers {
  static final String BASE_IMAGE = "leasehold-base:jre17";

  /**
   * Election timeouts of 1-1.9 s, as the in-JVM tests' steady elections, for the container clusters
   * whose tests count on a 6 s lease outliving a leader's stop. With the default 400-650 ms, two
   * such clusters (six JVMs) on two shared cores made the surviving pair trade leadership for
   * seconds, each leader stepping down when its one follower answered late; these tests are about
   * the image and the failover, not the default timeouts under that load.
   */
  static final List<String> STEADY_ELECTIONS =
      List.of("--election-timeout-min", "1s", "--election-timeout-max", "1900ms");

  /** The command of cluster node {@code id} in a container: its data under /data/{id}. */
  static String[] serverCommand(String id) {
    List<String> command =
        new java.util.ArrayList<>(
            List.of("server", "--id", id, "--listen-host", "0.0.0.0", "--data-dir", "/data/" + id));
    command.addAll(STEADY_ELECTIONS);
    return command.toArray(String[]::new);
  }

  static final Path DEPLOY = Path.of(System.getProperty("leasehold.deploy", "."));
  static final Path JAR =
      Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));

  private Containers() {}

  /** Skips the calling test, saying why, where no Docker engine answers. */
  static void assumeDocker(Class<?> test) {
    if (!dockerAvailable()) {
      String why =
          "no Docker engine reachable (DOCKER_HOST or /var/run/docker.sock): "
              + test.getSimpleName()
              + " is skipped";
      LoggerFactory.getLogger(test).warn(why);
      Assumptions.abort(why);
    }
  }

  static boolean dockerAvailable() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * The node image built from deploy/docker/Dockerfile and the packaged jar, on the base image made
   * offline from this machine's JDK (nothing can be pulled here).
   *
   * @param labels labels that make this build an image of its own (a "new version" of the same jar)
   * @return the image's name
   */
  static String nodeImage(String name, Map<String, String> labels) throws Exception {
    assertTrue(Files.exists(JAR), "the distribution jar exists: " + JAR.toAbsolutePath());
    ensureBaseImage();
    return new ImageFromDockerfile(name, false)
        .withFileFromPath("Dockerfile", DEPLOY.resolve("docker/Dockerfile"))
        .withFileFromPath("leasehold.jar", JAR)
        .withBuildArg("BASE_IMAGE", BASE_IMAGE)
        .withBuildImageCmdModifier(cmd -> cmd.withLabels(labels))
        .get(10, TimeUnit.MINUTES);
  }

  static void ensureBaseImage() throws Exception {
    try {
      DockerClientFactory.instance().client().inspectImageCmd(BASE_IMAGE).exec();
      return;
    } catch (RuntimeException missing) {
      // build it below
    }
    Process p =
        new ProcessBuilder(
                "bash", DEPLOY.resolve("docker/build-base-image.sh").toString(), BASE_IMAGE)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.INHERIT)
            .start();
    assertTrue(p.waitFor(10, TimeUnit.MINUTES), "the base image build finished");
    assertEquals(0, p.exitValue(), "the base image build succeeded");
  }

  /**
   * The compose command of this machine: {@code docker compose} (v2) or {@code docker-compose}
   * (v1), if either runs.
   */
  static Optional<List<String>> composeCommand() {
    for (List<String> c : List.of(List.of("docker", "compose"), List.of("docker-compose"))) {
      try {
        Process p =
            new ProcessBuilder(concat(c, "version"))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
          return Optional.of(c);
        }
        p.destroyForcibly();
      } catch (IOException | InterruptedException notThere) {
        // try the next
      }
    }
    return Optional.empty();
  }

  static List<String> concat(List<String> a, String... b) {
    List<String> out = new java.util.ArrayList<>(a);
    out.addAll(List.of(b));
    return out;
  }

  static void await(String what, Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException notYet) {
        // a call failed mid-failover: ask again
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "timed out after " + timeout.toSeconds() + " s waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
  }

  /**
   * Waits until Docker's health status of the container, set by the image's HEALTHCHECK, is
   * "healthy".
   */
  static void awaitDockerHealthy(String name, String containerId, Duration timeout)
      throws InterruptedException {
    String[] last = {"none"};
    try {
      await(
          "Docker reports " + name + " healthy",
          timeout,
          () -> {
            var health =
                DockerClientFactory.instance()
                    .client()
                    .inspectContainerCmd(containerId)
                    .exec()
                    .getState()
                    .getHealth();
            last[0] = health == null ? "no health check" : health.getStatus();
            return "healthy".equals(last[0]);
          });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + " (last status: " + last[0] + ")", e);
    }
  }
}
