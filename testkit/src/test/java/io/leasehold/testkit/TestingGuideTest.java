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
 * The example test of docs/testing.md is the one the build runs ({@code example.NightlyJobTest}):
 * every Java block of the guide's test kit section appears in it, whitespace aside.
 */
class TestingGuideTest {
  private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
  private static final Path GUIDE =
      Path.of("").toAbsolutePath().getParent().resolve("docs/testing.md");
  private static final Path EXAMPLE =
      Path.of("src/test/java/io/leasehold/testkit/example/NightlyJobTest.java");

  @Test
  void theGuidesExampleIsTheTestTheBuildRuns() throws IOException {
    String example = normalized(Files.readString(EXAMPLE));
    List<String> blocks = javaBlocks(Files.readString(GUIDE));
    assertEquals(1, blocks.size(), "docs/testing.md has one Java example");
    for (String block : blocks) {
      assertTrue(
          example.contains(normalized(block)),
          "docs/testing.md: this example differs from NightlyJobTest.java:\n" + block);
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
