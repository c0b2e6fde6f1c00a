package io.leasehold.server.backup;

import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.BackupHeader;
import io.leasehold.server.raft.RaftConsensus;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Locale;
import java.util.Properties;

/**
 * Backups of a node's state and their restore into a new data directory.
 *
 * <p>A backup is a directory holding one snapshot file (the whole replicated state at one log
 * position, as a node writes it) and {@value #MANIFEST}: the position, size, MD5 and origin. It is
 * taken online through {@code Cluster/Backup} from any one member.
 *
 * <p>Restoring writes a data directory that starts from that snapshot: the snapshot where Ratis
 * looks for it, and Raft metadata with the snapshot's term, so the node's log continues after the
 * snapshot's index and fencing tokens keep increasing. For a cluster lost as a whole, restore the
 * same backup into every member's data directory and start them with the same {@code --peers}; to
 * replace one lost member of a running cluster no backup is needed (start it empty: the leader
 * sends it a snapshot).
 */
public final class NodeBackup {
  public static final String MANIFEST = "leasehold-backup.properties";

  private NodeBackup() {}

  /** What a backup holds. */
  public record Manifest(
      String nodeId,
      String groupId,
      long term,
      long index,
      long sizeBytes,
      String md5,
      Instant takenAt,
      String file) {
    Properties toProperties() {
      Properties p = new Properties();
      p.setProperty("node", nodeId);
      p.setProperty("group", groupId);
      p.setProperty("term", Long.toString(term));
      p.setProperty("index", Long.toString(index));
      p.setProperty("size", Long.toString(sizeBytes));
      p.setProperty("md5", md5);
      p.setProperty("taken_at", takenAt.toString());
      p.setProperty("file", file);
      return p;
    }

    static Manifest of(Properties p) throws IOException {
      try {
        return new Manifest(
            p.getProperty("node", ""),
            p.getProperty("group", ""),
            Long.parseLong(p.getProperty("term")),
            Long.parseLong(p.getProperty("index")),
            Long.parseLong(p.getProperty("size")),
            p.getProperty("md5", ""),
            Instant.parse(p.getProperty("taken_at")),
            p.getProperty("file"));
      } catch (RuntimeException e) {
        throw new IOException("not a Leasehold backup manifest: " + e.getMessage(), e);
      }
    }
  }

  /**
   * Writes the chunks of a {@code Cluster/Backup} stream into {@code dir} (created if missing, must
   * hold no backup yet) and checks size and MD5 against the header.
   */
  public static Manifest receive(Iterator<BackupChunk> stream, Path dir) throws IOException {
    Files.createDirectories(dir);
    if (Files.exists(dir.resolve(MANIFEST))) {
      throw new IOException(dir + " already holds a backup");
    }
    if (!stream.hasNext()) {
      throw new IOException("the backup stream was empty");
    }
    BackupChunk first = stream.next();
    if (!first.hasHeader()) {
      throw new IOException("the backup stream did not start with its header");
    }
    BackupHeader h = first.getHeader();
    String name = "snapshot." + h.getTerm() + "_" + h.getIndex();
    Path partial = dir.resolve(name + ".partial");
    MessageDigest md5 = md5();
    long size = 0;
    try (OutputStream out = Files.newOutputStream(partial)) {
      BackupChunk chunk = first;
      while (true) {
        chunk.getData().writeTo(out);
        md5.update(chunk.getData().asReadOnlyByteBuffer());
        size += chunk.getData().size();
        if (!stream.hasNext()) {
          break;
        }
        chunk = stream.next();
      }
    } catch (IOException | RuntimeException e) {
      // A stream cut off midway (the node stopped, the deadline passed): the caller may try
      // another node into the same directory, and a half file would only be in the way.
      Files.deleteIfExists(partial);
      throw e;
    }
    String digest = HexFormat.of().formatHex(md5.digest());
    if (size != h.getSizeBytes()
        || (!h.getMd5().isEmpty() && !h.getMd5().equalsIgnoreCase(digest))) {
      Files.deleteIfExists(partial);
      throw new IOException(
          "the backup arrived damaged: "
              + size
              + " bytes with MD5 "
              + digest
              + ", expected "
              + h.getSizeBytes()
              + " bytes with MD5 "
              + h.getMd5());
    }
    Files.move(partial, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
    Manifest m =
        new Manifest(
            h.getNodeId(),
            h.getGroupId(),
            h.getTerm(),
            h.getIndex(),
            size,
            digest,
            Instant.ofEpochSecond(h.getTakenAt().getSeconds()),
            name);
    writeProperties(m.toProperties(), dir.resolve(MANIFEST), "Leasehold backup");
    return m;
  }

  /** Reads and checks a backup directory: the manifest, and the snapshot file's size and MD5. */
  public static Manifest verify(Path dir) throws IOException {
    Path manifest = dir.resolve(MANIFEST);
    if (!Files.exists(manifest)) {
      throw new IOException(dir + " is not a Leasehold backup (no " + MANIFEST + ")");
    }
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(manifest)) {
      p.load(in);
    }
    Manifest m = Manifest.of(p);
    Path file = dir.resolve(m.file());
    if (!Files.exists(file) || Files.size(file) != m.sizeBytes()) {
      throw new IOException(
          "backup file " + file + " is missing or not " + m.sizeBytes() + " bytes");
    }
    MessageDigest md5 = md5();
    try (InputStream in = new DigestInputStream(Files.newInputStream(file), md5)) {
      in.transferTo(OutputStream.nullOutputStream());
    }
    String digest = HexFormat.of().formatHex(md5.digest());
    if (!digest.equalsIgnoreCase(m.md5())) {
      throw new IOException(
          "backup file " + file + " has MD5 " + digest + ", the manifest says " + m.md5());
    }
    return m;
  }

