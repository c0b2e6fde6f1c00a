package io.leasehold.cli.command.service;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine.Command;

/** {@code leasehold service list}. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "Lists the services that have live instances: how many, and how many are SERVING.")
public final class ServiceListCommand extends ClientCommand {
  @Override
  protected int run(LeaseholdClient client, Output out) {
    Map<String, int[]> counts = new TreeMap<>();
    for (LeaseInfo l : client.blocking().list("service/").leases()) {
      String[] parts = l.name().split("/", 3);
      if (parts.length == 3) {
        int[] c = counts.computeIfAbsent(parts[1], s -> new int[2]);
        c[0]++;
        if (l.attributes().status().map("SERVING"::equals).orElse(false)) {
          c[1]++;
        }
      }
    }
    List<Map<String, Object>> json = new ArrayList<>();
    Table table = Table.of("SERVICE", "INSTANCES", "SERVING");
    counts.forEach(
        (service, c) -> {
          json.add(Json.object("service", service, "instances", c[0], "serving", c[1]));
          table.row(service, c[0], c[1]);
        });
    out.print(json, table);
    return 0;
  }
}
