package io.leasehold.cli;

/** What {@code -o} asks for. */
public enum OutputFormat {
  /** Aligned columns for people (the default). */
  TABLE,
  /** Stable JSON: one object or an array; streams print one object per line (JSON Lines). */
  JSON,
  /** The table with more columns. */
  WIDE
}
