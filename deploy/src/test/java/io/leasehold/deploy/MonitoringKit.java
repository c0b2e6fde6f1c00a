package io.leasehold.deploy;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/monitoring/: the dashboard's and the rules' PromQL, and a check of it against a node's
 * exposition.
 */
final class MonitoringKit {
  /** Series Prometheus makes itself for every target; no node exports them. */
  static final Set<String> SCRAPE_SERIES = Set.of("up");

  /** Labels Prometheus attaches to every scraped series. */
  static final Set<String> TARGET_LABELS = Set.of("job", "instance");

  private static final Pattern LABEL_VALUES =
      Pattern.compile("^\\s*label_values\\((.*),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)\\s*$");
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+\\S+(?:\\s+\\S+)?$");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  final Path dir;

  MonitoringKit(Path deploy) {
    this.dir = deploy.resolve("monitoring");
  }

  static MonitoringKit here() {
    return new MonitoringKit(Path.of(System.getProperty("leasehold.deploy", ".")));
  }

  Path dashboardFile() {
    return dir.resolve("grafana/leasehold.json");
  }

  Path rulesFile() {
    return dir.resolve("prometheus/leasehold-alerts.yml");
  }

  /** The dashboard, parsed strictly (no comments, trailing commas or other leniency). */
  JsonNode dashboard() {
    return dashboard(read(dashboardFile()));
  }

  static JsonNode dashboard(String json) {
    ObjectMapper strict =
        JsonMapper.builder()
            .disable(
                JsonReadFeature.ALLOW_JAVA_COMMENTS,
                JsonReadFeature.ALLOW_TRAILING_COMMA,
                JsonReadFeature.ALLOW_SINGLE_QUOTES)
            .build();
    try {
      return strict.readTree(json);
    } catch (IOException e) {
      throw new AssertionError("the dashboard is not JSON: " + e.getMessage(), e);
    }
  }

  /** Every panel, those inside collapsed rows too. */
  static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> all = new ArrayList<>();
    for (JsonNode p : dashboard.path("panels")) {
      all.add(p);
      for (JsonNode inner : p.path("panels")) {
        all.add(inner);
      }
    }
    return all;
  }

  /** PromQL of the dashboard by where it is: "panel title / refId" or "variable name". */
  static Map<String, String> dashboardQueries(JsonNode dashboard) {
    Map<String, String> queries = new LinkedHashMap<>();
    for (JsonNode p : panels(dashboard)) {
      for (JsonNode t : p.path("targets")) {
        queries.put(
            "panel \"" + p.path("title").asText() + "\" / " + t.path("refId").asText(),
            t.path("expr").asText());
      }
    }
    for (JsonNode v : dashboard.path("templating").path("list")) {
      if (v.path("type").asText().equals("query")) {
        JsonNode q = v.path("query");
        queries.put(
            "variable " + v.path("name").asText(),
            q.isTextual() ? q.asText() : q.path("query").asText());
      }
    }
    return queries;
  }

  /** The rules file as YAML. */
  @SuppressWarnings("unchecked")
  Map<String, Object> rules() {
    return (Map<String, Object>) new Yaml().load(read(rulesFile()));
  }

  /** The rules' expressions by alert (or recording rule) name. */
  @SuppressWarnings("unchecked")
  static Map<String, String> ruleQueries(Map<String, Object> rules) {
    Map<String, String> queries = new LinkedHashMap<>();
    for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        Object name = rule.containsKey("alert") ? rule.get("alert") : rule.get("record");
        queries.put("rule " + name, String.valueOf(rule.get("expr")));
      }
    }
    return queries;
  }

  /** Sample names of a Prometheus text exposition, each with the label sets of its samples. */
  static Map<String, List<Map<String, String>>> exposition(String text) {
    Map<String, List<Map<String, String>>> samples = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line.strip());
      if (!m.matches()) {
        throw new AssertionError("not a sample line of the exposition: " + line);
      }
      Map<String, String> labels = new HashMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(labels);
    }
    return samples;
  }

  /**
   * What the queries name that the exposition lacks: a series name no sample has (a histogram is
   * exported as name_bucket, name_sum and name_count, a counter as name_total: the bare family name
   * is no series), or an equality matcher no sample of that series satisfies. Empty when all is
   * there.
   */
  static List<String> missing(
      Map<String, String> queries, Map<String, List<Map<String, String>>> exposition) {
    List<String> problems = new ArrayList<>();
    queries.forEach(
        (where, query) -> {
          Matcher lv = LABEL_VALUES.matcher(query);
          List<PromQl.Selector> selectors = PromQl.selectors(lv.matches() ? lv.group(1) : query);
          if (selectors.isEmpty()) {
            problems.add(where + ": names no series: " + query);
          }
          for (PromQl.Selector s : selectors) {
            if (SCRAPE_SERIES.contains(s.metric())) {
              continue;
            }
            List<Map<String, String>> samples = exposition.get(s.metric());
            if (samples == null) {
              problems.add(where + ": no series " + s.metric() + " in the node's /metrics");
              continue;
            }
            Map<String, String> required = new HashMap<>(s.equals());
            required.keySet().removeAll(TARGET_LABELS);
            if (samples.stream()
                .noneMatch(labels -> labels.entrySet().containsAll(required.entrySet()))) {
              problems.add(where + ": no sample of " + s.metric() + " has " + required);
            }
            if (lv.matches()
                && !TARGET_LABELS.contains(lv.group(2))
                && samples.stream().noneMatch(labels -> labels.containsKey(lv.group(2)))) {
              problems.add(
                  where + ": no sample of " + s.metric() + " has the label " + lv.group(2));
            }
          }
        });
    return problems;
  }

  static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
