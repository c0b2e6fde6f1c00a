package io.leasehold.statemachine.core;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.WatchRequest;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules for input, shared by the API (which rejects bad requests before they reach the log) and
 * the core (which must stay deterministic even if a bad command was logged).
 */
public final class Validation {
  private Validation() {}

  /** The largest google.protobuf.Duration (about 10,000 years). */
  static final long MAX_DURATION_SECONDS = 315_576_000_000L;

  public static void acquire(AcquireRequest r) {
    name("name", r.getName());
    holder("holder", r.getHolder());
    if (r.hasTtl()) {
      positiveDuration("ttl", r.getTtl());
    }
    if (r.hasAttributes()) {
      attributes("attributes", r.getAttributes());
    }
    requestId("request_id", r.getRequestId());
    sessionOrTtl(r.getSession(), r.hasTtl(), "the lease");
  }

  /**
   * An AcquireMany: 1 to {@link Limits#MAX_ACQUIRE_MANY} distinct valid names, each item's
   * attributes valid, and the holder, TTL or session, and request id as an Acquire's.
   */
  public static void acquireMany(AcquireManyRequest r) {
    if (r.getItemsCount() == 0) {
      throw new InvalidArgumentException("items", "must contain at least one name");
    }
    if (r.getItemsCount() > Limits.MAX_ACQUIRE_MANY) {
      throw new InvalidArgumentException(
          "items",
          "at most " + Limits.MAX_ACQUIRE_MANY + " names per call, got " + r.getItemsCount());
    }
    Map<String, Integer> seen = new HashMap<>(r.getItemsCount() * 2);
    for (int i = 0; i < r.getItemsCount(); i++) {
      AcquireManyItem item = r.getItems(i);
      name("items[" + i + "].name", item.getName());
      Integer first = seen.putIfAbsent(item.getName(), i);
      if (first != null) {
        throw new InvalidArgumentException(
            "items[" + i + "].name",
            "names must be distinct: " + item.getName() + " is also items[" + first + "]");
      }
      if (item.hasAttributes()) {
        attributes("items[" + i + "].attributes", item.getAttributes());
      }
    }
    holder("holder", r.getHolder());
    if (r.hasTtl()) {
      positiveDuration("ttl", r.getTtl());
    }
    requestId("request_id", r.getRequestId());
    sessionOrTtl(r.getSession(), r.hasTtl(), "the leases");
  }

  /**
   * An Acquire's {@code wait}, checked by the node that receives the call, never in apply: the wait
   * is that node's business and never reaches the log, except from a node too old to know the
   * field, whose entries every replica must apply alike.
   */
  public static void acquireWait(AcquireRequest r) {
    if (r.hasWait()) {
      nonNegativeDuration("wait", r.getWait());
      if (r.getWait().getSeconds() > Limits.MAX_ACQUIRE_WAIT.toSeconds()
          || (r.getWait().getSeconds() == Limits.MAX_ACQUIRE_WAIT.toSeconds()
              && r.getWait().getNanos() > 0)) {
        throw new InvalidArgumentException(
            "wait",
            "must be at most "
                + Limits.MAX_ACQUIRE_WAIT.toSeconds()
                + "s, got "
                + seconds(r.getWait()));
      }
    }
  }

  public static void createSession(CreateSessionRequest r) {
    holder("holder", r.getHolder());
    if (r.hasTtl()) {
      positiveDuration("ttl", r.getTtl());
    }
  }

  public static void keepAlive(KeepAliveRequest r) {
    if (r.getSessionsCount() == 0) {
      throw new InvalidArgumentException("sessions", "must contain at least one session id");
    }
    if (r.getSessionsCount() > Limits.MAX_RENEW_ITEMS) {
      throw new InvalidArgumentException(
          "sessions",
          "at most " + Limits.MAX_RENEW_ITEMS + " per call, got " + r.getSessionsCount());
    }
    for (int i = 0; i < r.getSessionsCount(); i++) {
      session("sessions[" + i + "]", r.getSessions(i));
    }
  }

  public static void closeSession(CloseSessionRequest r) {
    session("session", r.getSession());
  }

  /**
   * The {@code session} field (an id, or 0 for none) and whether {@code ttl} is set: a lease lives
   * with a session or has a TTL of its own, never both. {@code what} names it in the error.
   */
  public static void sessionOrTtl(long session, boolean hasTtl, String what) {
    optionalSession("session", session);
    if (session != 0 && hasTtl) {
      throw new InvalidArgumentException(
          "ttl", "must be unset when " + what + " lives with a session (session " + session + ")");
    }
  }

