package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How to register a service instance.
 *
 * @param ttl        the registration lease's TTL (sent explicitly, so the client knows it exactly)
 * @param status     the initial status
 * @param reRegister whether to register again, with a new token, when the registration's lease is
 *                   lost while the registration is open (after a long partition, say); a lock-delay
 *                   is waited out, while another holder of the instance's name or a policy
 *                   refusal (a ban, say) ends the attempts
 */
public record RegisterOptions(Duration ttl, String status, boolean reRegister) {
  /** TTL 10 s, status SERVING, register again after a loss. */
  public static final RegisterOptions DEFAULTS = new RegisterOptions(Duration.ofSeconds(10), Registration.SERVING, true);

  /**
   * Checks the fields.
   *
   * @param ttl the registration lease's TTL (sent explicitly, so the client knows it exactly)
   * @param status the initial status
   * @param reRegister whether to register again, with a new token, when the registration's lease
   *     is lost while the registration is open (after a long partition, say); a lock-delay is
   *     waited out, while another holder of the instance's name or a policy refusal (a ban, say)
   *     ends the attempts
   */
  public RegisterOptions {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(status, "status");
    if (status.isEmpty()) {
      throw new IllegalArgumentException("status: must not be empty, e.g. SERVING or DRAINING");
    }
  }

  /**
   * These options with the registration lease's {@code ttl}.
   *
   * @param ttl the registration lease's TTL
   * @return the options with the change
   */
  public RegisterOptions withTtl(Duration ttl) {
    return new RegisterOptions(ttl, status, reRegister);
  }

  /**
   * These options with the initial {@code status}.
   *
   * @param status the initial status, e.g. SERVING or DRAINING (not empty)
   * @return the options with the change
   */
  public RegisterOptions withStatus(String status) {
    return new RegisterOptions(ttl, status, reRegister);
  }

  /**
   * These options, registering again (or not) when the registration is lost.
   *
   * @param reRegister whether to register again when the registration is lost
   * @return the options with the change
   */
  public RegisterOptions withReRegister(boolean reRegister) {
    return new RegisterOptions(ttl, status, reRegister);
  }
}
