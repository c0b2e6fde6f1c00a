package io.leasehold.proto;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * The identity a client certificate names, as nodes with client-certificate authentication take it
 * and the SDK defaults its holder to: the SAN URI {@code leasehold://holder/NAME} when the
 * certificate has one, else its subject's CN.
 */
public final class CertificateIdentity {
  public static final String SAN_PREFIX = "leasehold://holder/";
  private static final int SAN_URI = 6;

  private CertificateIdentity() {}

  /**
   * The identity {@code cert} names; empty if it has neither such a SAN URI nor a CN.
   *
   * @throws IllegalArgumentException if its subject alternative names or subject cannot be read
   */
  public static Optional<String> of(X509Certificate cert) {
    try {
      Collection<List<?>> sans = cert.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          if (san.size() >= 2
              && Integer.valueOf(SAN_URI).equals(san.get(0))
              && san.get(1) instanceof String uri
              && uri.startsWith(SAN_PREFIX)
              && uri.length() > SAN_PREFIX.length()) {
            return Optional.of(
                URLDecoder.decode(
                    URI.create(uri).getRawPath().substring("/".length()), StandardCharsets.UTF_8));
          }
        }
      }
    } catch (CertificateParsingException e) {
      throw new IllegalArgumentException(
          "subject alternative names cannot be read: " + e.getMessage(), e);
    }
    try {
      List<Rdn> rdns = new LdapName(cert.getSubjectX500Principal().getName()).getRdns();
      for (int i = rdns.size() - 1; i >= 0; i--) {
        if (rdns.get(i).getType().equalsIgnoreCase("CN")
            && !String.valueOf(rdns.get(i).getValue()).isEmpty()) {
          return Optional.of(String.valueOf(rdns.get(i).getValue()));
        }
      }
    } catch (InvalidNameException e) {
      throw new IllegalArgumentException("subject cannot be read: " + e.getMessage(), e);
    }
    return Optional.empty();
  }
}
