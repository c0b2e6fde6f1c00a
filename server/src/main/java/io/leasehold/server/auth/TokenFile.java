package io.leasehold.server.auth;

import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.Validation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bearer tokens for clients that cannot present a certificate: a file of {@code token,identity}
 * lines (blank lines and lines starting with {@code #} ignored), as Kubernetes's static token file.
 * The file is read again, at most once per reload interval, when its modification time, size or
 * file key (a rename over it) changed; a file that no longer parses keeps the tokens read before,
 * with a warning. Tokens are kept only as SHA-256 digests, so a lookup's timing says nothing about
 * the tokens.
 */
public final class TokenFile {
  private static final Logger LOG = LoggerFactory.getLogger(TokenFile.class);

  /** Shorter tokens are guessable. */
  static final int MIN_TOKEN_CHARS = 16;

  private final Path path;
  private final long reloadNanos;
  private volatile Tokens tokens;
  private volatile long checkedAt;

  /** The tokens read, and what identified the file's version: a rename over it changes its key. */
  private record Tokens(
      Map<String, String> byDigest,
      String firstIdentity,
      FileTime modified,
      long size,
      Object fileKey) {}

  private TokenFile(Path path, Duration reloadInterval, Tokens tokens) {
    this.path = path;
    this.reloadNanos = reloadInterval.toNanos();
    this.tokens = tokens;
    this.checkedAt = System.nanoTime();
  }

  /** Reads the file; a bad file fails here, naming the line and the rule. */
  public static TokenFile load(Path path, Duration reloadInterval) throws IOException {
    return new TokenFile(path, reloadInterval, read(path));
  }

  /** The identity of {@code token}, if the file lists it. */
  public Optional<String> identityOf(String token) {
    reloadIfDue();
    return Optional.ofNullable(tokens.byDigest().get(digest(token)));
  }

  /** The identity of the file's first entry: the initial admin when none is configured. */
  public String firstIdentity() {
    return tokens.firstIdentity();
  }

  private void reloadIfDue() {
    long now = System.nanoTime();
    if (now - checkedAt < reloadNanos) {
      return;
    }
    checkedAt = now;
    try {
      BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
      Tokens current = tokens;
      if (a.lastModifiedTime().equals(current.modified())
          && a.size() == current.size()
          && Objects.equals(a.fileKey(), current.fileKey())) {
        return;
      }
      tokens = read(path);
      LOG.info("auth-token-file {} read again: {} tokens", path, tokens.byDigest().size());
    } catch (IOException | IllegalArgumentException e) {
      LOG.warn(
          "auth-token-file {} could not be read again, keeping the tokens read before: {}",
          path,
          e.getMessage());
    }
  }

  static Tokens read(Path path) throws IOException {
    BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
    List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    Map<String, String> byDigest = new HashMap<>();
    String first = "";
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = "auth-token-file: " + path + " line " + (i + 1);
      int comma = line.indexOf(',');
      if (comma < 0) {
        throw new IllegalArgumentException(where + ": must be token,identity");
      }
      String token = line.substring(0, comma).strip();
      String identity = line.substring(comma + 1).strip();
      if (token.length() < MIN_TOKEN_CHARS) {
        throw new IllegalArgumentException(
            where + ": the token must be at least " + MIN_TOKEN_CHARS + " characters");
      }
      try {
        Validation.holder("identity", identity);
      } catch (InvalidArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage());
      }
      if (byDigest.put(digest(token), identity) != null) {
        throw new IllegalArgumentException(where + ": the token appears twice");
      }
      if (first.isEmpty()) {
        first = identity;
      }
    }
    return new Tokens(Map.copyOf(byDigest), first, a.lastModifiedTime(), a.size(), a.fileKey());
  }

  private static String digest(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }
}
