package io.leasehold.server.backup;

import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.BackupHeader;
import io.leasehold.server.Peer;
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
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;

/**
 * Backups of a node's state and their restore into a new data directory.
 *
 * <p>A backup is a directory holding one snapshot file per group (the whole replicated state of the
 * group at one log position, as a node writes it) and {@value #MANIFEST}: each file's group,
 * position, size and MD5, and the origin. A cluster without lease groups has one file, the meta
 * group's. It is taken online through {@code Cluster/Backup} from any one member, the lease groups
 * one after another and the meta group last, so that the meta group's placement table knows every
 * namespace a lease group's snapshot holds.
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

  /**
   * What a backup holds: the meta group's snapshot (its group, position, size, MD5 and file), and
   * each lease group's.
   */
  public record Manifest(
      String nodeId,
      String groupId,
      long term,
      long index,
      long sizeBytes,
      String md5,
      Instant takenAt,
      String file,
      List<GroupFile> leaseGroups,
      int leaseGroupSize) {
    public Manifest {
      leaseGroups = List.copyOf(leaseGroups);
    }

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
      if (leaseGroupSize > 0) {
        p.setProperty("lease_group_size", Integer.toString(leaseGroupSize));
      }
      if (!leaseGroups.isEmpty()) {
        p.setProperty(
            "lease_groups",
            String.join(",", leaseGroups.stream().map(g -> Integer.toString(g.number())).toList()));
        for (GroupFile g : leaseGroups) {
          String k = "lease_group." + g.number() + ".";
          p.setProperty(k + "group", g.groupId());
          p.setProperty(k + "term", Long.toString(g.term()));
          p.setProperty(k + "index", Long.toString(g.index()));
          p.setProperty(k + "size", Long.toString(g.sizeBytes()));
          p.setProperty(k + "md5", g.md5());
          p.setProperty(k + "file", g.file());
        }
      }
      return p;
    }

    static Manifest of(Properties p) throws IOException {
      try {
        List<GroupFile> groups = new ArrayList<>();
        String numbers = p.getProperty("lease_groups", "").trim();
        if (!numbers.isEmpty()) {
          for (String n : numbers.split(",")) {
            int number = Integer.parseInt(n.trim());
            String k = "lease_group." + number + ".";
            groups.add(
                new GroupFile(
                    number,
                    p.getProperty(k + "group", ""),
                    Long.parseLong(p.getProperty(k + "term")),
                    Long.parseLong(p.getProperty(k + "index")),
                    Long.parseLong(p.getProperty(k + "size")),
                    p.getProperty(k + "md5", ""),
                    java.util.Objects.requireNonNull(p.getProperty(k + "file"), k + "file")));
          }
        }
        return new Manifest(
            p.getProperty("node", ""),
            p.getProperty("group", ""),
            Long.parseLong(p.getProperty("term")),
            Long.parseLong(p.getProperty("index")),
            Long.parseLong(p.getProperty("size")),
            p.getProperty("md5", ""),
            Instant.parse(p.getProperty("taken_at")),
            java.util.Objects.requireNonNull(p.getProperty("file"), "file"),
            groups,
            Integer.parseInt(p.getProperty("lease_group_size", "0")));
      } catch (RuntimeException e) {
        throw new IOException("not a Leasehold backup manifest: " + e.getMessage(), e);
      }
    }
  }

  /** A lease group's snapshot in a backup. */
  public record GroupFile(
      int number, String groupId, long term, long index, long sizeBytes, String md5, String file) {}

  /**
   * Writes the chunks of a {@code Cluster/Backup} stream into {@code dir} (created if missing, must
   * hold no backup yet): one file per group, each starting at its header, each checked for size and
   * MD5 against its header. A stream cut off or damaged leaves no file behind.
   */
  public static Manifest receive(Iterator<BackupChunk> stream, Path dir) throws IOException {
    Files.createDirectories(dir);
    if (Files.exists(dir.resolve(MANIFEST))) {
      throw new IOException(dir + " already holds a backup");
    }
    if (!stream.hasNext()) {
      throw new IOException("the backup stream was empty");
    }
    BackupChunk chunk = stream.next();
    if (!chunk.hasHeader()) {
      throw new IOException("the backup stream did not start with its header");
    }
    List<Path> written = new ArrayList<>();
    List<GroupFile> leaseGroups = new ArrayList<>();
    Manifest meta = null;
    try {
      while (chunk != null) {
        BackupHeader h = chunk.getHeader();
        int group = h.getGroup();
        String name =
            (group == 0 ? "" : "lease-group-" + group + ".")
                + "snapshot."
                + h.getTerm()
                + "_"
                + h.getIndex();
        if ((group == 0 && meta != null)
            || leaseGroups.stream().anyMatch(g -> g.number() == group)) {
          throw new IOException("the backup stream holds group " + group + " twice");
        }
        Path partial = dir.resolve(name + ".partial");
        written.add(partial);
        MessageDigest md5 = md5();
        long size = 0;
        try (OutputStream out = Files.newOutputStream(partial)) {
          while (true) {
            chunk.getData().writeTo(out);
            md5.update(chunk.getData().asReadOnlyByteBuffer());
            size += chunk.getData().size();
            if (!stream.hasNext()) {
              chunk = null;
              break;
            }
            chunk = stream.next();
            if (chunk.hasHeader()) {
              break; // the next group's file
            }
          }
        }
        String digest = HexFormat.of().formatHex(md5.digest());
        if (size != h.getSizeBytes()
            || (!h.getMd5().isEmpty() && !h.getMd5().equalsIgnoreCase(digest))) {
          throw new IOException(
              "the backup arrived damaged: "
                  + (group == 0 ? "the meta group's" : "lease group " + group + "'s")
                  + " snapshot has "
                  + size
                  + " bytes with MD5 "
                  + digest
                  + ", expected "
                  + h.getSizeBytes()
                  + " bytes with MD5 "
                  + h.getMd5());
        }
        Files.move(partial, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        written.add(dir.resolve(name));
        if (group == 0) {
          meta =
              new Manifest(
                  h.getNodeId(),
                  h.getGroupId(),
                  h.getTerm(),
                  h.getIndex(),
                  size,
                  digest,
                  Instant.ofEpochSecond(h.getTakenAt().getSeconds()),
                  name,
                  List.of(),
                  h.getLeaseGroupSize());
        } else {
          leaseGroups.add(
              new GroupFile(group, h.getGroupId(), h.getTerm(), h.getIndex(), size, digest, name));
        }
      }
      if (meta == null) {
        throw new IOException("the backup stream ended without the meta group's snapshot");
      }
    } catch (IOException | RuntimeException e) {
      // A stream cut off midway (the node stopped, the deadline passed): the caller may try
      // another node into the same directory, and half a backup would only be in the way.
      for (Path p : written) {
        Files.deleteIfExists(p);
      }
      throw e;
    }
    leaseGroups.sort(java.util.Comparator.comparingInt(GroupFile::number));
    Manifest m =
        new Manifest(
            meta.nodeId(),
            meta.groupId(),
            meta.term(),
            meta.index(),
            meta.sizeBytes(),
            meta.md5(),
            meta.takenAt(),
            meta.file(),
            leaseGroups,
            meta.leaseGroupSize());
    writeProperties(m.toProperties(), dir.resolve(MANIFEST), "Leasehold backup");
    return m;
  }

  /** Reads and checks a backup directory: the manifest, and each snapshot file's size and MD5. */
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
    check(dir.resolve(m.file()), m.sizeBytes(), m.md5());
    for (GroupFile g : m.leaseGroups()) {
      check(dir.resolve(g.file()), g.sizeBytes(), g.md5());
    }
    return m;
  }

  private static void check(Path file, long size, String expectedMd5) throws IOException {
    if (!Files.exists(file) || Files.size(file) != size) {
      throw new IOException("backup file " + file + " is missing or not " + size + " bytes");
    }
    MessageDigest md5 = md5();
    try (InputStream in = new DigestInputStream(Files.newInputStream(file), md5)) {
      in.transferTo(OutputStream.nullOutputStream());
    }
    String digest = HexFormat.of().formatHex(md5.digest());
    if (!digest.equalsIgnoreCase(expectedMd5)) {
      throw new IOException(
          "backup file " + file + " has MD5 " + digest + ", the manifest says " + expectedMd5);
    }
  }

  /**
   * Makes {@code dataDir} (missing or empty) the data directory of a node of cluster {@code
   * clusterName} that starts from the backup in {@code backupDir}, for a backup without lease
   * groups.
   */
  public static Manifest restore(Path backupDir, Path dataDir, String clusterName)
      throws IOException {
    return restore(backupDir, dataDir, clusterName, List.of());
  }

  /**
   * Makes {@code dataDir} (missing or empty) the data directory of a node of cluster {@code
   * clusterName} that starts from the backup in {@code backupDir}. A backup with lease groups needs
   * {@code peers}, the members the nodes will start with ({@code --peers}): each lease group is
   * restored with them as its members, with the priorities that spread its leadership, as the
   * cluster formed it.
   */
  public static Manifest restore(Path backupDir, Path dataDir, String clusterName, List<Peer> peers)
      throws IOException {
    return restore(backupDir, dataDir, clusterName, peers, Optional.empty());
  }

  /**
   * As {@link #restore(Path, Path, String, List)}, for node {@code id}: a backup whose lease groups
   * sat on subsets of the nodes ({@code --lease-group-size}) restores into a node's data directory
   * the lease groups that node forms with among {@code peers}, each with its members of formation,
   * and needs the id.
   */
  public static Manifest restore(
      Path backupDir, Path dataDir, String clusterName, List<Peer> peers, Optional<String> id)
      throws IOException {
    Manifest m = verify(backupDir);
    String metaId = RaftConsensus.groupUuid(clusterName).toString();
    if (!m.groupId().isEmpty() && !m.groupId().equals(metaId)) {
      throw new IOException(
          "the backup is of group "
              + m.groupId()
              + ", not of cluster '"
              + clusterName
              + "' (group "
              + metaId
              + "): give the --cluster-name the backed-up cluster ran with");
    }
    for (GroupFile g : m.leaseGroups()) {
      String expected = RaftConsensus.leaseGroupUuid(clusterName, g.number()).toString();
      if (!g.groupId().isEmpty() && !g.groupId().equals(expected)) {
        throw new IOException(
            "lease group "
                + g.number()
                + " of the backup is group "
                + g.groupId()
                + ", not lease group "
                + g.number()
                + " of cluster '"
                + clusterName
                + "' ("
                + expected
                + ")");
      }
    }
    if (m.leaseGroupSize() > 0 && id.isEmpty()) {
      throw new IOException(
          "--id: the backup's lease groups sat on "
              + m.leaseGroupSize()
              + " nodes each (--lease-group-size), and a node gets only its own: give the id of the"
              + " node this data directory is for");
    }
    if (id.isPresent() && peers.stream().noneMatch(p -> p.id().equals(id.get()))) {
      throw new IOException("--id: " + id.get() + " is not one of --peers");
    }
    if (m.leaseGroupSize() > peers.size() && !m.leaseGroups().isEmpty()) {
      throw new IOException(
          "--peers: the backup's lease groups sat on "
              + m.leaseGroupSize()
              + " nodes each; give at least that many peers");
    }
    if (!m.leaseGroups().isEmpty() && peers.isEmpty()) {
      throw new IOException(
          "--peers: the backup holds lease groups "
              + m.leaseGroups().stream().map(g -> Integer.toString(g.number())).toList()
              + ", and each is restored with the members the nodes will start with: give the"
              + " --peers the nodes start with");
    }
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
    Path raft = dataDir.resolve("raft");
    writeGroup(backupDir.resolve(m.file()), raft.resolve(metaId), m.term(), m.index());
    for (GroupFile g : m.leaseGroups()) {
      if (m.leaseGroupSize() > 0
          && !RaftConsensus.formsLeaseGroup(peers, g.number(), m.leaseGroupSize(), id.get())) {
        continue; // not one of this node's groups
      }
      Path group = raft.resolve(RaftConsensus.leaseGroupUuid(clusterName, g.number()).toString());
      writeGroup(backupDir.resolve(g.file()), group, g.term(), g.index());
      RaftConsensus.writeLeaseGroupMembers(
          group.resolve("current"), g.term(), g.index(), peers, g.number(), m.leaseGroupSize());
    }
    return m;
  }

  /**
   * A group's directory under {@code <data-dir>/raft} that starts from a snapshot: the snapshot
   * where the consensus layer looks for it, and Raft metadata with the snapshot's term, so the log
   * resumes after it in a term no older.
   */
  private static void writeGroup(Path file, Path group, long term, long index) throws IOException {
    Path sm = Files.createDirectories(group.resolve("sm"));
    Path current = Files.createDirectories(group.resolve("current"));
    Path snapshot = sm.resolve("snapshot." + term + "_" + index);
    Files.copy(file, snapshot);
    writeMd5File(snapshot);
    Properties meta = new Properties();
    meta.setProperty("term", Long.toString(term));
    meta.setProperty("votedFor", "");
    writeProperties(meta, current.resolve("raft-meta"), "");
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
