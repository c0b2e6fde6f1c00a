package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to register a service instance.
 *
 * @param ttl the registration lease's own TTL; absent: the instance is attached to the client's
 *     session (one keep-alive for all its leases), or, with sessions off, gets {@link #DEFAULT_TTL}
 * @param status the initial status
 * @param reRegister whether to register again, with a new token, when the registration's lease is
 *     lost while the registration is open (after a long partition, say); a lock-delay is waited
 *     out, while another holder of the instance's name or a policy refusal (a ban, say) ends the
 *     attempts
 */
public record RegisterOptions(Optional<Duration> ttl, String status, boolean reRegister) {
  /** The TTL of a registration that has none of its own and is not attached to a session. */
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);

  /** Attached to the client's session, status SERVING, register again after a loss. */
  public static final RegisterOptions DEFAULTS =
      new RegisterOptions(Optional.empty(), Registration.SERVING, true);

  /**
   * Checks the fields.
   *
   * @param ttl the registration lease's own TTL; absent: attached to the client's session, or, with
   *     sessions off, {@link #DEFAULT_TTL}
   * @param status the initial status
   * @param reRegister whether to register again, with a new token, when the registration's lease is
   *     lost while the registration is open (after a long partition, say); a lock-delay is waited
   *     out, while another holder of the instance's name or a policy refusal (a ban, say) ends the
   *     attempts
   */
  public RegisterOptions {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(status, "status");
    if (status.isEmpty()) {
      throw new IllegalArgumentException("status: must not be empty, e.g. SERVING or DRAINING");
    }
  }

  /**
   * These options with a TTL of the registration lease's own: it is renewed on its own instead of
   * living with the client's session.
   *
   * @param ttl the registration lease's TTL
   * @return the options with the change
   */
  public RegisterOptions withTtl(Duration ttl) {
    return new RegisterOptions(Optional.of(Objects.requireNonNull(ttl, "ttl")), status, reRegister);
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
