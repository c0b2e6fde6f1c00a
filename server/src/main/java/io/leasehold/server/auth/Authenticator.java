package io.leasehold.server.auth;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.grpc.StatusException;
import io.leasehold.proto.CertificateIdentity;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Finds a request's identity: a bearer token from the token file, else the client certificate the
 * TLS handshake verified, whose identity is its SAN URI {@code leasehold://holder/NAME} when it has
 * one, else its subject's CN.
 */
public final class Authenticator {
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final Optional<TokenFile> tokens;

  public Authenticator(Optional<TokenFile> tokens) {
    this.tokens = tokens;
  }

  /** The caller of {@code call}; UNAUTHENTICATED when it proves no identity. */
  Caller identify(ServerCall<?, ?> call, Metadata headers) throws StatusException {
    return identify(
        headers.get(AUTHORIZATION), call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
  }

  /**
   * The caller who sent this authorization header (may be null) over this TLS session (null for
   * plaintext): the gRPC API's rule, shared by the dashboard's HTTP requests.
   */
  Caller identify(String authorization, SSLSession tls) throws StatusException {
    if (authorization != null) {
      if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
        throw unauthenticated("the authorization header must be \"Bearer <token>\"");
      }
      if (tokens.isEmpty()) {
        throw unauthenticated(
            "this node takes no bearer tokens (it has no --auth-token-file); present a client certificate");
      }
      String identity =
          tokens
              .get()
              .identityOf(authorization.substring(7).strip())
              .orElseThrow(() -> unauthenticated("the bearer token is not one this node knows"));
      return new Caller(identity, "token");
    }
    if (tls != null) {
      try {
        Certificate[] chain = tls.getPeerCertificates();
        if (chain.length > 0 && chain[0] instanceof X509Certificate cert) {
          return new Caller(identityOf(cert), "certificate");
        }
      } catch (SSLPeerUnverifiedException e) {
        // No certificate presented: fall through.
      }
    }
    throw unauthenticated(
        "no identity: present a client certificate"
            + (tokens.isPresent() ? " or a bearer token (authorization: Bearer <token>)" : ""));
  }

  /** A certificate's identity ({@link CertificateIdentity}); UNAUTHENTICATED if it names none. */
  public static String identityOf(X509Certificate cert) throws StatusException {
    try {
      return CertificateIdentity.of(cert)
          .orElseThrow(
              () ->
                  unauthenticated(
                      "the client certificate names no identity (no CN and no SAN URI "
                          + CertificateIdentity.SAN_PREFIX
                          + "NAME)"));
    } catch (IllegalArgumentException e) {
      throw unauthenticated("the client certificate's " + e.getMessage());
    }
  }

  private static StatusException unauthenticated(String message) {
    return Status.UNAUTHENTICATED.withDescription(message).asException();
  }
}
