package io.leasehold.client;

/**
 * A namespace after a move: the lease group it lives in, its placement's epoch (which rises with
 * every move) and the move's id.
 */
public record NamespaceMove(String namespace, int group, long epoch, long move) {}
