package io.leasehold.server.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Certificates and PKCS#8 private keys in PEM, the formats netty and grpc-java read. Every error
 * says what the file holds instead, so an operator knows which conversion it needs.
 */
public final class Pem {
  private static final Pattern PKCS8 =
      Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

  private Pem() {}

  /** Every certificate in {@code pem}, in order (a chain starts with the leaf). */
  public static X509Certificate[] certificates(byte[] pem) throws CertificateException {
    if (!new String(pem, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")) {
      throw new CertificateException("holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
    }
    try {
      return CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(pem))
          .toArray(new X509Certificate[0]);
    } catch (CertificateException e) {
      throw new CertificateException(
          "holds a certificate that does not parse (" + e.getMessage() + ")", e);
    }
  }

  /** The one PKCS#8 private key in {@code pem}, RSA or EC. */
  public static PrivateKey privateKey(byte[] pem) throws GeneralSecurityException {
    String text = new String(pem, StandardCharsets.US_ASCII);
    Matcher m = PKCS8.matcher(text);
    if (!m.find()) {
      if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
        throw new InvalidKeySpecException(
            "holds an encrypted key; the node needs it unencrypted (openssl pkcs8 -topk8 -nocrypt)");
      }
      if (text.contains("-----BEGIN RSA PRIVATE KEY-----")
          || text.contains("-----BEGIN EC PRIVATE KEY-----")) {
        throw new InvalidKeySpecException(
            "holds a PKCS#1/SEC1 key; convert it to PKCS#8 (openssl pkcs8 -topk8 -nocrypt)");
      }
      throw new InvalidKeySpecException(
          "holds no PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)");
    }
    PKCS8EncodedKeySpec spec;
    try {
      spec = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(1)));
    } catch (IllegalArgumentException e) {
      throw new InvalidKeySpecException("holds a private key that is not valid base64");
    }
    for (String algorithm : new String[] {"RSA", "EC"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (InvalidKeySpecException notThisOne) {
        // try the next
      }
    }
    throw new InvalidKeySpecException("holds a private key that is neither RSA nor EC");
  }

  /**
   * Whether {@code key} is the private half of {@code certificate}'s public key: a signature made
   * with one verifies with the other. A half-replaced pair (a new certificate beside the old key)
   * would make every handshake fail.
   */
  public static boolean matches(PrivateKey key, X509Certificate certificate) {
    PublicKey pub = certificate.getPublicKey();
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> null;
        };
    if (algorithm == null || !key.getAlgorithm().equals(pub.getAlgorithm())) {
      return false;
    }
    try {
      byte[] probe = new byte[32];
      new SecureRandom().nextBytes(probe);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(pub);
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /**
   * The JDK's client side of TLS: trusts {@code trusted} and presents {@code chain} with its {@code
   * key}, or no certificate when {@code key} is null. For HTTPS to a node's metrics port.
   */
  public static SSLContext sslContext(
      X509Certificate[] trusted, PrivateKey key, X509Certificate[] chain)
      throws GeneralSecurityException {
    KeyStore trust = emptyKeyStore();
    for (int i = 0; i < trusted.length; i++) {
      trust.setCertificateEntry("ca-" + i, trusted[i]);
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (key != null) {
      KeyStore keys = emptyKeyStore();
      keys.setKeyEntry("client", key, new char[0], chain);
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return context;
  }

  private static KeyStore emptyKeyStore() throws GeneralSecurityException {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    try {
      store.load(null, null);
    } catch (IOException cannotHappenWithoutAStream) {
      throw new KeyStoreException(cannotHappenWithoutAStream);
    }
    return store;
  }
}
