package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad input gets the documented exception and changes nothing else; nothing crashes the JVM. */
class BadInputTest {
  private static void assertMessage(
      Class<? extends Throwable> type, String fragment, Executable call) {
    Throwable t = assertThrows(type, call);
    assertTrue(
        t.getMessage() != null && t.getMessage().contains(fragment),
        "expected '" + fragment + "' in: " + t.getMessage());
  }

  @Test
  void an_out_of_range_config_value_throws_illegal_argument_with_the_librarys_message() {
    assertMessage(IllegalArgumentException.class, "failure_threshold must be 1..65535, got 0",
        () -> BreakerConfig.builder().failureThreshold(0).build());
    assertMessage(IllegalArgumentException.class, "half_open_max_calls",
        () -> BreakerConfig.builder().permittedNumberOfCallsInHalfOpenState(33).build());
    assertMessage(IllegalArgumentException.class, "open_duration_ns",
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ofNanos(1)).build());
    assertMessage(IllegalArgumentException.class, "failure_rate_threshold",
        () -> BreakerConfig.builder().failureRateThreshold(150).build());
    assertMessage(IllegalArgumentException.class, "open_jitter",
        () -> BreakerConfig.builder().openJitter(1.0).build());
    assertMessage(IllegalArgumentException.class, "window_size",
        () -> BreakerConfig.builder().slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED)
            .slidingWindowSize(2_000_000).build());
  }

  @Test
  void what_java_cannot_carry_to_the_library_is_refused_in_java() {
    assertMessage(IllegalArgumentException.class, "failureThreshold must not be negative",
        () -> BreakerConfig.builder().failureThreshold(-1));
    assertMessage(IllegalArgumentException.class, "must not be negative",
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ofSeconds(-1)));
    assertMessage(IllegalArgumentException.class, "too long",
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ofDays(365L * 1000)));
  }

  @Test
  void null_names_configs_and_calls_throw_null_pointer_exceptions() {
    try (Registry reg = Registry.withManualClock()) {
      assertThrows(NullPointerException.class, () -> reg.create(null));
      assertThrows(NullPointerException.class, () -> reg.create("x", null));
      assertThrows(NullPointerException.class, () -> reg.lookup(null));
      assertThrows(NullPointerException.class, () -> Registry.open(null));
      assertThrows(NullPointerException.class, () -> reg.advance(null));
      CircuitBreaker b = reg.create("x");
      assertThrows(NullPointerException.class, () -> b.executeSupplier(null));
      assertThrows(NullPointerException.class, () -> b.trip(null));
      assertTrue(reg.breakers().size() == 1, "nothing else changed");
    }
  }

  @Test
  void bad_names_are_refused_with_the_librarys_message() {
    try (Registry reg = Registry.withManualClock()) {
      assertThrows(IllegalArgumentException.class, () -> reg.create(""));
      assertThrows(IllegalArgumentException.class, () -> reg.create("x".repeat(256)));
      reg.create("y".repeat(255));
      assertMessage(IllegalArgumentException.class, "NUL", () -> reg.create("a\0b"));
      assertMessage(IllegalArgumentException.class, "surrogate", () -> reg.create("\ud800"));
      reg.create("taken");
      assertThrows(BreakerExistsException.class, () -> reg.create("taken"));
      assertEquals(2, reg.breakers().size());
    }
  }

  @Test
  void a_closed_breaker_throws_illegal_state_on_every_call() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("closed");
      b.close();
      assertThrows(IllegalStateException.class, b::tryAcquire);
      assertThrows(IllegalStateException.class, () -> b.executeSupplier(() -> 1));
      assertThrows(IllegalStateException.class, b::state);
      assertThrows(IllegalStateException.class, b::retryAfter);
      assertThrows(IllegalStateException.class, b::stats);
      assertThrows(IllegalStateException.class, b::forceOpen);
      assertThrows(IllegalStateException.class, b::disable);
      assertThrows(IllegalStateException.class, b::reset);
      assertThrows(IllegalStateException.class, () -> b.trip(Duration.ofSeconds(1)));
      assertTrue(reg.lookup("closed").isEmpty());
      reg.create("closed"); // the name is free
    }
  }

  @Test
  void a_permit_reported_after_its_breaker_closed_throws_illegal_state() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("gone");
      Permit p = b.tryAcquire();
      b.close();
      assertThrows(IllegalStateException.class, p::success);
    }
  }

  @Test
  void a_closed_registry_throws_illegal_state_and_so_do_its_breakers() {
    Registry reg = Registry.withManualClock();
    CircuitBreaker b = reg.create("in-closed-registry");
    reg.close();
    assertThrows(IllegalStateException.class, () -> reg.create("another"));
    assertThrows(IllegalStateException.class, () -> reg.lookup("in-closed-registry"));
    assertThrows(IllegalStateException.class, reg::breakers);
    assertThrows(IllegalStateException.class, () -> reg.pollEvents(1));
    assertThrows(IllegalStateException.class, reg::prometheus);
    assertThrows(IllegalStateException.class, () -> reg.advance(Duration.ofSeconds(1)));
    assertThrows(IllegalStateException.class, b::tryAcquire);
    b.close(); // a stale handle: nothing to release, no error
  }

  @Test
  void advance_on_a_monotonic_registry_and_other_bad_registry_calls() {
    assertThrows(IllegalStateException.class,
        () -> Registry.defaultRegistry().advance(Duration.ofSeconds(1)));
    Registry.defaultRegistry().close(); // the default registry is never closed
    assertTrue(!Registry.defaultRegistry().isClosed());
    try (Registry reg = Registry.withManualClock()) {
      assertThrows(IllegalArgumentException.class, () -> reg.pollEvents(0));
      assertThrows(IllegalArgumentException.class, () -> reg.advance(Duration.ofNanos(-1)));
    }
    assertMessage(IllegalArgumentException.class, "capacity",
        () -> Registry.open(RegistryOptions.builder().capacity(5_000_000).build()));
  }

  @Test
  void a_full_registry_throws_registry_full() {
    try (Registry reg = Registry.open(RegistryOptions.builder().capacity(1).build())) {
      reg.create("one");
      RegistryFullException e = assertThrows(RegistryFullException.class, () -> reg.create("two"));
      assertEquals(LbNativeConstants.CB_EFULL, e.status());
    }
  }

  @Test
  void a_trip_outside_the_librarys_range_throws_illegal_argument() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("t");
      assertMessage(IllegalArgumentException.class, "cb_trip", () -> b.trip(Duration.ZERO));
      assertEquals(CircuitBreaker.State.CLOSED, b.state());
    }
  }
}
