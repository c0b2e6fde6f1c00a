package io.leasehold.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.AcquireAllResult;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseLostException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How the outcomes of an acquireAll's names reach its caller. The case below was seen in a fault
 * run: an all-or-nothing AcquireMany granted every name in one entry, its answer came as the TTL
 * ran out on the client's clock, and the names, settled one after another, fell on both sides of
 * it: one was handed over, another was lost.
 */
class DeliveriesTest {
  private final Set<String> released = ConcurrentHashMap.newKeySet();

  private Lease lease(String name) {
    return (Lease)
        Proxy.newProxyInstance(
            Lease.class.getClassLoader(),
            new Class<?>[] {Lease.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "name" -> name;
                  case "release" -> {
                    released.add(name);
                    yield CompletableFuture.completedFuture(null);
                  }
                  case "toString" -> "lease " + name;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }

  private List<CompletableFuture<AcquireResult>> grantedAndLost() {
    return List.of(
        CompletableFuture.completedFuture(new Granted(lease("lock/a"))),
        CompletableFuture.failedFuture(
            new LeaseLostException(
                "lock/b: granted (token 9), but the answer came after its TTL")));
  }

  @Test
  void allOrNothingHandsOverNoneWhenAGrantedNameWasLostBeforeItsTurn() {
    CompletableFuture<AcquireAllResult> out =
        Deliveries.deliverAll(Runnable::run, List.of("lock/a", "lock/b"), grantedAndLost(), true);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> out.get(10, TimeUnit.SECONDS));
    assertInstanceOf(LeaseLostException.class, e.getCause());
    assertTrue(e.getCause().getMessage().startsWith("lock/b"), e.getCause().getMessage());
    assertEquals(Set.of("lock/a"), released, "the name handed over would have been given back");
  }

  @Test
  void withoutAllOrNothingEachNameStandsOnItsOwn() throws Exception {
    AcquireAllResult r =
        Deliveries.deliverAll(Runnable::run, List.of("lock/a", "lock/b"), grantedAndLost(), false)
            .get(10, TimeUnit.SECONDS);
    assertEquals(Set.of("lock/a"), r.granted().keySet());
    assertEquals(Set.of("lock/b"), r.failed().keySet());
    assertEquals(Set.of(), released);
  }
}
