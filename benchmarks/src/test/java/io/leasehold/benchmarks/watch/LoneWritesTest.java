package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LoneWritesTest {
  @Test
  void badArgumentsNameTheOptionAndTheRule() {
    assertEquals(
        "--writes must be positive, got 0",
        assertThrows(
                IllegalArgumentException.class, () -> LoneWrites.run(new String[] {"--writes=0"}))
            .getMessage());
    assertEquals(
        "--busy-threads must be 0 or more, got -1",
        assertThrows(
                IllegalArgumentException.class,
                () -> LoneWrites.run(new String[] {"--busy-threads=-1"}))
            .getMessage());
    assertEquals(
        "--writes must be a number, got 'many'",
        assertThrows(
                IllegalArgumentException.class,
                () -> LoneWrites.run(new String[] {"--writes=many"}))
            .getMessage());
    assertTrue(
        assertThrows(
                IllegalArgumentException.class, () -> LoneWrites.run(new String[] {"--rate=5"}))
            .getMessage()
            .startsWith("unknown argument '--rate=5'"));
  }

  @Test
  void aShortRunTimesEveryWrite() throws Exception {
    LoneWrites.Result r = LoneWrites.run(new String[] {"--writes=3"});
    assertEquals(3, r.lagsMicros().getTotalCount());
    assertTrue(r.line().startsWith("3 lone writes, 0 busy threads: "), r.line());
  }
}