  /** A session id, or 0 for none. */
  static void optionalSession(String field, long id) {
    if (id < 0) {
      throw new InvalidArgumentException(
          field, "must be a session id (positive), or 0 for none, got " + id);
    }
  }

  /** A page size: 0 for the server's maximum, else at most {@link Limits#MAX_LIST_LIMIT}. */
  static void listLimit(String field, int limit) {
    if (limit < 0 || limit > Limits.MAX_LIST_LIMIT) {
      throw new InvalidArgumentException(
          field,
          "must be between 0 (server maximum) and " + Limits.MAX_LIST_LIMIT + ", got " + limit);
    }
  }

  public static void session(String field, long id) {
    if (id <= 0) {
      throw new InvalidArgumentException(field, "must be a session id (positive), got " + id);
    }
  }

  public static void transfer(TransferRequest r) {
    name("name", r.getName());
    token("token", r.getToken());
    holder("to_holder", r.getToHolder());
    if (r.hasTtl()) {
      positiveDuration("ttl", r.getTtl());
    }
    sessionOrTtl(r.getSession(), r.hasTtl(), "the new lease");
    if (r.hasAttributes()) {
      attributes("attributes", r.getAttributes());
    }
    if (r.hasAcceptWithin()) {
      positiveDuration("accept_within", r.getAcceptWithin());
      if (Times.micros(r.getAcceptWithin()) > Times.micros(Limits.MAX_POLICY_DURATION)) {
        throw new InvalidArgumentException(
            "accept_within", "must be at most " + Limits.MAX_POLICY_DURATION.toDays() + " days");
      }
    }
  }

  public static void acceptTransfer(AcceptTransferRequest r) {
    name("name", r.getName());
    if (r.getOffer() <= 0) {
      throw new InvalidArgumentException(
          "offer", "must be the offer's id (positive), got " + r.getOffer());
    }
    if (!r.getHolder().isEmpty()) {
      holder("holder", r.getHolder());
    }
  }

  public static void getSession(GetSessionRequest r) {
    session("session", r.getSession());
    listLimit("limit", r.getLimit());
  }

  public static void listSessions(ListSessionsRequest r) {
    if (!r.getHolder().isEmpty()) {
      text("holder", r.getHolder(), Limits.MAX_HOLDER_BYTES);
    }
    listLimit("limit", r.getLimit());
    if (r.getStartAfter() < 0) {
      throw new InvalidArgumentException(
          "start_after", "must be a session id or 0, got " + r.getStartAfter());
    }
  }

