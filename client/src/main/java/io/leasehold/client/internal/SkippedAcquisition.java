package io.leasehold.client.internal;

/**
 * An all-or-nothing acquisition's name that was free to grant but was not, since another name was
 * refused: how such a name's try ends, for {@code acquireAll} to list it as skipped.
 */
final class SkippedAcquisition extends RuntimeException {
  private static final long serialVersionUID = 1L;

  SkippedAcquisition(String name) {
    super(
        name + ": skipped, another name of the all-or-nothing acquisition was refused",
        null,
        false,
        false);
  }
}
