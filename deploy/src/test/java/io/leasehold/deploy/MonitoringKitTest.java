package io.leasehold.deploy;

import static io.leasehold.deploy.Manifests.at;
import static io.leasehold.deploy.Manifests.strings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/monitoring/ offline: the PromQL reader the live check (MonitoringMetricsIT) relies on, the
 * dashboard's shape, the alert rules (with promtool when it is installed), the compose file's
 * wiring, and the systemd unit (with systemd-analyze when it is installed).
 */
class MonitoringKitTest {
  final MonitoringKit kit = MonitoringKit.here();
  final Manifests manifests = Manifests.here();

  @TempDir Path tmp;

  static Set<String> metrics(String expr) {
    return PromQl.selectors(expr).stream()
        .map(PromQl.Selector::metric)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void thePromQlReaderFindsSeriesNamesAndNotFunctionsKeywordsLabelsOrDurations() {
    assertEquals(
        Set.of("foo_total", "bar", "baz"),
        metrics(
            "sum by (job, le) (rate(foo_total{a=\"b\", c=~\"d|e\"}[5m])) > 3 * max without(instance) (bar offset 1h30m) and on (job) group_right baz"));
    assertEquals(
        Set.of("x_bucket"),
        metrics(
            "histogram_quantile(0.99, sum by (le, instance) (rate(x_bucket{instance=~\"$instance\"}[$__rate_interval])))"));
    assertEquals(Set.of("up"), metrics("max by (job) (up{job=\"leasehold\"}) * 0"));
    assertEquals(
        Set.of("y", "z"),
        metrics("1e3 > bool count(y) unless ignoring (role) z or vector(0) + -0x1F + .5 + Inf"));
    assertEquals(Set.of("w"), metrics("increase(w[1h:5m]) > 1 # a comment with a name_in_it"));
    assertEquals(
        Set.of("a_total"), metrics("label_replace(a_total, \"dst\", \"$1\", \"src\", \"(.*)\")"));
    assertEquals(Set.of("m"), metrics("count_values(\"v\", m) and topk(3, m)"));
    List<PromQl.Selector> s =
        PromQl.selectors("leasehold_raft_role{role=\"leader\",instance=~\"$instance\"} == 1");
    assertEquals(List.of(new PromQl.Selector("leasehold_raft_role", Map.of("role", "leader"))), s);
    assertThrows(
        IllegalArgumentException.class, () -> PromQl.selectors("{__name__=~\"leasehold_.*\"}"));
  }

  /**
   * The live check's verdict on canned expositions: it must fail for a name or label the node
   * lacks.
   */
  @Test
  void theExpositionCheckReportsBareHistogramNamesMisspelledSeriesAndUnmatchedLabels() {
    Map<String, List<Map<String, String>>> exposition =
        MonitoringKit.exposition(
            """
        # HELP leasehold_write_seconds Time to write.
        # TYPE leasehold_write_seconds histogram
        leasehold_write_seconds_bucket{le="0.001"} 3
        leasehold_write_seconds_bucket{le="+Inf"} 4
        leasehold_write_seconds_count 4
        leasehold_write_seconds_sum 0.01
        # TYPE leasehold_leases_expired counter
        leasehold_leases_expired_total 2.0
        jvm_memory_used_bytes{area="heap"} 1.0E7
        leasehold_raft_role{role="leader"} 1 1700000000000
        """);
    Map<String, String> good = new LinkedHashMap<>();
    good.put(
        "p50",
        "histogram_quantile(0.5, sum by (le) (rate(leasehold_write_seconds_bucket{instance=~\"$instance\"}[5m])))");
    good.put(
        "rate", "rate(leasehold_write_seconds_count[5m]) / rate(leasehold_write_seconds_sum[5m])");
    good.put(
        "expired",
        "max by (job) (rate(leasehold_leases_expired_total{job=\"leasehold\"}[5m])) > 0 or up == 0");
    good.put("heap", "jvm_memory_used_bytes{area=\"heap\"}");
    good.put("var", "label_values(leasehold_raft_role, instance)");
    assertEquals(List.of(), MonitoringKit.missing(good, exposition));

    Map<String, String> bad = new LinkedHashMap<>();
    bad.put("bare histogram", "rate(leasehold_write_seconds[5m])");
    bad.put("counter without _total", "rate(leasehold_leases_expired[5m])");
    bad.put("planted", "leasehold_no_such_metric");
    bad.put("label value", "jvm_memory_used_bytes{area=\"heapp\"}");
    bad.put("variable label", "label_values(leasehold_raft_role, namespace)");
    bad.put("nothing", "vector(1)");
    List<String> problems = MonitoringKit.missing(bad, exposition);
    assertEquals(bad.size(), problems.size(), String.join("\n", problems));
    for (String where : bad.keySet()) {
      assertTrue(
          problems.stream().anyMatch(p -> p.startsWith(where + ":")),
          where + " not reported: " + problems);
    }
  }

  @Test
  void
      theDashboardIsStrictJsonWithTheDatasourceAndInstanceVariablesAndEveryPanelQueriesThroughThem() {
    JsonNode d = kit.dashboard();
    assertEquals("leasehold", d.path("uid").asText());
    assertFalse(d.path("title").asText().isBlank());
    assertTrue(
        d.path("schemaVersion").asInt() >= 36,
        "a schema current Grafana imports without migrating panels");
    assertFalse(
        d.has("id") && !d.get("id").isNull(), "an id would tie the file to one Grafana's database");
    Map<String, JsonNode> vars = new LinkedHashMap<>();
    d.path("templating").path("list").forEach(v -> vars.put(v.path("name").asText(), v));
    assertEquals("datasource", vars.get("datasource").path("type").asText());
    assertEquals("prometheus", vars.get("datasource").path("query").asText());
    assertEquals("query", vars.get("instance").path("type").asText());
    assertEquals("${datasource}", vars.get("instance").path("datasource").path("uid").asText());
    assertTrue(
        vars.get("instance").path("includeAll").asBoolean()
            && vars.get("instance").path("multi").asBoolean());

    Set<Integer> ids = new HashSet<>();
    int queried = 0;
    for (JsonNode p : MonitoringKit.panels(d)) {
      String title = p.path("title").asText();
      assertFalse(title.isBlank(), "a panel without a title: " + p);
      assertTrue(ids.add(p.path("id").asInt()), "panel ids are unique: " + title);
      for (String k : List.of("x", "y", "w", "h")) {
        assertTrue(p.path("gridPos").path(k).isInt(), title + ": gridPos." + k);
      }
      if (p.path("type").asText().equals("row")) {
        continue;
      }
      assertEquals("prometheus", p.path("datasource").path("type").asText(), title);
      assertEquals(
          "${datasource}",
          p.path("datasource").path("uid").asText(),
          title + ": the panel's data source is the variable");
      assertTrue(
          p.path("targets").isArray() && !p.path("targets").isEmpty(), title + ": no targets");
      Set<String> refIds = new HashSet<>();
      for (JsonNode t : p.path("targets")) {
        assertEquals(
            "${datasource}",
            t.path("datasource").path("uid").asText(),
            title + ": the target's data source is the variable");
        assertTrue(
            refIds.add(t.path("refId").asText()) && !t.path("refId").asText().isEmpty(),
            title + ": refIds");
        String expr = t.path("expr").asText();
        assertFalse(expr.isBlank(), title + ": an empty expression");
        assertTrue(
            expr.contains("instance=~\"$instance\""),
            title + ": not filtered by the instance variable: " + expr);
        queried++;
      }
    }
    assertTrue(queried >= 20, "queries: " + queried);
  }

  /** The list, item by item: a panel query names each of these series. */
  @Test
  void theDashboardCoversLeadershipRatesLatencyNamespacesExpiriesWatchersAndMemory() {
    Set<String> named = new TreeSet<>();
    MonitoringKit.dashboardQueries(kit.dashboard()).values().forEach(q -> named.addAll(metrics(q)));
    for (String series :
        List.of(
            "leasehold_raft_leader_changes_total",
            "leasehold_raft_role",
            "leasehold_raft_commit_index",
            "leasehold_raft_applied_index",
            "leasehold_write_seconds_bucket",
            "leasehold_apply_seconds_bucket",
            "leasehold_leases_live_by_namespace",
            "leasehold_leases_expired_total",
            "leasehold_late_heartbeats_total",
            "leasehold_watchers",
            "leasehold_watch_lag_events",
            "jvm_memory_used_bytes",
            "leasehold_rocksdb_memory_bytes",
            "leasehold_raft_division_closed",
            "leasehold_data_dir_free_bytes")) {
      assertTrue(named.contains(series), series + " is on no panel: " + named);
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyAlertWaitsHasASeverityAndSaysWhichNodeAndWhatToDo() {
    Map<String, Map<String, Object>> alerts = new LinkedHashMap<>();
    for (Map<String, Object> group : (List<Map<String, Object>>) kit.rules().get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        assertNotNull(rule.get("alert"), "only alerts here: " + rule);
        alerts.put((String) rule.get("alert"), rule);
      }
    }
    assertTrue(
        alerts
            .keySet()
            .containsAll(
                List.of(
                    "LeaseholdNoLeader",
                    "LeaseholdFrequentLeaderChanges",
                    "LeaseholdFollowerLag",
                    "LeaseholdExpirySpike",
                    "LeaseholdLateHeartbeats",
                    "LeaseholdDivisionClosed",
                    "LeaseholdDiskNearlyFull")),
        alerts.keySet().toString());
    alerts.forEach(
        (name, rule) -> {
          assertTrue(
              String.valueOf(rule.get("for")).matches("\\d+[smh]"),
              name + ": for: " + rule.get("for"));
          Map<String, String> labels = (Map<String, String>) rule.get("labels");
          assertTrue(
              Set.of("warning", "critical").contains(labels.get("severity")),
              name + ": severity " + labels);
          Map<String, String> annotations = (Map<String, String>) rule.get("annotations");
          String summary = annotations.get("summary");
          String description = annotations.get("description");
          assertTrue(
              summary != null && description != null && description.length() > 80,
              name + ": " + annotations);
          String expr = String.valueOf(rule.get("expr"));
          // A rule about one node names it; one about the cluster names the job (its labels keep
          // only that).
          String subject =
              expr.contains("by (job)")
                      && !expr.contains("by (job, instance)")
                      && !expr.contains("group_right")
                  ? "{{ $labels.job }}"
                  : "{{ $labels.instance }}";
          assertTrue(
              summary.contains(subject) || description.contains(subject),
              name + " names " + subject + ": " + annotations);
        });
  }

  @Test
  void promtoolChecksTheRulesTheirUnitTestsAndThePrometheusConfig() throws Exception {
    assumeTrue(
        onPath("promtool"),
        "promtool not installed: .ci/run installs Debian's prometheus package for it");
    Path prometheus = kit.dir.resolve("prometheus");
    Run rules = run(prometheus, "promtool", "check", "rules", "leasehold-alerts.yml");
    assertEquals(0, rules.exit(), rules.output());
    assertTrue(rules.output().contains("SUCCESS"), rules.output());
    Run tests = run(prometheus, "promtool", "test", "rules", "leasehold-alerts.test.yml");
    assertEquals(0, tests.exit(), tests.output());
    Run config = run(prometheus, "promtool", "check", "config", "prometheus.yml");
    assertEquals(0, config.exit(), config.output());
    assertTrue(
        config.output().contains("1 rule files found"),
        "prometheus.yml loads the rules: " + config.output());

    // The dashboard's PromQL parses too: each panel query, Grafana's variables put in, as a
    // recording rule.
    StringBuilder recorded = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
    int n = 0;
    for (Map.Entry<String, String> q : MonitoringKit.dashboardQueries(kit.dashboard()).entrySet()) {
      if (q.getKey().startsWith("panel ")) {
        String expr = q.getValue().replace("$__rate_interval", "1m").replace("$instance", ".+");
        recorded
            .append("      - record: dashboard:query_")
            .append(n++)
            .append("\n        expr: '")
            .append(expr.replace("'", "''"))
            .append("'\n");
      }
    }
    Path dashboardRules = tmp.resolve("dashboard-queries.yml");
    Files.writeString(dashboardRules, recorded);
    Run dashboardCheck = run(tmp, "promtool", "check", "rules", dashboardRules.toString());
    assertEquals(0, dashboardCheck.exit(), dashboardCheck.output() + "\n" + recorded);
    assertTrue(
        dashboardCheck.output().contains("SUCCESS: " + n + " rules found"),
        dashboardCheck.output());

    // And promtool does reject a broken rule: this is no check that cannot fail.
    Path broken = tmp.resolve("broken.yml");
    Files.writeString(
        broken,
        MonitoringKit.read(kit.rulesFile())
            .replaceFirst("expr: up\\{job=\"leasehold\"} == 0", "expr: up{job=\"leasehold\" == 0"));
    assertEquals(1, run(tmp, "promtool", "check", "rules", broken.toString()).exit());
  }

  @Test
  @SuppressWarnings("unchecked")
  void theComposeFileWiresPrometheusToTheThreeNodesMetricsPortsAndGrafanaToPrometheus() {
    Map<String, Object> compose =
        new Yaml().load(MonitoringKit.read(kit.dir.resolve("compose.yaml")));
    List<String> include = strings(compose.get("include"));
    assertEquals(List.of("../docker/compose.yaml"), include);
    assertTrue(Files.isRegularFile(kit.dir.resolve(include.get(0))));
    Map<String, Map<String, Object>> nodes = manifests.composeServices("docker/compose.yaml");
    Map<String, Map<String, Object>> services =
        (Map<String, Map<String, Object>>) compose.get("services");
    assertEquals(
        Set.of("prometheus", "grafana"),
        services.keySet(),
        "the nodes come from the included file");
    for (Map<String, Object> s : services.values()) {
      String image = (String) s.get("image");
      assertTrue(image.matches("[a-z/]+:v?\\d+\\.\\d+\\.\\d+"), "a pinned image tag: " + image);
    }

    // Prometheus: its config and rules are this directory's, and it scrapes every node on the
    // image's metrics port.
    Map<String, Object> prom = services.get("prometheus");
    assertTrue(
        strings(prom.get("volumes")).contains("./prometheus:/etc/prometheus:ro"), prom.toString());
    assertTrue(
        strings(prom.get("command")).contains("--config.file=/etc/prometheus/prometheus.yml"),
        prom.toString());
    Map<String, Object> config =
        new Yaml().load(MonitoringKit.read(kit.dir.resolve("prometheus/prometheus.yml")));
    List<String> ruleFiles = strings(config.get("rule_files"));
    assertEquals(List.of("leasehold-alerts.yml"), ruleFiles, "relative to the mounted config");
    assertTrue(Files.isRegularFile(kit.dir.resolve("prometheus").resolve(ruleFiles.get(0))));
    List<Map<String, Object>> jobs = (List<Map<String, Object>>) config.get("scrape_configs");
    Map<String, Object> job =
        jobs.stream().filter(j -> "leasehold".equals(j.get("job_name"))).findFirst().orElseThrow();
    assertEquals("/metrics", job.getOrDefault("metrics_path", "/metrics"));
    List<String> targets = strings(at(job, "static_configs", 0, "targets"));
    String metricsPort = manifests.dockerEnv("LEASEHOLD_METRICS_PORT");
    List<String> expected = new ArrayList<>();
    for (Map.Entry<String, Map<String, Object>> node : nodes.entrySet()) {
      assertFalse(
          strings(node.getValue().get("command")).contains("--metrics-port"),
          node.getKey() + " keeps the image's metrics port");
      expected.add(node.getKey() + ":" + metricsPort);
    }
    assertEquals(3, expected.size());
    assertEquals(expected, targets);
    assertTrue(strings(prom.get("depends_on")).containsAll(nodes.keySet()));

    // Grafana: the provisioning directory, the dashboard where its provider reads, the data source
    // at Prometheus.
    Map<String, Object> grafana = services.get("grafana");
    List<String> mounts = strings(grafana.get("volumes"));
    assertTrue(
        mounts.contains("./grafana/provisioning:/etc/grafana/provisioning:ro"), mounts.toString());
    Map<String, Object> provider =
        new Yaml()
            .load(
                MonitoringKit.read(
                    kit.dir.resolve("grafana/provisioning/dashboards/leasehold.yaml")));
    String dashboards = at(provider, "providers", 0, "options", "path");
    assertTrue(
        mounts.contains("./grafana/leasehold.json:" + dashboards + "/leasehold.json:ro"),
        mounts + " vs " + dashboards);
    Map<String, Object> datasources =
        new Yaml()
            .load(
                MonitoringKit.read(
                    kit.dir.resolve("grafana/provisioning/datasources/prometheus.yaml")));
    assertEquals("prometheus", at(datasources, "datasources", 0, "type"));
    assertEquals("http://prometheus:9090", at(datasources, "datasources", 0, "url"));
    assertEquals(
        Boolean.TRUE,
        at(datasources, "datasources", 0, "isDefault"),
        "the dashboard's datasource variable starts on it");
    assertTrue(strings(prom.get("ports")).contains("9090:9090"));
  }

  /**
   * systemd-analyze verify on an instance of the unit. It reports a bad value or an unknown key as
   * a warning and still exits 0, so every line it prints about the unit fails the test; it exits
   * non-zero when the ExecStart binary is missing, so where this JVM is not /usr/bin/java the copy
   * runs this JVM instead (the check is of the unit, not of where Java is installed).
   */
  @Test
  void theSystemdUnitVerifies() throws Exception {
    assumeTrue(
        onPath("systemd-analyze"),
        "systemd-analyze not installed: the systemd unit is not verified here");
    String unit = MonitoringKit.read(manifests.deploy.resolve("systemd/leasehold@.service"));
    assertTrue(unit.contains("ExecStart=/usr/bin/java "), "the unit runs /usr/bin/java");
    if (!Files.isExecutable(Path.of("/usr/bin/java"))) {
      unit =
          unit.replace(
              "ExecStart=/usr/bin/java ",
              "ExecStart=" + Path.of(System.getProperty("java.home"), "bin", "java") + " ");
    }
    Path copy = tmp.resolve("leasehold@n1.service");
    Files.writeString(copy, unit);
    Run verified = run(tmp, "systemd-analyze", "verify", "--man=no", copy.toString());
    assertEquals(0, verified.exit(), verified.output());
    assertEquals(
        "",
        linesAbout(verified.output(), "leasehold@n1.service"),
        "systemd-analyze's complaints about the unit");

    // What it would say about a mistake, so that this check can fail.
    Files.writeString(copy, unit.replace("RestartSec=2s", "RestartSec=two"));
    Run broken = run(tmp, "systemd-analyze", "verify", "--man=no", copy.toString());
    assertFalse(linesAbout(broken.output(), "leasehold@n1.service").isEmpty(), broken.output());
  }

  static String linesAbout(String output, String unit) {
    return output.lines().filter(l -> l.contains(unit)).collect(Collectors.joining("\n"));
  }

  record Run(int exit, String output) {}

  static boolean onPath(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  static Run run(Path dir, String... command) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not finish");
    }
    return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }
}
