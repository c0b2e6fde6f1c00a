package io.leasehold.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The example tests of docs/testing.md are tests the build compiles and runs ({@code
 * example.NightlyJobTest}, in-JVM nodes; {@code example.NightlyJobContainerTest}, the containers):
 * each Java block of the guide appears in one of them, whitespace aside, in that order.
 */
class TestingGuideTest {
  private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
  private static final Path GUIDE =
      Path.of("").toAbsolutePath().getParent().resolve("docs/testing.md");
  private static final List<Path> EXAMPLES =
      List.of(
          Path.of("src/test/java/io/leasehold/testkit/example/NightlyJobTest.java"),
          Path.of("src/test/java/io/leasehold/testkit/example/NightlyJobContainerTest.java"));

  @Test
  void theGuidesExamplesAreTheTestsTheBuildRuns() throws IOException {
    List<String> blocks = javaBlocks(Files.readString(GUIDE));
    assertEquals(EXAMPLES.size(), blocks.size(), "docs/testing.md has a Java example per test");
    for (int i = 0; i < blocks.size(); i++) {
      String example = normalized(Files.readString(EXAMPLES.get(i)));
      assertTrue(
          example.contains(normalized(blocks.get(i))),
          "docs/testing.md: this example differs from "
              + EXAMPLES.get(i).getFileName()
              + ":\n"
              + blocks.get(i));
    }
  }

  private static String normalized(String code) {
    return code.replaceAll("\\s+", " ").trim();
  }

  private static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = JAVA_BLOCK.matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }
}