  /**
   * Makes {@code dataDir} (missing or empty) the data directory of a node of cluster {@code
   * clusterName} that starts from the backup in {@code backupDir}.
   */
  public static Manifest restore(Path backupDir, Path dataDir, String clusterName)
      throws IOException {
    Manifest m = verify(backupDir);
    if (Files.exists(dataDir)) {
      try (var entries = Files.list(dataDir)) {
        if (entries.findAny().isPresent()) {
          throw new IOException(
              "data directory "
                  + dataDir
                  + " is not empty; restore only into a new or empty directory");
        }
      }
    }
    Path group = dataDir.resolve("raft").resolve(RaftConsensus.groupUuid(clusterName).toString());
    Path sm = Files.createDirectories(group.resolve("sm"));
    Path current = Files.createDirectories(group.resolve("current"));
    Path snapshot = sm.resolve("snapshot." + m.term() + "_" + m.index());
    Files.copy(backupDir.resolve(m.file()), snapshot);
    writeMd5File(snapshot);
    // Ratis's Raft metadata: the snapshot's term, so the log resumes after it in a term no older.
    Properties meta = new Properties();
    meta.setProperty("term", Long.toString(m.term()));
    meta.setProperty("votedFor", "");
    writeProperties(meta, current.resolve("raft-meta"), "");
    return m;
  }

  /**
   * The snapshot's {@code .md5} file, as the consensus layer reads it beside a snapshot: one {@code
   * md5sum} line, {@code <hex digest> *<file name>}, of the file as it now is on disk.
   */
  private static void writeMd5File(Path snapshot) throws IOException {
    MessageDigest digest = md5();
    try (InputStream in = new DigestInputStream(Files.newInputStream(snapshot), digest)) {
      in.transferTo(OutputStream.nullOutputStream());
    }
    String md5 = HexFormat.of().formatHex(digest.digest());
    Path md5File = snapshot.resolveSibling(snapshot.getFileName() + ".md5");
    Path partial = md5File.resolveSibling(md5File.getFileName() + ".partial");
    Files.writeString(
        partial,
        md5.toLowerCase(Locale.ROOT) + " *" + snapshot.getFileName() + "\n",
        StandardCharsets.UTF_8);
    Files.move(
        partial, md5File, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static void writeProperties(Properties p, Path file, String comment) throws IOException {
    Path partial = file.resolveSibling(file.getFileName() + ".partial");
    try (Writer w = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
      p.store(w, comment);
    }
    Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
