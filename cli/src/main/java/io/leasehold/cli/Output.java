package io.leasehold.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/** Where a command prints its result, in the format {@code -o} asked for. */
public final class Output {
  private final OutputFormat format;
  private final PrintWriter out;

  public Output(OutputFormat format, PrintWriter out) {
    this.format = format;
    this.out = out;
  }

  public boolean json() {
    return format == OutputFormat.JSON;
  }

  public boolean wide() {
    return format == OutputFormat.WIDE;
  }

  /** One result: a JSON object, or the table (often a FIELD/VALUE listing) for people. */
  public void print(Map<String, Object> json, Table table) {
    if (json()) {
      out.println(Json.pretty(json));
    } else {
      out.print(table.render());
    }
    out.flush();
  }

  /** Many results: a JSON array, or the table. */
  public void print(List<Map<String, Object>> json, Table table) {
    if (json()) {
      out.println(Json.pretty(json));
    } else {
      out.print(table.render());
    }
    out.flush();
  }

  /** One element of a stream: a JSON line, or a line for people. */
  public void line(Map<String, Object> json, String text) {
    out.println(json() ? Json.compact(json) : text);
    out.flush();
  }
}
