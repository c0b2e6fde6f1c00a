package io.leasehold.testkit.example;

import io.leasehold.testkit.LeaseholdContainer;
import org.testcontainers.DockerClientFactory;

/**
 * Whether the image of the guide's container example ({@code leasehold:dev}) is on this machine's
 * Docker engine. The build compiles and runs the example before it packages the jar that image is
 * made from, so where {@code deploy/docker/build-image.sh} has not been run the example is skipped;
 * the deploy module's {@code LeaseholdContainerIT} runs the same API on the image it builds.
 */
final class BuiltImage {
  private BuiltImage() {}

  static boolean present() {
    try {
      DockerClientFactory docker = DockerClientFactory.instance();
      return docker.isDockerAvailable()
          && docker.client().inspectImageCmd(LeaseholdContainer.DEFAULT_IMAGE).exec() != null;
    } catch (RuntimeException missing) {
      return false;
    }
  }
}
