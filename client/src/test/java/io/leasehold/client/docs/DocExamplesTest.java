package io.leasehold.client.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * Every Java block of README.md and docs/client.md is in {@link DocExamples}, so the build compiles
 * it.
 */
class DocExamplesTest {
  private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path EXAMPLES =
      Path.of("src/test/java/io/leasehold/client/docs/DocExamples.java");

  /** Whitespace runs as one space, so indentation inside a method does not matter. */
  static String normalized(String code) {
    return code.replaceAll("\\s+", " ").trim();
  }

  static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = JAVA_BLOCK.matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  private static void assertEveryBlockIsAnExample(String doc, int atLeast) throws IOException {
    String examples = normalized(Files.readString(EXAMPLES));
    List<String> blocks = javaBlocks(Files.readString(ROOT.resolve(doc)));
    assertTrue(blocks.size() >= atLeast, doc + " has its Java examples: " + blocks.size());
    for (String block : blocks) {
      assertTrue(
          examples.contains(normalized(block)),
          doc + ": this example is not in DocExamples.java:\n" + block);
    }
  }

  @Test
  void everyJavaExampleOfTheReadmeCompilesInDocExamples() throws IOException {
    assertEveryBlockIsAnExample("README.md", 3);
  }

  @Test
  void everyJavaExampleOfTheClientGuideCompilesInDocExamples() throws IOException {
    assertEveryBlockIsAnExample("docs/client.md", 3);
  }

  @Test
  void aChangedExampleIsNoticed() {
    String examples = normalized("static void f() {\n  Lease l = client.acquire(\"a/b\");\n}");
    assertTrue(examples.contains(normalized("Lease l =\n    client.acquire(\"a/b\");")));
    assertFalse(examples.contains(normalized("Lease l = client.acquire(\"a/c\");")));
    assertEquals(List.of("x();\n"), javaBlocks("text\n```java\nx();\n```\nmore\n```sh\nls\n```\n"));
  }
}
