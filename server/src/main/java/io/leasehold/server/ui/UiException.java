package io.leasehold.server.ui;

import io.grpc.Status;

/** A dashboard request that fails with an HTTP status and a message naming what was wrong. */
final class UiException extends Exception {
  private final int httpStatus;
  private final String field;

  UiException(int httpStatus, String field, String message) {
    super(message);
    this.httpStatus = httpStatus;
    this.field = field;
  }

  /** A bad query parameter: 400 naming the parameter and its rule. */
  static UiException badParameter(String parameter, String rule) {
    return new UiException(400, parameter, parameter + ": " + rule);
  }

  /**
   * A gRPC outcome as HTTP: refused callers get 401/403, bad input 400, an unavailable node 503.
   */
  static UiException of(Status status) {
    int http =
        switch (status.getCode()) {
          case INVALID_ARGUMENT, OUT_OF_RANGE -> 400;
          case UNAUTHENTICATED -> 401;
          case PERMISSION_DENIED -> 403;
          case NOT_FOUND -> 404;
          case FAILED_PRECONDITION, ABORTED -> 409;
          case RESOURCE_EXHAUSTED -> 429;
          case DEADLINE_EXCEEDED -> 504;
          case UNAVAILABLE -> 503;
          default -> 500;
        };
    String message =
        status.getDescription() == null ? status.getCode().name() : status.getDescription();
    return new UiException(http, "", message);
  }

  int httpStatus() {
    return httpStatus;
  }

  String field() {
    return field;
  }
}
