package io.leasehold.statemachine.core;

/**
 * A command refused for who asked or for the state it would leave, not for its form: another
 * holder's lease ({@link Kind#PERMISSION_DENIED}), the last admin or a role still granted ({@link
 * Kind#FAILED_PRECONDITION}). Like {@link InvalidArgumentException}, the entry changes nothing.
 */
public final class RefusedException extends RuntimeException {
  /** The refusals, with the gRPC status code each maps to. */
  public enum Kind {
    PERMISSION_DENIED(7),
    FAILED_PRECONDITION(9);

    private final int grpcCode;

    Kind(int grpcCode) {
      this.grpcCode = grpcCode;
    }

    public int grpcCode() {
      return grpcCode;
    }
  }

  private final Kind kind;
  private final String field;

  public RefusedException(Kind kind, String field, String message) {
    super(field + ": " + message);
    this.kind = kind;
    this.field = field;
  }

  public Kind kind() {
    return kind;
  }

  public String field() {
    return field;
  }
}
