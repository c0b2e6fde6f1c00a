package io.leasehold.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployment files of deploy/ as data: the Dockerfile's HEALTHCHECK, compose services,
 * Kubernetes objects.
 */
final class Manifests {
  /** The options of mutual TLS on both transports that take a file. */
  /**
   * The TLS options that take a value (the files, and the initial admin that client certificates
   * name).
   */
  static final List<String> TLS_FILE_OPTIONS =
      List.of(
          "--tls-cert-file",
          "--tls-key-file",
          "--tls-ca-file",
          "--peer-tls-cert-file",
          "--peer-tls-key-file",
          "--peer-tls-ca-file",
          "--initial-admin");

  final Path deploy;

  Manifests(Path deploy) {
    this.deploy = deploy;
  }

  static Manifests here() {
    return new Manifests(Path.of(System.getProperty("leasehold.deploy", ".")));
  }

  String read(String file) {
    try {
      return Files.readString(deploy.resolve(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The argument vector of the Dockerfile's {@code HEALTHCHECK ... CMD [...]} (the exec form). */
  List<String> healthcheck() {
    String dockerfile = read("docker/Dockerfile").replace("\\\n", " ");
    Matcher m = Pattern.compile("(?m)^HEALTHCHECK .*?CMD (\\[.*])\\s*$").matcher(dockerfile);
    if (!m.find()) {
      throw new AssertionError("the Dockerfile has no HEALTHCHECK in the exec form");
    }
    // A JSON array of strings is also YAML.
    return strings(new Yaml().load(m.group(1)));
  }

  /** {@code ENV NAME=value} of the Dockerfile (the first value given). */
  String dockerEnv(String name) {
    Matcher m =
        Pattern.compile("(?:^|\\s)" + Pattern.quote(name) + "=(\\S+)")
            .matcher(read("docker/Dockerfile").replace("\\\n", " "));
    if (!m.find()) {
      throw new AssertionError("the Dockerfile sets no " + name);
    }
    return m.group(1);
  }

  /** The services of a compose file, by name. */
  @SuppressWarnings("unchecked")
  Map<String, Map<String, Object>> composeServices(String file) {
    Map<String, Object> doc = new Yaml().load(read(file));
    return (Map<String, Map<String, Object>>) doc.get("services");
  }

  /** Every object of a Kubernetes manifest, by "Kind/name". */
  @SuppressWarnings("unchecked")
  Map<String, Map<String, Object>> kubernetes(String file) {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    for (Object o : new Yaml().loadAll(read(file))) {
      Map<String, Object> doc = (Map<String, Object>) o;
      out.put(doc.get("kind") + "/" + ((Map<String, Object>) doc.get("metadata")).get("name"), doc);
    }
    return out;
  }

  /** The value at a path of map keys and list indexes. */
  @SuppressWarnings("unchecked")
  static <T> T at(Object root, Object... path) {
    Object o = root;
    for (Object p : path) {
      if (o == null) {
        return null;
      }
      o = p instanceof Integer i ? ((List<Object>) o).get(i) : ((Map<String, Object>) o).get(p);
    }
    return (T) o;
  }

  @SuppressWarnings("unchecked")
  static List<String> strings(Object list) {
    List<String> out = new ArrayList<>();
    for (Object o : (List<Object>) list) {
      out.add(String.valueOf(o));
    }
    return out;
  }

  /** The value of {@code option} in an argument list ({@code --option value}), or null. */
  static String option(List<String> args, String option) {
    int i = args.indexOf(option);
    return i < 0 || i + 1 >= args.size() ? null : args.get(i + 1);
  }

  /**
   * {@code args} without the TLS options (and their files), {@code --client-cert-auth} and {@code
   * --metrics-plaintext}.
   */
  static List<String> withoutTls(List<String> args) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (TLS_FILE_OPTIONS.contains(a)) {
        i++;
      } else if (!a.equals("--client-cert-auth") && !a.equals("--metrics-plaintext")) {
        out.add(a);
      }
    }
    return out;
  }

  /**
   * Only the TLS options of {@code args}, with their files, {@code --client-cert-auth} and {@code
   * --metrics-plaintext}.
   */
  static List<String> tlsOnly(List<String> args) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (TLS_FILE_OPTIONS.contains(a) && i + 1 < args.size()) {
        out.add(a);
        out.add(args.get(++i));
      } else if (a.equals("--client-cert-auth") || a.equals("--metrics-plaintext")) {
        out.add(a);
      }
    }
    return out;
  }
}
