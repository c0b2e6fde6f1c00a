package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.Route;
import io.leasehold.client.ServiceInstance;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Routes and service instances as JSON and as table rows. */
public final class RegistryView {
  private RegistryView() {}

  public static Map<String, Object> json(Route r) {
    return Json.object(
        "name", r.name(),
        "holder", r.holder(),
        "address", r.address(),
        "token", r.token(),
        "partition", r.partition(),
        "status", r.status().orElse(null),
        "metadata", new TreeMap<>(r.metadata()));
  }

  public static Table routeTable(boolean wide) {
    List<String> base = List.of("NAME", "ADDRESS", "HOLDER", "TOKEN", "PARTITION");
    return wide ? Table.of(LeaseView.concat(base, List.of("STATUS", "METADATA"))) : Table.of(base);
  }

  public static void row(Table t, Route r, boolean wide) {
    List<String> cells =
        new ArrayList<>(
            List.of(r.name(), r.address(), r.holder(), "" + r.token(), "" + r.partition()));
    if (wide) {
      cells.addAll(List.of(Human.orDash(r.status()), Human.metadata(r.metadata())));
    }
    t.row(cells);
  }

  public static Table detail(Route r) {
    return Table.of("FIELD", "VALUE")
        .row("name", r.name())
        .row("address", r.address())
        .row("holder", r.holder())
        .row("token", r.token())
        .row("partition", r.partition())
        .row("status", Human.orDash(r.status()))
        .row("metadata", Human.metadata(r.metadata()));
  }

  public static Map<String, Object> json(ServiceInstance i) {
    return Json.object(
        "service", i.service(),
        "instance", i.instance(),
        "address", i.address(),
        "status", i.status().orElse(null),
        "token", i.token(),
        "holder", i.holder(),
        "expiresAt", i.expiresAt().toString(),
        "metadata", new TreeMap<>(i.metadata()));
  }

  public static Table instanceTable(boolean wide) {
    List<String> base = List.of("SERVICE", "INSTANCE", "ADDRESS", "STATUS", "TOKEN");
    return wide
        ? Table.of(LeaseView.concat(base, List.of("HOLDER", "EXPIRES", "METADATA")))
        : Table.of(base);
  }

  public static void row(Table t, ServiceInstance i, boolean wide) {
    List<String> cells =
        new ArrayList<>(
            List.of(
                i.service(), i.instance(), i.address(), Human.orDash(i.status()), "" + i.token()));
    if (wide) {
      cells.addAll(List.of(i.holder(), Human.time(i.expiresAt()), Human.metadata(i.metadata())));
    }
    t.row(cells);
  }
}
