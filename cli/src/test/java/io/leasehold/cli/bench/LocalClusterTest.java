package io.leasehold.cli.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class LocalClusterTest {
  @Test
  void theFailoverClusterStartsNodesWithTheLaunchersDefaultJvmFlags() throws Exception {
    Path launcher = Path.of("..", "leasehold");
    String script = Files.readString(launcher);
    assertTrue(script.contains("${LEASEHOLD_JAVA_OPTS:-" + LocalCluster.LAUNCHER_JVM_FLAGS + "}"),
        "the launcher and LocalCluster.LAUNCHER_JVM_FLAGS must agree; the launcher says: "
            + script.lines().filter(l -> l.contains("LEASEHOLD_JAVA_OPTS:-")).findFirst().orElse("(no default)"));
  }
}
