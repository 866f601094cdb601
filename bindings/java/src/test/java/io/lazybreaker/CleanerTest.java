package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Breakers and registries dropped unclosed are released by the Cleaner. The
 * test waits on the Cleaner's own action (a latch it counts down), asking the
 * GC again between waits: no sleep, and no assumption about when the GC runs.
 */
class CleanerTest {
  interface Released {
    boolean await(long millis) throws InterruptedException;
  }

  static void collectUntil(Released released) throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      System.gc();
      if (released.await(50)) return;
    }
    throw new AssertionError("the Cleaner did not run after 200 collections");
  }

  private static CircuitBreaker.Destroyer createAndDrop(Registry reg, String name) {
    CircuitBreaker b = reg.create(name);
    assertTrue(reg.lookup(name).isPresent());
    return b.destroyer(); // holds the handle, not the breaker
  }

  @Test
  void the_cleaner_destroys_a_breaker_dropped_unclosed_and_its_name_is_free_again()
      throws Exception {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker.Destroyer d = createAndDrop(reg, "dropped");
      collectUntil(d::awaitDestroyed);
      assertFalse(reg.lookup("dropped").isPresent());
      assertTrue(reg.breakers().isEmpty());
      assertNotNull(reg.create("dropped"), "the name is free again");
    }
  }

  @Test
  void a_breaker_that_is_still_referenced_is_not_released() throws Exception {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker kept = reg.create("kept");
      CircuitBreaker.Destroyer dropped = createAndDrop(reg, "other");
      collectUntil(dropped::awaitDestroyed);
      assertSame(kept, reg.lookup("kept").orElseThrow());
      assertEquals(CircuitBreaker.State.CLOSED, kept.state());
    }
  }

  @Test
  void a_permit_keeps_its_breaker_alive() throws Exception {
    try (Registry reg = Registry.withManualClock()) {
      Permit p = reg.create("busy").tryAcquire();
      CircuitBreaker.Destroyer other = createAndDrop(reg, "idle");
      collectUntil(other::awaitDestroyed);
      p.success(); // the breaker is still there to report to
      assertEquals(1, reg.lookup("busy").orElseThrow().stats().successes);
    }
  }

  private static Registry.Closer openAndDrop() {
    Registry reg = Registry.withManualClock();
    reg.create("in-a-dropped-registry");
    return reg.closer();
  }

  @Test
  void the_cleaner_closes_a_registry_dropped_unclosed() throws Exception {
    Registry.Closer closer = openAndDrop();
    collectUntil(closer::awaitClosed);
  }

  @Test
  void close_twice_is_harmless_and_the_cleaner_does_nothing_after_close() throws Exception {
    Registry reg = Registry.withManualClock();
    CircuitBreaker b = reg.create("twice");
    b.close();
    b.close();
    assertTrue(b.isClosed());
    reg.close();
    reg.close();
    assertTrue(reg.isClosed());
  }
}
