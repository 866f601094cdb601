package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The registry's table of owned breakers (open addressing, deletion by backward shift): through
 * growth and deletions in the middle of probe runs, lookup still gives the owning object of every
 * live breaker and nothing for a closed one.
 */
class OwnedTableTest {
  static final int N = 5000;

  @Test
  void lookups_find_every_owner_through_growth_and_deletions() {
    try (Registry reg = Registry.withManualClock()) {
      BreakerConfig config = BreakerConfig.defaults();
      CircuitBreaker[] bs = new CircuitBreaker[N];
      for (int i = 0; i < N; i++) bs[i] = reg.create("b" + i, config);
      for (int i = 0; i < N; i += 3) bs[i].close();
      for (int i = 0; i < N; i++) {
        if (i % 3 == 0) {
          assertFalse(reg.lookup("b" + i).isPresent(), "closed b" + i);
        } else {
          assertSame(bs[i], reg.lookup("b" + i).orElseThrow(), "b" + i);
        }
      }
      // A name reused after close is a new breaker with a new owner.
      CircuitBreaker again = reg.create("b0", config);
      assertNotSame(bs[0], again);
      assertSame(again, reg.lookup("b0").orElseThrow());
      assertTrue(bs[0].isClosed());
    }
  }
}
