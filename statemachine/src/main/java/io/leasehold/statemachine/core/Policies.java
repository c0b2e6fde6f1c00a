package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.StoredPolicy;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.ReadView;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The compiled policies, by namespace, and the default policy, kept in step with the store after
 * each commit. A namespace's policy replaces the default there as a whole. Maps are replaced, not
 * changed, so other threads may read them without a lock; policies change rarely.
 */
final class Policies {
  static final byte[] DEFAULT_KEY = "default-policy".getBytes(StandardCharsets.US_ASCII);

  private volatile PolicyTerms defaults = PolicyTerms.BUILT_IN;
  private volatile Map<String, PolicyTerms> byNamespace = Map.of();

  /** The policy in force for a lease name ({@code namespace/rest}). */
  PolicyTerms forName(String name) {
    Map<String, PolicyTerms> m = byNamespace;
    if (m.isEmpty()) {
      return defaults;
    }
    PolicyTerms p = m.get(name.substring(0, name.indexOf('/')));
    return p != null ? p : defaults;
  }

  PolicyTerms defaults() {
    return defaults;
  }

  void set(String namespace, PolicyTerms terms) {
    if (namespace.isEmpty()) {
      defaults = terms;
    } else {
      Map<String, PolicyTerms> m = new HashMap<>(byNamespace);
      m.put(namespace, terms);
      byNamespace = Map.copyOf(m);
    }
  }

  void delete(String namespace) {
    if (namespace.isEmpty()) {
      defaults = PolicyTerms.BUILT_IN;
    } else {
      Map<String, PolicyTerms> m = new HashMap<>(byNamespace);
      m.remove(namespace);
      byNamespace = Map.copyOf(m);
    }
  }

  /** Compiles every stored policy again (after a snapshot replaced the store). */
  void load(KvStore store) {
    defaults =
        store
            .get(Space.META, DEFAULT_KEY)
            .map(b -> PolicyTerms.resolve(parse(b).getPolicy()))
            .orElse(PolicyTerms.BUILT_IN);
    Map<String, PolicyTerms> m = new HashMap<>();
    store.read(
        view -> {
          view.scan(
              Space.POLICIES,
              new byte[0],
              new byte[0],
              (key, value) -> {
                m.put(
                    new String(key, StandardCharsets.UTF_8),
                    PolicyTerms.resolve(parse(value).getPolicy()));
                return true;
              });
          return null;
        });
    byNamespace = Map.copyOf(m);
  }

  /** The stored form of a namespace's policy ("" for the default), from a consistent view. */
  static Optional<StoredPolicy> stored(ReadView view, String namespace) {
    return namespace.isEmpty()
        ? view.get(Space.META, DEFAULT_KEY).map(Policies::parse)
        : view.get(Space.POLICIES, namespace.getBytes(StandardCharsets.UTF_8)).map(Policies::parse);
  }

  static StoredPolicy parse(byte[] bytes) {
    try {
      return StoredPolicy.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt stored policy", e);
    }
  }
}
