package io.leasehold.client;

/** A snapshot a node took: the log position it includes and its size. */
public record SnapshotResult(String nodeId, long term, long index, long sizeBytes) {}
