package io.leasehold.client.internal;

import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.SetStatusRequest;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.UpdateRequest;
import java.util.List;
import java.util.function.Function;

/**
 * The namespace a write acts in, when it acts in one: the SDK sends it to the leader of the Raft
 * group that namespace is placed on (docs/design/multi-raft.md, "Clients"). Writes of sessions, and
 * of leases attached to one, act in the meta group, as do writes naming several namespaces (the
 * node splits those per group); for them there is none, and they go to the meta group's leader.
 */
final class Routing {
  /** The registry's namespace: instances are leases named {@code service/<service>/<instance>}. */
  static final String REGISTRY = "service";

  private Routing() {}

  /** The namespace {@code request} writes in, or null if it writes in none or in several. */
  static String namespace(Object request) {
    if (request instanceof AcquireRequest r) {
      return r.getSession() == 0 ? of(r.getName()) : null;
    } else if (request instanceof ReleaseRequest r) {
      return of(r.getName());
    } else if (request instanceof RenewRequest r) {
      return common(r.getItemsList(), RenewItem::getName);
    } else if (request instanceof AcquireManyRequest r) {
      return r.getSession() == 0 ? common(r.getItemsList(), AcquireManyItem::getName) : null;
    } else if (request instanceof UpdateRequest r) {
      return of(r.getName());
    } else if (request instanceof TransferRequest r) {
      return r.getSession() == 0 ? of(r.getName()) : null;
    } else if (request instanceof AcceptTransferRequest r) {
      return of(r.getName());
    } else if (request instanceof RevokeRequest r) {
      return of(r.getName());
    } else if (request instanceof RegisterRequest r) {
      return r.getSession() == 0 ? REGISTRY : null;
    } else if (request instanceof DeregisterRequest || request instanceof SetStatusRequest) {
      return REGISTRY;
    }
    return null;
  }

  /** The part of {@code name} before its first '/', or null when it has none. */
  static String of(String name) {
    int slash = name.indexOf('/');
    return slash > 0 ? name.substring(0, slash) : null;
  }

  private static <T> String common(List<T> items, Function<T, String> name) {
    String ns = null;
    for (T item : items) {
      String n = of(name.apply(item));
      if (n == null || (ns != null && !ns.equals(n))) {
        return null;
      }
      ns = n;
    }
    return ns;
  }
}
