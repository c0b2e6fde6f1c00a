package io.leasehold.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape the design fixes, read from the main sources' imports and fully qualified names: the
 * API does not reach for the node, the state machine's core knows no Ratis, gRPC or RocksDB, the
 * packages that serve clients and operators know Ratis only through the consensus seam ({@code
 * raft}), and the server's packages form no cycle. Each rule is also run on a made-up source that
 * breaks it, so a rule that can no longer fail is noticed.
 */
class ArchitectureTest {
  private static final Path SERVER = Path.of("src/main/java");
  private static final Path STATEMACHINE = Path.of("../statemachine/src/main/java");

  private static final Pattern PACKAGE =
      Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
  private static final Pattern IMPORT =
      Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)(?:\\.\\*)?\\s*;", Pattern.MULTILINE);

  /** A qualified name written in code: lower-case segments, then a type. */
  private static final Pattern QUALIFIED = Pattern.compile("\\b((?:[a-z_][\\w]*\\.){2,}[A-Z]\\w*)");

  /** String literals and comments: their text names no dependency. */
  private static final Pattern NOT_CODE =
      Pattern.compile("\"(?:\\\\.|[^\"\\\\])*\"|/\\*[\\s\\S]*?\\*/|//[^\\n]*");

  private static final List<String> CORE_FORBIDDEN =
      List.of("org.apache.ratis", "io.grpc", "org.rocksdb");

  /**
   * The server's packages that see consensus only through the seam's interface and types, never
   * Ratis's.
   */
  private static final Set<String> BEHIND_THE_SEAM =
      Set.of("api", "health", "ui", "tls", "backup", "rpc");

  /** One source file: its package and every type or package it names. */
  record Source(String file, String pkg, Set<String> references) {
    static Source parse(String file, String text) {
      String code =
          NOT_CODE.matcher(text).replaceAll(m -> m.group().startsWith("\"") ? "\"\"" : " ");
      Matcher p = PACKAGE.matcher(code);
      String pkg = p.find() ? p.group(1) : "";
      Set<String> refs = new TreeSet<>();
      Matcher i = IMPORT.matcher(code);
      while (i.find()) {
        refs.add(i.group(1));
      }
      String body = IMPORT.matcher(PACKAGE.matcher(code).replaceAll("")).replaceAll("");
      Matcher q = QUALIFIED.matcher(body);
      while (q.find()) {
        refs.add(q.group(1));
      }
      return new Source(file, pkg, refs);
    }
  }

  @Test
  void theApiDoesNotImportTheNode() {
    assertEquals(List.of(), apiReachingTheNode(sources(SERVER)));
  }

  @Test
  void theStateMachineCoreImportsNoRatisGrpcOrRocksDb() {
    assertEquals(List.of(), coreReachingInfrastructure(sources(STATEMACHINE)));
  }

  @Test
  void onlyTheSeamKnowsRatis() {
    assertEquals(List.of(), reachingPastTheSeam(sources(SERVER)));
  }

  @Test
  void theServerPackagesFormNoCycle() {
    assertEquals(Optional.empty(), packageCycle(sources(SERVER)));
  }

  @Test
  void theScanSeesTheSources() {
    // A wrong path would let every rule pass on nothing.
    List<Source> server = sources(SERVER);
    assertTrue(
        server.stream().anyMatch(s -> s.file().endsWith("ClusterService.java")),
        "server sources found");
    assertTrue(
        sources(STATEMACHINE).stream()
            .anyMatch(s -> s.pkg().equals("io.leasehold.statemachine.core")),
        "core sources found");
    assertTrue(
        server.stream()
            .filter(s -> s.file().endsWith("LeaseholdNode.java"))
            .anyMatch(s -> s.references().contains("io.leasehold.server.api.ClusterService")),
        "imports are read");
    assertTrue(
        server.stream()
            .filter(s -> s.pkg().equals("io.leasehold.server.raft"))
            .anyMatch(
                s -> s.references().stream().anyMatch(r -> r.startsWith("org.apache.ratis."))),
        "the seam's Ratis imports are read");
  }

  @Test
  void eachRuleFailsOnASourceThatBreaksIt() {
    Source apiImport =
        Source.parse(
            "api/Bad.java",
            "package io.leasehold.server.api;\nimport io.leasehold.server.LeaseholdNode;\nclass Bad {}");
    Source apiInline =
        Source.parse(
            "api/Bad2.java",
            "package io.leasehold.server.api;\nclass Bad2 { io.leasehold.server.LeaseholdNode n; }");
    assertEquals(2, apiReachingTheNode(List.of(apiImport, apiInline)).size());

    Source core =
        Source.parse(
            "core/Bad.java",
            "package io.leasehold.statemachine.core;\nimport org.rocksdb.RocksDB;\n"
                + "class Bad { org.apache.ratis.protocol.RaftPeer p; io.grpc.Status s; }");
    assertEquals(3, coreReachingInfrastructure(List.of(core)).size());

    Source healthImport =
        Source.parse(
            "health/Bad.java",
            "package io.leasehold.server.health;\n"
                + "import org.apache.ratis.server.RaftServer;\nclass Bad {}");
    Source uiInline =
        Source.parse(
            "ui/Bad.java",
            "package io.leasehold.server.ui;\n"
                + "class Bad { java.util.function.Supplier<org.apache.ratis.server.RaftServer.Division> d; }");
    Source rpcStatic =
        Source.parse(
            "rpc/Bad.java",
            "package io.leasehold.server.rpc;\n"
                + "import static org.apache.ratis.util.TimeDuration.ONE_SECOND;\nclass Bad {}");
    Source seam =
        Source.parse(
            "raft/Fine.java",
            "package io.leasehold.server.raft;\nimport org.apache.ratis.server.RaftServer;\nclass Fine {}");
    assertEquals(3, reachingPastTheSeam(List.of(healthImport, uiInline, rpcStatic, seam)).size());

    Source a =
        Source.parse(
            "a/A.java",
            "package io.leasehold.server.a;\nimport io.leasehold.server.b.B;\nclass A {}");
    Source b =
        Source.parse(
            "b/B.java", "package io.leasehold.server.b;\nclass B { io.leasehold.server.c.C c; }");
    Source c =
        Source.parse(
            "c/C.java",
            "package io.leasehold.server.c;\nimport io.leasehold.server.a.A;\nclass C {}");
    assertEquals(Optional.of(List.of("a", "b", "c", "a")), packageCycle(List.of(a, b, c)));
    assertEquals(Optional.empty(), packageCycle(List.of(a, b)));

    Source commented =
        Source.parse(
            "api/Fine.java",
            "package io.leasehold.server.api;\n"
                + "/** Unlike {@link io.leasehold.server.LeaseholdNode}. */\nclass Fine { String s = \"io.leasehold.server.LeaseholdNode\"; }");
    assertFalse(
        commented.references().contains("io.leasehold.server.LeaseholdNode"),
        "comments and strings name nothing");
  }

  static List<String> apiReachingTheNode(List<Source> sources) {
    return violations(
        sources,
        s -> s.pkg().startsWith("io.leasehold.server.api"),
        ref ->
            ref.equals("io.leasehold.server.LeaseholdNode")
                || ref.startsWith("io.leasehold.server.LeaseholdNode."));
  }

  /** Ratis named outside the seam, in one of {@link #BEHIND_THE_SEAM}'s packages or below. */
  static List<String> reachingPastTheSeam(List<Source> sources) {
    return violations(
        sources,
        s -> serverSlice(s.pkg()).filter(BEHIND_THE_SEAM::contains).isPresent(),
        ref -> ref.equals("org.apache.ratis") || ref.startsWith("org.apache.ratis."));
  }

  static List<String> coreReachingInfrastructure(List<Source> sources) {
    return violations(
        sources,
        s -> s.pkg().startsWith("io.leasehold.statemachine.core"),
        ref -> CORE_FORBIDDEN.stream().anyMatch(f -> ref.equals(f) || ref.startsWith(f + ".")));
  }

  /**
   * A cycle among the server's packages, named by their first segment below {@code
   * io.leasehold.server} ({@code api}, {@code auth} …). The root package is the composition root,
   * which wires them all and whose config they read, so it is no part of this.
   */
  static Optional<List<String>> packageCycle(List<Source> sources) {
    Map<String, Set<String>> edges = new TreeMap<>();
    for (Source s : sources) {
      Optional<String> from = serverSlice(s.pkg());
      from.ifPresent(f -> edges.computeIfAbsent(f, k -> new TreeSet<>()));
      for (String ref : s.references()) {
        Optional<String> to = serverSlice(packageOf(ref));
        if (from.isPresent() && to.isPresent() && !from.get().equals(to.get())) {
          edges.get(from.get()).add(to.get());
        }
      }
    }
    Set<String> done = new TreeSet<>();
    for (String start : edges.keySet()) {
      Optional<List<String>> cycle = cycleFrom(start, edges, new ArrayDeque<>(), done);
      if (cycle.isPresent()) {
        return cycle;
      }
    }
    return Optional.empty();
  }

  private static Optional<List<String>> cycleFrom(
      String node, Map<String, Set<String>> edges, Deque<String> path, Set<String> done) {
    if (path.contains(node)) {
      List<String> walked = new ArrayList<>(path);
      Collections.reverse(walked);
      List<String> cycle = new ArrayList<>(walked.subList(walked.indexOf(node), walked.size()));
      cycle.add(node);
      return Optional.of(cycle);
    }
    if (done.contains(node)) {
      return Optional.empty();
    }
    path.push(node);
    for (String next : edges.getOrDefault(node, Set.of())) {
      Optional<List<String>> cycle = cycleFrom(next, edges, path, done);
      if (cycle.isPresent()) {
        return cycle;
      }
    }
    path.pop();
    done.add(node);
    return Optional.empty();
  }

  private static Optional<String> serverSlice(String pkg) {
    String prefix = "io.leasehold.server.";
    return pkg.startsWith(prefix)
        ? Optional.of(pkg.substring(prefix.length()).split("\\.")[0])
        : Optional.empty();
  }

  /** The package of a referenced type or package: its lower-case leading segments. */
  private static String packageOf(String ref) {
    List<String> parts = new ArrayList<>();
    for (String part : ref.split("\\.")) {
      if (!part.isEmpty() && Character.isUpperCase(part.charAt(0))) {
        break;
      }
      parts.add(part);
    }
    return String.join(".", parts);
  }

  private static List<String> violations(
      List<Source> sources, Predicate<Source> in, Predicate<String> forbidden) {
    List<String> found = new ArrayList<>();
    for (Source s : sources) {
      if (in.test(s)) {
        s.references().stream()
            .filter(forbidden)
            .forEach(ref -> found.add(s.file() + " -> " + ref));
      }
    }
    return found;
  }

  private static List<Source> sources(Path root) {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(f -> f.toString().endsWith(".java"))
          .map(
              f -> {
                try {
                  return Source.parse(root.relativize(f).toString(), Files.readString(f));
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              })
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