  /** Empty (none), or at most {@link AppliedRequests#MAX_ID_LENGTH} printable ASCII characters. */
  public static void requestId(String field, String id) {
    if (id.length() > AppliedRequests.MAX_ID_LENGTH) {
      throw new InvalidArgumentException(
          field,
          "must be at most " + AppliedRequests.MAX_ID_LENGTH + " characters, got " + id.length());
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c <= ' ' || c > '~') {
        throw new InvalidArgumentException(
            field, "must be printable ASCII without spaces; character " + i + " is not");
      }
    }
  }

  public static void renew(RenewRequest r) {
    if (r.getItemsCount() == 0) {
      throw new InvalidArgumentException("items", "must contain at least one (name, token) pair");
    }
    if (r.getItemsCount() > Limits.MAX_RENEW_ITEMS) {
      throw new InvalidArgumentException(
          "items", "at most " + Limits.MAX_RENEW_ITEMS + " per call, got " + r.getItemsCount());
    }
    // The hot path of every client's heartbeat: field names are built only for an error.
    for (int i = 0; i < r.getItemsCount(); i++) {
      RenewItem item = r.getItems(i);
      String rule = nameRule(item.getName());
      if (rule != null) {
        throw new InvalidArgumentException("items[" + i + "].name", rule);
      }
      if (item.getToken() <= 0) {
        token("items[" + i + "].token", item.getToken());
      }
    }
  }

  public static void release(ReleaseRequest r) {
    name("name", r.getName());
    token("token", r.getToken());
  }

  public static void update(UpdateRequest r) {
    name("name", r.getName());
    token("token", r.getToken());
    for (int i = 0; i < r.getUpdateMask().getPathsCount(); i++) {
      String path = r.getUpdateMask().getPaths(i);
      if (!path.equals("address") && !path.equals("metadata") && !path.equals("status")) {
        throw new InvalidArgumentException(
            "update_mask.paths[" + i + "]",
            "unknown attribute \"" + abbreviate(path) + "\"; expected address, metadata or status");
      }
    }
    if (!r.hasAttributes() && r.getUpdateMask().getPathsCount() == 0) {
      throw new InvalidArgumentException(
          "attributes",
          "must be set (the new address, metadata and status), or name the fields to change in update_mask");
    }
    attributes("attributes", r.getAttributes());
  }

  public static void watch(WatchRequest r) {
    text("prefix", r.getPrefix(), Limits.MAX_NAME_BYTES);
    if (r.getStartRevision() < 0) {
      throw new InvalidArgumentException(
          "start_revision", "must be >= 0 (0: from now on), got " + r.getStartRevision());
    }
    if (r.hasStartGroup() && r.getStartRevision() == 0) {
      throw new InvalidArgumentException(
          "start_group", "is the group start_revision counts in: set it only with start_revision");
    }
    for (int i = 0; i < r.getTypesCount(); i++) {
      int value = r.getTypesValue(i);
      Event.Type type = Event.Type.forNumber(value);
      if (type == null || type == Event.Type.TYPE_UNSPECIFIED) {
        throw new InvalidArgumentException(
            "types[" + i + "]",
            "unknown event type "
                + value
                + "; expected ACQUIRED, RENEWED, UPDATED, RELEASED, EXPIRED, REVOKED or POLICY_CHANGED");
      }
    }
    if (EventView.forNumber(r.getViewValue()) == null) {
      throw new InvalidArgumentException(
          "view",
          "unknown event view "
              + r.getViewValue()
              + "; expected EVENT_VIEW_FULL (or unset) or EVENT_VIEW_BASIC");
    }
    choices("zones", r.getZonesList(), Limits.MAX_METADATA_VALUE_BYTES);
    metadata("metadata", r.getMetadataMap());
    choices("statuses", r.getStatusesList(), Limits.MAX_STATUS_BYTES);
  }

  /**
   * A list of alternatives in a filter (zones, statuses): at most {@link
   * Limits#MAX_FILTER_CHOICES}, each non-empty, printable, given once.
   */
  public static void choices(String field, List<String> values, int maxBytes) {
    if (values.size() > Limits.MAX_FILTER_CHOICES) {
      throw new InvalidArgumentException(
          field, "at most " + Limits.MAX_FILTER_CHOICES + " entries, got " + values.size());
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < values.size(); i++) {
      String v = values.get(i);
      String entry = field + "[" + i + "]";
      if (v.isEmpty()) {
        throw new InvalidArgumentException(entry, "must not be empty");
      }
      text(entry, v, maxBytes);
      if (!seen.add(v)) {
        throw new InvalidArgumentException(
            entry, "\"" + v + "\" is already given earlier in the list");
      }
    }
  }

  public static void get(GetRequest r) {
    name("name", r.getName());
  }

  public static void list(ListRequest r) {
    text("prefix", r.getPrefix(), Limits.MAX_NAME_BYTES);
    text("start_after", r.getStartAfter(), Limits.MAX_NAME_BYTES);
    listLimit("limit", r.getLimit());
    if (!r.getHolder().isEmpty()) {
      text("holder", r.getHolder(), Limits.MAX_HOLDER_BYTES);
    }
  }

  /** A lease name: {@code namespace/rest}, both parts non-empty, bounded, printable. */
  public static void name(String field, String name) {
    String rule = nameRule(name);
    if (rule != null) {
      throw new InvalidArgumentException(field, rule);
    }
  }

  /** The rule a lease name breaks, or null if it is valid. */
  static String nameRule(String name) {
    if (name.isEmpty()) {
      return "must not be empty; expected namespace/rest, e.g. lock/billing-job";
    }
    String rule = textRule(name, Limits.MAX_NAME_BYTES);
    if (rule != null) {
      return rule;
    }
    int slash = name.indexOf('/');
    if (slash <= 0 || slash == name.length() - 1) {
      return "must be namespace/rest with both parts non-empty, got \"" + abbreviate(name) + "\"";
    }
    return null;
  }

  public static void holder(String field, String holder) {
    if (holder.isEmpty()) {
      throw new InvalidArgumentException(field, "must not be empty");
    }
    text(field, holder, Limits.MAX_HOLDER_BYTES);
  }

  public static void token(String field, long token) {
    if (token <= 0) {
      throw new InvalidArgumentException(field, "must be a positive fencing token, got " + token);
    }
  }

  public static void positiveDuration(String field, Duration d) {
    if (d.getNanos() < -999_999_999
        || d.getNanos() > 999_999_999
        || (d.getSeconds() > 0 && d.getNanos() < 0)
        || (d.getSeconds() < 0 && d.getNanos() > 0)) {
      throw new InvalidArgumentException(
          field,
          "is not a valid duration (seconds and nanos disagree in sign or nanos out of range)");
    }
    if (d.getSeconds() < 0 || (d.getSeconds() == 0 && d.getNanos() <= 0)) {
      throw new InvalidArgumentException(field, "must be positive, got " + seconds(d));
    }
    // protobuf's own range; beyond it the value in microseconds would overflow during apply.
    if (d.getSeconds() > MAX_DURATION_SECONDS) {
      throw new InvalidArgumentException(
          field,
          "must be at most "
              + MAX_DURATION_SECONDS
              + "s (the protobuf Duration range), got "
              + d.getSeconds()
              + "s");
    }
  }

  /** As protobuf's JSON form writes it: {@code 0s}, {@code -1.5s}. */
  private static String seconds(Duration d) {
    return BigDecimal.valueOf(d.getSeconds())
            .add(BigDecimal.valueOf(d.getNanos(), 9))
            .stripTrailingZeros()
            .toPlainString()
        + "s";
  }

  /** A duration that may be zero (none) but not negative, e.g. a grace period. */
  public static void nonNegativeDuration(String field, Duration d) {
    if (d.getSeconds() == 0 && d.getNanos() == 0) {
      return;
    }
    if (d.getSeconds() < 0 || (d.getSeconds() == 0 && d.getNanos() < 0)) {
      throw new InvalidArgumentException(
          field, "must not be negative, got " + d.getSeconds() + "s " + d.getNanos() + "ns");
    }
    positiveDuration(field, d);
  }

  /** A bounded printable string (no control characters, valid Unicode); empty is allowed. */
  public static void printable(String field, String value, int maxBytes) {
    text(field, value, maxBytes);
  }

  public static void attributes(String field, Attributes a) {
    text(field + ".address", a.getAddress(), Limits.MAX_ADDRESS_BYTES);
    text(field + ".status", a.getStatus(), Limits.MAX_STATUS_BYTES);
    metadata(field + ".metadata", a.getMetadataMap());
  }

  /** Metadata pairs: at most 64, keys non-empty, keys and values bounded and printable. */
  public static void metadata(String field, Map<String, String> metadata) {
    if (metadata.size() > Limits.MAX_METADATA_ENTRIES) {
      throw new InvalidArgumentException(
          field, "at most " + Limits.MAX_METADATA_ENTRIES + " entries, got " + metadata.size());
    }
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      if (e.getKey().isEmpty()) {
        throw new InvalidArgumentException(field, "keys must not be empty");
      }
      text(
          field + " key \"" + abbreviate(e.getKey()) + "\"",
          e.getKey(),
          Limits.MAX_METADATA_KEY_BYTES);
      text(
          field + "[" + abbreviate(e.getKey()) + "]",
          e.getValue(),
          Limits.MAX_METADATA_VALUE_BYTES);
    }
  }

  private static void text(String field, String value, int maxBytes) {
    String rule = textRule(value, maxBytes);
    if (rule != null) {
      throw new InvalidArgumentException(field, rule);
    }
  }

  /** The rule a bounded printable string breaks, or null if it is valid. */
  private static String textRule(String value, int maxBytes) {
    // UTF-8 length is at most 3 bytes per UTF-16 unit: skip the encoding for short strings.
    if (value.length() * 3 > maxBytes) {
      int bytes = value.getBytes(StandardCharsets.UTF_8).length;
      if (bytes > maxBytes) {
        return "must be at most " + maxBytes + " bytes of UTF-8, got " + bytes;
      }
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c)) {
        return "must not contain control characters (found U+"
            + String.format("%04X", (int) c)
            + " at "
            + i
            + ")";
      }
      if (Character.isSurrogate(c)
          && !(Character.isHighSurrogate(c)
              && i + 1 < value.length()
              && Character.isLowSurrogate(value.charAt(i + 1)))) {
        if (!(Character.isLowSurrogate(c)
            && i > 0
            && Character.isHighSurrogate(value.charAt(i - 1)))) {
          return "must be valid Unicode (unpaired surrogate at " + i + ")";
        }
      }
    }
    return null;
  }

  private static String abbreviate(String s) {
    return s.length() <= 64 ? s : s.substring(0, 61) + "...";
  }
}
