package io.leasehold.cli;

/**
 * A command could not do what was asked: one line for stderr and the exit code that goes with it.
 */
public final class CliFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;

  public CliFailure(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  /** The operation failed (conflict, not held, rejected): exit code 1. */
  public static CliFailure failed(String message) {
    return new CliFailure(LeaseholdCommand.EXIT_FAILED, message);
  }

  public int exitCode() {
    return exitCode;
  }
}
