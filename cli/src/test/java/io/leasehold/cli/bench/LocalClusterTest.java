package io.leasehold.cli.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class LocalClusterTest {
  @Test
  void theFailoverClusterStartsNodesWithTheLaunchersDefaultJvmFlags() throws Exception {
    // The launcher takes its defaults from deploy/jvm.sh, which it sources.
    String jvm = Files.readString(Path.of("..", "deploy", "jvm.sh"));
    assertTrue(
        jvm.contains("LEASEHOLD_DEFAULT_JVM_FLAGS=\"" + LocalCluster.LAUNCHER_JVM_FLAGS + "\""),
        "deploy/jvm.sh and LocalCluster.LAUNCHER_JVM_FLAGS must agree; jvm.sh says: "
            + jvm.lines()
                .filter(l -> l.startsWith("LEASEHOLD_DEFAULT_JVM_FLAGS="))
                .findFirst()
                .orElse("(no default)"));
    assertTrue(
        jvm.contains(
            "echo \"$LEASEHOLD_DEFAULT_JVM_FLAGS " + LocalCluster.LAUNCHER_JVM_FLAGS_25 + "\""),
        "deploy/jvm.sh adds LocalCluster.LAUNCHER_JVM_FLAGS_25 on Java 25");
    String launcher = Files.readString(Path.of("..", "leasehold"));
    assertTrue(
        launcher.contains("${LEASEHOLD_JAVA_OPTS:-$(leasehold_default_flags)}"),
        "the launcher runs with LEASEHOLD_JAVA_OPTS, else deploy/jvm.sh's defaults");
  }
}
