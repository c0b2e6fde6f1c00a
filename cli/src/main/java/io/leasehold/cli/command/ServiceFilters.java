package io.leasehold.cli.command;

import io.leasehold.client.ServiceFilter;
import java.util.List;
import java.util.Map;

/** The {@code --zone}, {@code --meta} and {@code --status} flags of the commands that filter. */
public final class ServiceFilters {
  private ServiceFilters() {}

  /**
   * {@code base} narrowed by the flags given: its zones replaced by {@code zones}, every metadata
   * pair added, its statuses replaced by {@code statuses}; an empty flag leaves {@code base} as it
   * is. The node checks the values and names the field of a bad one.
   */
  public static ServiceFilter narrowed(
      ServiceFilter base, List<String> zones, Map<String, String> metadata, List<String> statuses) {
    ServiceFilter f = base;
    if (!zones.isEmpty()) {
      f = f.inZones(zones.toArray(String[]::new));
    }
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      f = f.withMetadata(e.getKey(), e.getValue());
    }
    if (!statuses.isEmpty()) {
      f = f.withStatuses(statuses.toArray(String[]::new));
    }
    return f;
  }
}
