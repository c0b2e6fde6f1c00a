package io.leasehold.server.auth;

import io.grpc.Context;

/**
 * Who sent the request being served, as the authorization point found it: set in the gRPC {@link
 * Context} for every call of the Leasehold services.
 *
 * @param identity the authenticated identity; empty when authentication is off
 * @param via how it was established: "certificate", "token", or "" when authentication is off
 */
public record Caller(String identity, String via) {
  /** The caller of a node without authentication: anyone. */
  public static final Caller OPEN = new Caller("", "");

  static final Context.Key<Caller> KEY = Context.keyWithDefault("leasehold-caller", OPEN);

  /** The caller of the call this thread serves (the handler runs in the call's context). */
  public static Caller current() {
    return KEY.get();
  }

  public boolean authenticated() {
    return !identity.isEmpty();
  }
}
