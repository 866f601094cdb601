package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Lazy recovery through the Java API, on a manual clock: nothing moves until a call arrives. */
class LazyRecoveryTest {
  private final Registry reg = Registry.withManualClock();
  private final CircuitBreaker b =
      reg.create(
          "lazy",
          BreakerConfig.builder()
              .failureThreshold(3)
              .waitDurationInOpenState(Duration.ofSeconds(10))
              .build());

  @AfterEach
  void close() {
    reg.close();
  }

  private void fail(int n) {
    for (int i = 0; i < n; i++) tryAcquire().failure();
  }

  private Permit tryAcquire() {
    Permit p = b.tryAcquire();
    assertNotNull(p, "expected the call to be admitted in " + b.state());
    return p;
  }

  @Test
  void three_failures_in_a_row_trip_and_a_success_resets_the_run() {
    fail(2);
    tryAcquire().success();
    fail(2);
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
    fail(1);
    assertEquals(CircuitBreaker.State.OPEN, b.state());
  }

  @Test
  void open_rejects_until_the_exact_open_duration_then_the_next_call_probes() {
    fail(3);
    assertNull(b.tryAcquire());
    assertEquals(Duration.ofSeconds(10), b.retryAfter());
    reg.advance(Duration.ofSeconds(10).minusNanos(1));
    assertNull(b.tryAcquire());
    assertEquals(Duration.ofNanos(1), b.retryAfter());
    reg.advance(Duration.ofNanos(1));
    // Asking never moves the state: still OPEN, but a call would be admitted now.
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals(Duration.ZERO, b.retryAfter());
    Permit probe = tryAcquire();
    assertEquals(CircuitBreaker.State.HALF_OPEN, b.state());
    assertNull(b.tryAcquire(), "one probe at a time: the herd is rejected");
    probe.success();
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
  }

  @Test
  void a_failed_probe_opens_again_for_a_fresh_duration() {
    fail(3);
    reg.advance(Duration.ofSeconds(15));
    tryAcquire().failure();
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals(Duration.ofSeconds(10), b.retryAfter());
    assertEquals(2, b.stats().trips);
  }

  @Test
  void manual_states_force_open_disable_reset_and_trip() {
    b.forceOpen();
    assertEquals(CircuitBreaker.State.FORCED_OPEN, b.state());
    assertNull(b.tryAcquire());
    assertEquals(Durations.FOREVER, b.retryAfter());
    b.disable();
    assertEquals(CircuitBreaker.State.DISABLED, b.state());
    fail(10);
    assertEquals(CircuitBreaker.State.DISABLED, b.state());
    b.reset();
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
    b.trip(Duration.ofSeconds(20));
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals(Duration.ofSeconds(20), b.retryAfter());
  }

  @Test
  void stats_count_every_call_and_outcome() {
    tryAcquire().success();
    tryAcquire().ignore();
    fail(3);
    assertNull(b.tryAcquire());
    CircuitBreaker.Stats s = b.stats();
    assertEquals(5, s.admitted);
    assertEquals(1, s.rejected);
    assertEquals(1, s.successes);
    assertEquals(3, s.failures);
    assertEquals(1, s.ignored);
    assertEquals(1, s.trips);
    reg.advance(Duration.ofSeconds(4));
    assertEquals(Duration.ofSeconds(4), b.stats().timeInState);
  }

  @Test
  void the_clock_of_a_manual_registry_starts_at_zero_and_moves_only_by_advance() {
    assertEquals(Duration.ZERO, reg.now());
    reg.advance(Duration.ofMillis(1500));
    assertEquals(Duration.ofMillis(1500), reg.now());
  }
}
