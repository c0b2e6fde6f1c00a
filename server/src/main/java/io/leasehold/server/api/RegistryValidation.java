package io.leasehold.server.api;

import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.SetStatusRequest;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.Limits;
import io.leasehold.statemachine.core.RegistryNames;
import io.leasehold.statemachine.core.Validation;
import java.nio.charset.StandardCharsets;

/**
 * The rules for registry input, checked before anything reaches the log. Registry requests become
 * lease commands, so the lease rules ({@link Validation}) apply too; errors name the registry
 * request's own fields ({@code service}, {@code instance}, {@code address} …).
 */
public final class RegistryValidation {
  private RegistryValidation() {}

  static final String SERVING = "SERVING";

  /** The holder of a registration: the one given, or {@code <service>/<instance>}. */
  static String holder(RegisterRequest r) {
    return r.getHolder().isEmpty() ? r.getService() + "/" + r.getInstance() : r.getHolder();
  }

  /** The attributes a registration stores: address, metadata and status (default SERVING). */
  static Attributes attributes(RegisterRequest r) {
    return Attributes.newBuilder()
        .setAddress(r.getAddress())
        .putAllMetadata(r.getMetadataMap())
        .setStatus(r.getStatus().isEmpty() ? SERVING : r.getStatus())
        .build();
  }

  static void register(RegisterRequest r) {
    instanceName(r.getService(), r.getInstance());
    if (r.getHolder().isEmpty()) {
      String defaultHolder = holder(r);
      int bytes = defaultHolder.getBytes(StandardCharsets.UTF_8).length;
      if (bytes > Limits.MAX_HOLDER_BYTES) {
        throw new InvalidArgumentException(
            "holder",
            "must be set when <service>/<instance> (the default holder) is over "
                + Limits.MAX_HOLDER_BYTES
                + " bytes of UTF-8, got "
                + bytes);
      }
    } else {
      Validation.holder("holder", r.getHolder());
    }
    if (r.hasTtl()) {
      Validation.positiveDuration("ttl", r.getTtl());
    }
    Validation.sessionOrTtl(r.getSession(), r.hasTtl(), "the instance");
    attributes(attributes(r));
    Validation.requestId("request_id", r.getRequestId());
  }

  static void deregister(DeregisterRequest r) {
    instanceName(r.getService(), r.getInstance());
    Validation.token("token", r.getToken());
  }

  static void setStatus(SetStatusRequest r) {
    instanceName(r.getService(), r.getInstance());
    Validation.token("token", r.getToken());
    if (r.getStatus().isEmpty()) {
      throw new InvalidArgumentException("status", "must not be empty, e.g. SERVING or DRAINING");
    }
    attributes(Attributes.newBuilder().setStatus(r.getStatus()).build());
  }

  static void resolve(ResolveRequest r) {
    part("service", r.getService());
    // The prefix plus at least one byte of instance must still be a valid lease name.
    nameFits("service", RegistryNames.servicePrefix(r.getService()) + "x");
    Validation.choices("zones", r.getZonesList(), Limits.MAX_METADATA_VALUE_BYTES);
    if (r.getStatusesCount() > 0 && r.getAnyStatus()) {
      throw new InvalidArgumentException(
          "statuses", "give statuses or any_status, not both (any_status is every status)");
    }
    Validation.choices("statuses", r.getStatusesList(), Limits.MAX_STATUS_BYTES);
    Validation.metadata("metadata", r.getMetadataMap());
    if (r.getWaitForVersion() < 0) {
      throw new InvalidArgumentException(
          "wait_for_version", "must be 0 (no wait) or a version, got " + r.getWaitForVersion());
    }
    if (r.hasWait()) {
      if (r.getWaitForVersion() == 0) {
        throw new InvalidArgumentException(
            "wait", "only with wait_for_version: a Resolve without it answers at once");
      }
      Validation.positiveDuration("wait", r.getWait());
      if (r.getWait().getSeconds() > RegistryService.MAX_WAIT.toSeconds()
          || (r.getWait().getSeconds() == RegistryService.MAX_WAIT.toSeconds()
              && r.getWait().getNanos() > 0)) {
        throw new InvalidArgumentException(
            "wait", "must be at most " + RegistryService.MAX_WAIT.toMinutes() + " minutes");
      }
    }
  }

  /** Service and instance, each a valid part, and together a valid lease name. */
  private static void instanceName(String service, String instance) {
    part("service", service);
    part("instance", instance);
    nameFits("service", RegistryNames.servicePrefix(service) + "x");
    nameFits("instance", RegistryNames.leaseName(service, instance));
  }

  /** One segment of a lease name: non-empty, no '/', printable, valid Unicode. */
  private static void part(String field, String value) {
    if (value.isEmpty()) {
      throw new InvalidArgumentException(field, "must not be empty");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '/') {
        throw new InvalidArgumentException(field, "must not contain '/' (found at " + i + ")");
      }
      if (Character.isISOControl(c)) {
        throw new InvalidArgumentException(
            field,
            "must not contain control characters (found U+"
                + String.format("%04X", (int) c)
                + " at "
                + i
                + ")");
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < value.length()
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new InvalidArgumentException(
            field, "must be valid Unicode (unpaired surrogate at " + i + ")");
      }
    }
  }

  /** The lease name built from the parts stays within the lease name rules (its length, mostly). */
  private static void nameFits(String field, String leaseName) {
    int bytes =
        leaseName.length() * 3 > Limits.MAX_NAME_BYTES
            ? leaseName.getBytes(StandardCharsets.UTF_8).length
            : 0;
    if (bytes > Limits.MAX_NAME_BYTES) {
      throw new InvalidArgumentException(
          field,
          "too long: the lease name service/<service>/<instance> must be at most "
              + Limits.MAX_NAME_BYTES
              + " bytes of UTF-8, got "
              + bytes);
    }
    try {
      Validation.name("name", leaseName);
    } catch (InvalidArgumentException e) {
      throw new InvalidArgumentException(field, e.getMessage());
    }
  }

  /** The attribute rules, with errors naming the registry fields (address, metadata, status). */
  private static void attributes(Attributes a) {
    try {
      Validation.attributes("attributes", a);
    } catch (InvalidArgumentException e) {
      String prefix = "attributes.";
      if (!e.field().startsWith(prefix) || !e.getMessage().startsWith(e.field() + ": ")) {
        throw e;
      }
      throw new InvalidArgumentException(
          e.field().substring(prefix.length()), e.getMessage().substring(e.field().length() + 2));
    }
  }
}
