package io.leasehold.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ThreadScratchTest {
  @Test
  void aThreadReusesItsArrayGrowingItByDoublingUpToTheLimit() {
    ThreadScratch scratch = new ThreadScratch(16, 100);
    byte[] first = scratch.get(10);
    assertEquals(16, first.length);
    assertSame(first, scratch.get(16), "reused while it is big enough");
    assertEquals(32, scratch.get(17).length, "doubled");
    assertEquals(90, scratch.get(90).length, "or as asked, if that is more");
    assertEquals(100, scratch.get(91).length, "never beyond the limit");
    byte[] kept = scratch.get(100);
    byte[] over = scratch.get(101);
    assertEquals(101, over.length);
    assertNotSame(kept, over, "over the limit: a fresh array");
    assertSame(kept, scratch.get(50), "which is not kept");
  }

  @Test
  void eachThreadAndEachInstanceHasItsOwnArray() throws Exception {
    ThreadScratch a = new ThreadScratch(16, 64);
    ThreadScratch b = new ThreadScratch(16, 64);
    byte[] mine = a.get(8);
    assertNotSame(mine, b.get(8));
    assertNotSame(mine, CompletableFuture.supplyAsync(() -> a.get(8)).get());
  }

  @Test
  void badBoundsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new ThreadScratch(0, 10));
    assertThrows(IllegalArgumentException.class, () -> new ThreadScratch(20, 10));
  }
}
