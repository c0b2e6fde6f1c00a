package io.leasehold.client;

/**
 * Why the client could not set up a connection to a node, as {@link ConnectionFailedException}
 * reports it. Except {@link #UNKNOWN_HOST}, each is a mismatch between the client's transport
 * settings and the node's, which no retry mends.
 */
public enum ConnectionFailure {
  /**
   * The endpoint's host name does not resolve. Usually a mistyped name; it can also be a name that
   * is not in DNS yet (a pod that has not started) or a DNS server that did not answer.
   */
  UNKNOWN_HOST(true),
  /**
   * The node speaks TLS and the client plaintext: give the client the CA that signed the nodes'
   * certificates.
   */
  TLS_REQUIRED(false),
  /**
   * The client speaks TLS and the node's port does not: the node runs without TLS, or the port is
   * another service's.
   */
  NOT_TLS(false),
  /**
   * The node's certificate is not signed by the CA the client trusts: the client was given another
   * CA than the one that signed the nodes' certificates.
   */
  UNTRUSTED_CERTIFICATE(false),
  /**
   * The node's certificate has expired (or is not valid yet): the node must be given a current one.
   */
  CERTIFICATE_EXPIRED(false),
  /**
   * The node's certificate does not name the address the client connected to (as a SAN): connect by
   * a name or IP address the certificate names, or issue it with this one.
   */
  CERTIFICATE_NAME_MISMATCH(false),
  /**
   * The node requires a client certificate (it runs with client-certificate authentication) and the
   * client presented none.
   */
  CLIENT_CERTIFICATE_REQUIRED(false),
  /** The node refused the client's certificate: not signed by a CA the node trusts, or expired. */
  CLIENT_CERTIFICATE_REJECTED(false),
  /**
   * The TLS handshake failed for another reason (protocol versions, ciphers); the exception's
   * detail says what the TLS library reported.
   */
  TLS_HANDSHAKE_FAILED(false);

  private final boolean mayPass;

  ConnectionFailure(boolean mayPass) {
    this.mayPass = mayPass;
  }

  /**
   * Whether the failure may pass on its own (a name that resolves later); false for a mismatch of
   * settings, which only a change of the client's or the node's configuration mends.
   *
   * @return true if retrying later may succeed
   */
  public boolean mayPass() {
    return mayPass;
  }
}
