package io.leasehold.server.tls;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.leasehold.server.NodeConfig;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates made at test time, written as make-certs.sh writes them: {@code NAME.pem} and {@code
 * NAME-key.pem} (PKCS#8) in a directory, EC P-256 keys (fast to make). Node certificates carry SANs
 * for 127.0.0.1 and localhost and serve as server and client certificates alike.
 */
public final class TestCerts {
  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  /** A CA: its certificate is {@code pem}. */
  public record Authority(String name, X509Certificate cert, PrivateKey key, Path pem) {}

  /** A certificate and key issued by an authority, as {@code cert} and {@code key} files. */
  public record Identity(
      String name, X509Certificate cert, PrivateKey key, Path certFile, Path keyFile) {}

  private TestCerts() {}

  public static Authority authority(Path dir, String name) {
    KeyPair keys = keyPair();
    X500Name subject = new X500Name("CN=" + name);
    Instant now = Instant.now();
    X509v3CertificateBuilder b =
        new JcaX509v3CertificateBuilder(
            subject,
            serial(),
            Date.from(now.minus(Duration.ofHours(1))),
            Date.from(now.plus(Duration.ofDays(2))),
            subject,
            keys.getPublic());
    try {
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    X509Certificate cert = sign(b, keys.getPrivate());
    Path pem = dir.resolve(name + ".pem");
    write(pem, cert);
    return new Authority(name, cert, keys.getPrivate(), pem);
  }

  /**
   * Mutual TLS on a node's client port: its certificate {@code node} (from {@link #node}), client
   * certificates signed by {@code ca} required, and {@code admin} the initial admin.
   */
  public static NodeConfig.Builder mutualTls(
      NodeConfig.Builder b, Identity node, Authority ca, String admin) {
    return b.tlsCertFile(node.certFile())
        .tlsKeyFile(node.keyFile())
        .tlsCaFile(ca.pem())
        .clientCertAuth(true)
        .initialAdmin(admin);
  }

  /** A member's certificate, valid from an hour ago for a day. */
  public static Identity node(Path dir, Authority ca, String name) {
    Instant now = Instant.now();
    return issue(dir, ca, name, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
  }

  /**
   * A member's certificate that also names {@code hosts} (IP addresses or DNS names) besides
   * 127.0.0.1 and localhost: for a node reached at another address.
   */
  public static Identity node(Path dir, Authority ca, String name, List<String> hosts) {
    Instant now = Instant.now();
    return issue(
        dir, ca, name, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)), hosts);
  }

  /** A certificate that expired an hour ago. */
  public static Identity expired(Path dir, Authority ca, String name) {
    Instant now = Instant.now();
    return issue(dir, ca, name, now.minus(Duration.ofDays(2)), now.minus(Duration.ofHours(1)));
  }

  public static Identity issue(
      Path dir, Authority ca, String name, Instant notBefore, Instant notAfter) {
    return issue(dir, ca, name, notBefore, notAfter, List.of());
  }

  /**
   * As {@link #issue(Path, Authority, String, Instant, Instant)}, with {@code hosts} as further
   * SANs: IP addresses, DNS names, or URIs ({@code leasehold://holder/NAME}).
   */
  public static Identity issue(
      Path dir,
      Authority ca,
      String name,
      Instant notBefore,
      Instant notAfter,
      List<String> hosts) {
    List<GeneralName> sans =
        new ArrayList<>(
            List.of(
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.dNSName, "localhost")));
    for (String host : hosts) {
      boolean uri = host.startsWith("leasehold://");
      boolean ip = !uri && (host.matches("[0-9.]+") || host.contains(":"));
      GeneralName san =
          new GeneralName(
              uri
                  ? GeneralName.uniformResourceIdentifier
                  : ip ? GeneralName.iPAddress : GeneralName.dNSName,
              host);
      if (!sans.contains(san)) {
        sans.add(san);
      }
    }
    KeyPair keys = keyPair();
    X509v3CertificateBuilder b =
        new JcaX509v3CertificateBuilder(
            ca.cert(),
            serial(),
            Date.from(notBefore),
            Date.from(notAfter),
            new X500Name("CN=" + name),
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
      b.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(sans.toArray(new GeneralName[0])));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    X509Certificate cert = sign(b, ca.key());
    Path certFile = dir.resolve(name + ".pem");
    Path keyFile = dir.resolve(name + "-key.pem");
    write(certFile, cert);
    writeKey(keyFile, keys.getPrivate());
    return new Identity(name, cert, keys.getPrivate(), certFile, keyFile);
  }

  /**
   * Replaces {@code target}'s contents with {@code source}'s the way a rotation tool does: a rename
   * over it.
   */
  public static void replace(Path source, Path target) {
    try {
      Path tmp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
      Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * gRPC client credentials that trust {@code ca} and present {@code id} (or nothing when null).
   */
  public static ChannelCredentials credentials(Authority ca, Identity id) {
    try {
      TlsChannelCredentials.Builder b =
          TlsChannelCredentials.newBuilder().trustManager(ca.pem().toFile());
      if (id != null) {
        b.keyManager(id.certFile().toFile(), id.keyFile().toFile());
      }
      return b.build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A JDK SSLContext that trusts {@code ca} and presents {@code id} (or nothing when null). */
  public static SSLContext sslContext(Authority ca, Identity id) {
    try {
      return Pem.sslContext(
          new X509Certificate[] {ca.cert()},
          id == null ? null : id.key(),
          id == null ? null : new X509Certificate[] {id.cert()});
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static BigInteger serial() {
    return BigInteger.valueOf(SERIAL.incrementAndGet());
  }

  private static KeyPair keyPair() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey) {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    } catch (OperatorCreationException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void write(Path file, Object pemObject) {
    StringWriter s = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(s)) {
      w.writeObject(pemObject);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      Files.writeString(file, s.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void writeKey(Path file, PrivateKey key) {
    try {
      write(file, new JcaPKCS8Generator(key, null).generate());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
