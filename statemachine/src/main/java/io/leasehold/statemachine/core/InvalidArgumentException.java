package io.leasehold.statemachine.core;

/** Bad input: names the field and the rule it broke. Never carries business outcomes. */
public final class InvalidArgumentException extends RuntimeException {
  private final String field;

  public InvalidArgumentException(String field, String rule) {
    super(field + ": " + rule);
    this.field = field;
  }

  public String field() {
    return field;
  }
}
