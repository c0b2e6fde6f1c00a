package io.leasehold.testkit;

import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Makes the certificates of {@link LeaseholdTls} with Bouncy Castle, as the server's test helper
 * ({@code TestCerts}) and {@code deploy/tls/make-certs.sh} make theirs: EC P-256 keys, a CA allowed
 * to sign certificates only, leaf certificates for server and client authentication alike. Bouncy
 * Castle is an optional dependency of the kit: only this class names it, and {@link LeaseholdTls}
 * loads it after checking that it is there.
 */
final class Certificates {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** A certificate and its private key. */
  record Issued(X509Certificate certificate, PrivateKey key) {}

  private Certificates() {}

  /** A self-signed CA certificate named {@code commonName}. */
  static Issued authority(String commonName, Instant notBefore, Instant notAfter) {
    KeyPair keys = keyPair();
    X500Name subject = name(commonName);
    X509v3CertificateBuilder b =
        new JcaX509v3CertificateBuilder(
            subject,
            serial(),
            Date.from(notBefore),
            Date.from(notAfter),
            subject,
            keys.getPublic());
    try {
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    } catch (CertIOException e) {
      throw new UncheckedIOException(e);
    }
    return new Issued(sign(b, keys.getPrivate()), keys.getPrivate());
  }

  /**
   * A certificate for {@code commonName} signed by {@code ca}, for server and client
   * authentication, with {@code hosts} (IP addresses or DNS names) as its subject alternative
   * names; none for a client.
   */
  static Issued issue(
      Issued ca, String commonName, Collection<String> hosts, Instant notBefore, Instant notAfter) {
    KeyPair keys = keyPair();
    X509v3CertificateBuilder b =
        new JcaX509v3CertificateBuilder(
            ca.certificate(),
            serial(),
            Date.from(notBefore),
            Date.from(notAfter),
            name(commonName),
            keys.getPublic());
    try {
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      b.addExtension(
          Extension.extendedKeyUsage,
          false,
          new ExtendedKeyUsage(
              new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
      if (!hosts.isEmpty()) {
        List<GeneralName> sans = new ArrayList<>();
        for (String host : hosts) {
          sans.add(
              new GeneralName(
                  LeaseholdTls.isIpAddress(host) ? GeneralName.iPAddress : GeneralName.dNSName,
                  host));
        }
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(sans.toArray(new GeneralName[0])));
      }
    } catch (CertIOException e) {
      throw new UncheckedIOException(e);
    }
    return new Issued(sign(b, ca.key()), keys.getPrivate());
  }

  private static X500Name name(String commonName) {
    // The builder escapes what a DN string would need escaped (a comma, a plus sign).
    return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
  }

  private static BigInteger serial() {
    // Positive and at most 20 octets (RFC 5280); random, so that no two CAs' serials meet.
    return new BigInteger(64, RANDOM).setBit(64);
  }

  private static KeyPair keyPair() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot make an EC P-256 key pair", e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey) {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    } catch (OperatorCreationException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign a certificate", e);
    }
  }
}
