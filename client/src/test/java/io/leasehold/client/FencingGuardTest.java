package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

class FencingGuardTest {
  @Test
  void acceptsEqualAndHigherTokensAndRejectsLowerOnes() {
    FencingGuard guard = new FencingGuard();
    assertEquals(OptionalLong.empty(), guard.highest("r"));
    assertTrue(guard.tryAdvance("r", 5));
    assertTrue(guard.tryAdvance("r", 5), "the same lease writes again");
    assertTrue(guard.tryAdvance("r", 9));
    assertFalse(guard.tryAdvance("r", 7));
    StaleTokenException e = assertThrows(StaleTokenException.class, () -> guard.check("r", 8));
    assertEquals(9, e.highest());
    assertEquals(8, e.token());
    assertEquals(OptionalLong.of(9), guard.highest("r"));
    assertTrue(guard.tryAdvance("other", 1), "resources are independent");
    assertThrows(IllegalArgumentException.class, () -> guard.tryAdvance("r", 0));
  }

  @Test
  void guardedWritesLandInTokenOrderUnderContention() throws Exception {
    FencingGuard guard = new FencingGuard();
    List<Long> written = new ArrayList<>(); // only touched under the guard's lock
    int threads = 8;
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  go.await();
                  for (int i = 0; i < 2000; i++) {
                    long token = 1 + ThreadLocalRandom.current().nextInt(1000);
                    try {
                      guard.guard("r", token, () -> written.add(token));
                    } catch (StaleTokenException expected) {
                      // lower than one already written
                    }
                  }
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              });
      thread.start();
      all.add(thread);
    }
    go.countDown();
    for (Thread t : all) {
      t.join();
    }
    assertFalse(written.isEmpty());
    for (int i = 1; i < written.size(); i++) {
      assertTrue(
          written.get(i) >= written.get(i - 1),
          "write " + i + " has a lower token than the one before it");
    }
    assertEquals(OptionalLong.of(written.get(written.size() - 1)), guard.highest("r"));
  }
}
