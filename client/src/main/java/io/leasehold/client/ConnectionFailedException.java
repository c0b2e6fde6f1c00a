package io.leasehold.client;

import io.grpc.Status;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The client could not connect to any endpoint, each for a reason it could tell: a host name that
 * does not resolve, or TLS settings that do not match the node's ({@link #reason()}). The request
 * fails at once rather than retrying for the whole request timeout, since every node would give the
 * same answer; a request that reached no node was not applied. When only some endpoints fail this
 * way, the others are tried as usual.
 */
public class ConnectionFailedException extends ClusterUnavailableException {
  private static final long serialVersionUID = 1L;
  private final ConnectionFailure reason;
  private final String endpoint;
  private final String detail;
  private final Map<String, ConnectionFailure> failures;

  /**
   * A connection failure of every endpoint.
   *
   * @param message what went wrong and what to do about it
   * @param reason why the first endpoint failed
   * @param endpoint the first endpoint that failed, {@code host:port}
   * @param detail what the resolver or TLS library reported, for the curious
   * @param failures every endpoint tried and why it failed, in the order tried
   * @param cause the failure that led to it (may be null)
   */
  public ConnectionFailedException(
      String message,
      ConnectionFailure reason,
      String endpoint,
      String detail,
      Map<String, ConnectionFailure> failures,
      Throwable cause) {
    super(message, Status.Code.UNAVAILABLE, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
    this.detail = detail == null ? "" : detail;
    this.failures = Collections.unmodifiableMap(new LinkedHashMap<>(failures));
  }

  /**
   * Why the client could not connect (to the first endpoint it tried, when they differ).
   *
   * @return the reason
   */
  public ConnectionFailure reason() {
    return reason;
  }

  /**
   * The endpoint the reason is about, {@code host:port}.
   *
   * @return the endpoint
   */
  public String endpoint() {
    return endpoint;
  }

  /**
   * What the name resolver or the TLS library reported, e.g. the certificate path error; empty if
   * nothing more.
   *
   * @return the detail, possibly empty
   */
  public String detail() {
    return detail;
  }

  /**
   * Every endpoint the client tried and why it could not connect, in the order tried.
   *
   * @return endpoint to reason
   */
  public Map<String, ConnectionFailure> failures() {
    return failures;
  }
}
