package io.leasehold.server.auth;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.grpc.StatusException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Finds a request's identity: a bearer token from the token file, else the client certificate
 * the TLS handshake verified, whose identity is its SAN URI {@code leasehold://holder/NAME} when
 * it has one, else its subject's CN.
 */
public final class Authenticator {
  static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  static final String SAN_PREFIX = "leasehold://holder/";
  private static final int SAN_URI = 6;

  private final Optional<TokenFile> tokens;

  public Authenticator(Optional<TokenFile> tokens) {
    this.tokens = tokens;
  }

  /** The caller of {@code call}; UNAUTHENTICATED when it proves no identity. */
  Caller identify(ServerCall<?, ?> call, Metadata headers) throws StatusException {
    String authorization = headers.get(AUTHORIZATION);
    if (authorization != null) {
      if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
        throw unauthenticated("the authorization header must be \"Bearer <token>\"");
      }
      if (tokens.isEmpty()) {
        throw unauthenticated("this node takes no bearer tokens (it has no --auth-token-file); present a client certificate");
      }
      String identity = tokens.get().identityOf(authorization.substring(7).strip())
          .orElseThrow(() -> unauthenticated("the bearer token is not one this node knows"));
      return new Caller(identity, "token");
    }
    SSLSession tls = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
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
    throw unauthenticated("no identity: present a client certificate"
        + (tokens.isPresent() ? " or a bearer token (authorization: Bearer <token>)" : ""));
  }

  /** A certificate's identity: its SAN URI leasehold://holder/NAME, else its subject's CN. */
  public static String identityOf(X509Certificate cert) throws StatusException {
    try {
      Collection<List<?>> sans = cert.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          if (san.size() >= 2 && Integer.valueOf(SAN_URI).equals(san.get(0)) && san.get(1) instanceof String uri
              && uri.startsWith(SAN_PREFIX) && uri.length() > SAN_PREFIX.length()) {
            return URLDecoder.decode(URI.create(uri).getRawPath().substring("/".length()), StandardCharsets.UTF_8);
          }
        }
      }
    } catch (CertificateParsingException | IllegalArgumentException e) {
      throw unauthenticated("the client certificate's subject alternative names cannot be read: " + e.getMessage());
    }
    try {
      List<Rdn> rdns = new LdapName(cert.getSubjectX500Principal().getName()).getRdns();
      for (int i = rdns.size() - 1; i >= 0; i--) {
        if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
          String cn = String.valueOf(rdns.get(i).getValue());
          if (!cn.isEmpty()) {
            return cn;
          }
        }
      }
    } catch (InvalidNameException e) {
      throw unauthenticated("the client certificate's subject cannot be read: " + e.getMessage());
    }
    throw unauthenticated("the client certificate names no identity (no CN and no SAN URI " + SAN_PREFIX + "NAME)");
  }

  private static StatusException unauthenticated(String message) {
    return Status.UNAUTHENTICATED.withDescription(message).asException();
  }
}
