package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PermitTest {
  private final Registry reg = Registry.withManualClock();
  private final CircuitBreaker b = reg.create("permits");

  @AfterEach
  void close() {
    reg.close();
  }

  @Test
  void a_permit_closed_by_try_with_resources_after_an_exception_reports_a_failure() {
    assertThrows(
        IllegalStateException.class,
        () -> {
          try (Permit p = b.tryAcquire()) {
            throw new IllegalStateException("the call failed");
          }
        });
    CircuitBreaker.Stats s = b.stats();
    assertEquals(1, s.failures);
    assertEquals(1, s.consecutiveFailures);
  }

  @Test
  void a_permit_closed_after_its_verdict_reports_nothing_more() {
    try (Permit p = b.tryAcquire()) {
      p.success();
    }
    CircuitBreaker.Stats s = b.stats();
    assertEquals(1, s.successes);
    assertEquals(0, s.failures);
  }

  @Test
  void a_second_verdict_is_refused_and_counts_nothing() {
    Permit p = b.tryAcquire();
    p.failure();
    assertTrue(p.isReported());
    IllegalStateException e = assertThrows(IllegalStateException.class, p::success);
    assertTrue(e.getMessage().contains("already been reported"), e.getMessage());
    assertEquals(1, b.stats().failures);
    assertEquals(0, b.stats().successes);
  }

  @Test
  void an_ignored_outcome_counts_nowhere_in_the_run() {
    for (int i = 0; i < 4; i++) b.tryAcquire().failure();
    for (int i = 0; i < 10; i++) b.tryAcquire().ignore();
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
    assertEquals(4, b.stats().consecutiveFailures);
    b.tryAcquire().failure(); // the 5th in a row (the library's default)
    assertEquals(CircuitBreaker.State.OPEN, b.state());
  }
}
