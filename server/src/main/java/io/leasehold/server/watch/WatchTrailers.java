package io.leasehold.server.watch;

import io.grpc.Metadata;

/**
 * What a Watch stream's closing status carries for the client to go on: the revision the history
 * now starts at (a start revision that was compacted), or the revision to resume from (a watcher
 * cut off for lagging), or for a watch across lease groups the resume token.
 */
final class WatchTrailers {
  static final Metadata.Key<String> COMPACT_REVISION =
      Metadata.Key.of("leasehold-compact-revision", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> RESUME_REVISION =
      Metadata.Key.of("leasehold-resume-revision", Metadata.ASCII_STRING_MARSHALLER);

  /** A watch across lease groups: the resume token, in place of a resume revision. */
  static final Metadata.Key<byte[]> RESUME_TOKEN =
      Metadata.Key.of("leasehold-resume-token-bin", Metadata.BINARY_BYTE_MARSHALLER);

  /**
   * A watch a node cannot serve, for it is not a member of the groups it follows: each such lease
   * group and its members' client addresses, as {@code 1=host:port,host:port;3=host:port}.
   */
  static final Metadata.Key<String> GROUP_MEMBERS =
      Metadata.Key.of("leasehold-group-members", Metadata.ASCII_STRING_MARSHALLER);

  private WatchTrailers() {}

  static Metadata compactRevision(long revision) {
    return trailer(COMPACT_REVISION, revision);
  }

  static Metadata resumeRevision(long revision) {
    return trailer(RESUME_REVISION, revision);
  }

  private static Metadata trailer(Metadata.Key<String> key, long value) {
    Metadata m = new Metadata();
    m.put(key, Long.toString(value));
    return m;
  }
}
