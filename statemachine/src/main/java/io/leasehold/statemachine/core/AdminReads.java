package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetPolicyResponse;
import io.leasehold.proto.v1.HistoryRecord;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.HistoryResponse;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListBansResponse;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListPoliciesResponse;
import io.leasehold.proto.v1.NamespacePolicy;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.StoredPolicy;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** The Admin API's reads, each from one consistent store view (so safe on any thread). */
final class AdminReads {
  private final KvStore store;

  AdminReads(KvStore store) {
    this.store = store;
  }

  GetPolicyResponse getPolicy(GetPolicyRequest r) {
    AdminValidation.getPolicy(r);
    String namespace = r.getNamespace();
    return store.read(
        view -> {
          GetPolicyResponse.Builder b =
              GetPolicyResponse.newBuilder().setRevision(view.applied().index());
          Optional<StoredPolicy> own = Policies.stored(view, namespace);
          if (own.isPresent()) {
            return b.setPolicy(namespacePolicy(namespace, own.get()))
                .setEffective(PolicyTerms.effective(own.get().getPolicy()))
                .build();
          }
          // No policy of its own: a namespace falls back on the default policy, the default on the
          // built-in one.
          Policy fallback =
              namespace.isEmpty()
                  ? Policy.getDefaultInstance()
                  : Policies.stored(view, "")
                      .map(StoredPolicy::getPolicy)
                      .orElse(Policy.getDefaultInstance());
          return b.setInherited(true).setEffective(PolicyTerms.effective(fallback)).build();
        });
  }

  ListPoliciesResponse listPolicies(ListPoliciesRequest r) {
    return store.read(
        view -> {
          ListPoliciesResponse.Builder b =
              ListPoliciesResponse.newBuilder().setRevision(view.applied().index());
          Policies.stored(view, "").ifPresent(p -> b.addPolicies(namespacePolicy("", p)));
          view.scan(
              Space.POLICIES,
              new byte[0],
              new byte[0],
              (key, value) -> {
                b.addPolicies(
                    namespacePolicy(
                        new String(key, StandardCharsets.UTF_8), Policies.parse(value)));
                return true;
              });
          return b.build();
        });
  }

  ListBansResponse listBans(ListBansRequest r) {
    AdminValidation.listBans(r);
    int limit = r.getLimit() == 0 ? Limits.MAX_LIST_LIMIT : r.getLimit();
    return store.read(
        view -> {
          ListBansResponse.Builder b =
              ListBansResponse.newBuilder().setRevision(view.applied().index());
          view.scan(
              Space.BANS,
              new byte[0],
              LeaseCore.utf8(r.getStartAfter()),
              (key, value) -> {
                if (b.getBansCount() == limit) {
                  b.setMore(true);
                  return false;
                }
                b.addBans(
                    AdminCommands.view(new String(key, StandardCharsets.UTF_8), Bans.parse(value)));
                return true;
              });
          return b.build();
        });
  }

  HistoryResponse history(HistoryRequest r) {
    AdminValidation.history(r);
    boolean byName = !r.getName().isEmpty();
    Space space = byName ? Space.NAME_HISTORY : Space.HOLDER_HISTORY;
    byte[] prefix = LeaseHistory.prefix(byName ? r.getName() : r.getHolder());
    return store.read(
        view -> {
          List<EndedLease> ended = new ArrayList<>();
          view.scan(
              space,
              prefix,
              new byte[0],
              (key, value) -> {
                ended.add(view(LeaseHistory.parse(value)));
                return true;
              });
          Collections.reverse(ended);
          List<EndedLease> page =
              r.getLimit() == 0 || r.getLimit() >= ended.size()
                  ? ended
                  : ended.subList(0, r.getLimit());
          return HistoryResponse.newBuilder()
              .addAllLeases(page)
              .setRevision(view.applied().index())
              .build();
        });
  }

  private static NamespacePolicy namespacePolicy(String namespace, StoredPolicy p) {
    return NamespacePolicy.newBuilder()
        .setNamespace(namespace)
        .setPolicy(p.getPolicy())
        .setRevision(p.getRevision())
        .setUpdatedAt(Times.timestamp(p.getUpdatedAtMicros()))
        .build();
  }

  static EndedLease view(HistoryRecord h) {
    return EndedLease.newBuilder()
        .setName(h.getName())
        .setHolder(h.getHolder())
        .setToken(h.getToken())
        .setTtl(Times.duration(h.getTtlMicros()))
        .setAcquiredAt(Times.timestamp(h.getAcquiredAtMicros()))
        .setEndedAt(Times.timestamp(h.getEndedAtMicros()))
        .setRenewCount(h.getRenewCount())
        .setReason(h.getReason())
        .setMessage(h.getMessage())
        .setRevision(h.getRevision())
        .setSession(h.getSession())
        .build();
  }
}
