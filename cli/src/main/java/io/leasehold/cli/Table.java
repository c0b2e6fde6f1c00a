package io.leasehold.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rows under upper-case headers, columns padded to their widest cell and parted by three spaces.
 */
public final class Table {
  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  private Table(List<String> headers) {
    this.headers = headers;
  }

  public static Table of(String... headers) {
    return new Table(new ArrayList<>(Arrays.asList(headers)));
  }

  public static Table of(List<String> headers) {
    return new Table(new ArrayList<>(headers));
  }

  public Table row(Object... cells) {
    return row(Arrays.stream(cells).map(c -> c == null ? "" : c.toString()).toList());
  }

  public Table row(List<String> cells) {
    if (cells.size() != headers.size()) {
      throw new IllegalArgumentException(
          "a row of " + cells.size() + " cells under " + headers.size() + " headers");
    }
    rows.add(cells.stream().map(c -> c.replace('\n', ' ')).toList());
    return this;
  }

  public String render() {
    int[] width = new int[headers.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = headers.get(i).length();
      for (List<String> r : rows) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    StringBuilder b = new StringBuilder();
    line(b, headers, width);
    rows.forEach(r -> line(b, r, width));
    return b.toString();
  }

  private static void line(StringBuilder b, List<String> cells, int[] width) {
    StringBuilder l = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      l.append(cells.get(i));
      if (i < cells.size() - 1) {
        l.append(" ".repeat(width[i] - cells.get(i).length() + 3));
      }
    }
    b.append(l.toString().stripTrailing()).append('\n');
  }
}
