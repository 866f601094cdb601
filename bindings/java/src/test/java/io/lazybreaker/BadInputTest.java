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

  private static void assertRefused(String message, Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertEquals(message, e.getMessage());
  }

  @Test
  void an_out_of_range_count_is_refused_in_the_options_name() {
    assertRefused("failureThreshold must be at least 1, got 0",
        () -> BreakerConfig.builder().failureThreshold(0).build());
    assertRefused("permittedNumberOfCallsInHalfOpenState must be at most "
            + LbNativeConstants.CB_MAX_HALF_OPEN_CALLS + ", got 33",
        () -> BreakerConfig.builder().permittedNumberOfCallsInHalfOpenState(33).build());
    assertRefused("slidingWindowSize must be at most " + LbNativeConstants.CB_MAX_WINDOW_SIZE
            + ", got 2000000",
        () -> BreakerConfig.builder().slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED)
            .slidingWindowSize(2_000_000).build());
    assertRefused("windowSize must be at least 1, got 0",
        () -> BreakerConfig.builder().windowSize(0).build());
    assertRefused("slidingWindowSize (seconds, under TIME_WINDOW) must be at least 1, got 0",
        () -> BreakerConfig.builder().slidingWindowType(BreakerConfig.SlidingWindowType.TIME_BASED)
            .slidingWindowSize(0).build());
    assertRefused("slidingWindowSize (seconds, under TIME_WINDOW) must be at most "
            + LbNativeConstants.CB_MAX_DURATION_NS / 1_000_000_000L + ", got 40000000",
        () -> BreakerConfig.builder().slidingWindowType(BreakerConfig.SlidingWindowType.TIME_BASED)
            .slidingWindowSize(40_000_000).build());
  }

  @Test
  void an_out_of_range_duration_is_refused_as_a_duration() {
    assertRefused("waitDurationInOpenState must be at least 1 \u00b5s, got PT0S",
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ZERO).build());
    assertRefused("waitDurationInOpenState must be at most 366 days, got PT8785H",
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ofDays(366).plusHours(1))
            .build());
    assertRefused("windowDuration must be at least 1 ms, got PT0.000999S",
        () -> BreakerConfig.builder().windowDuration(Duration.ofNanos(999_000)).build());
    // the one rule across fields names both options
    assertRefused("maxWaitDurationInOpenState must be zero (no cap) or at least"
            + " waitDurationInOpenState (PT30S), got PT1S",
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ofSeconds(30))
            .maxWaitDurationInOpenState(Duration.ofSeconds(1)).build());
  }

  @Test
  void an_out_of_range_ratio_is_refused_in_the_unit_it_was_given_in() {
    assertRefused("failureRateThreshold must be above 0 and at most 100 (percent), got 150.0",
        () -> BreakerConfig.builder().failureRateThreshold(150).build());
    assertRefused("failureRateThresholdRatio must be above 0 and at most 1, got 0.0",
        () -> BreakerConfig.builder().failureRateThresholdRatio(0).build());
    assertRefused("slowCallRateThreshold must be above 0 and at most 100 (percent), got 0.0",
        () -> BreakerConfig.builder().slowCallRateThreshold(0).build());
    assertRefused("openJitter must be at least 0 and below 1, got 1.0",
        () -> BreakerConfig.builder().openJitter(1.0).build());
    assertRefused("openBackoffMultiplier must be 1.." + LbNativeConstants.CB_MAX_BACKOFF_MULTIPLIER
            + ", got 0.5",
        () -> BreakerConfig.builder().openBackoffMultiplier(0.5).build());
  }

  @Test
  void an_option_the_chosen_policy_ignores_is_refused_naming_both() {
    assertRefused("failureThreshold does nothing under slidingWindowType(COUNT_BASED)"
            + " (the COUNT_WINDOW policy): set one of them, not both",
        () -> BreakerConfig.builder().slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED)
            .failureThreshold(3).build());
    assertRefused("failureRateThreshold does nothing under policy(CONSECUTIVE_FAILURES):"
            + " set one of them, not both",
        () -> BreakerConfig.builder().policy(BreakerConfig.Policy.CONSECUTIVE_FAILURES)
            .failureRateThreshold(50).build());
    assertRefused("windowSize does nothing under policy(TIME_WINDOW): set one of them, not both",
        () -> BreakerConfig.builder().policy(BreakerConfig.Policy.TIME_WINDOW).windowSize(10)
            .build());
    assertRefused("windowBuckets does nothing under slidingWindowType(COUNT_BASED)"
            + " (the COUNT_WINDOW policy): set one of them, not both",
        () -> BreakerConfig.builder().windowBuckets(4)
            .slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED).build());
    // the consecutive policy's slow calls are judged over windowSize outcomes
    BreakerConfig.builder().policy(BreakerConfig.Policy.CONSECUTIVE_FAILURES).windowSize(10)
        .minimumNumberOfCalls(10).slowCallDurationThreshold(Duration.ofSeconds(1)).build();
    assertRefused("windowSize does nothing under policy(CONSECUTIVE_FAILURES) without"
            + " slowCallDurationThreshold: set slowCallDurationThreshold, or leave windowSize"
            + " unset",
        () -> BreakerConfig.builder().policy(BreakerConfig.Policy.CONSECUTIVE_FAILURES)
            .windowSize(10).build());
  }

  @Test
  void options_that_no_one_policy_reads_together_are_refused_naming_both() {
    // The policy the first field set infers alone, and the first later option it ignores.
    String fix = ": set policy(...) or slidingWindowType(...), or leave one of them unset";
    assertRefused("failureRateThreshold is ignored by CONSECUTIVE_FAILURES, which"
            + " failureThreshold chooses" + fix,
        () -> BreakerConfig.builder().failureRateThreshold(50).failureThreshold(3).build());
    assertRefused("windowDuration is ignored by COUNT_WINDOW, which windowSize chooses" + fix,
        () -> BreakerConfig.builder().windowDuration(Duration.ofSeconds(10)).windowSize(10)
            .build());
    assertRefused("minimumNumberOfCalls is ignored by CONSECUTIVE_FAILURES, which"
            + " failureThreshold chooses (only its slow-call window reads it: set"
            + " slowCallDurationThreshold)" + fix,
        () -> BreakerConfig.builder().failureThreshold(3).minimumNumberOfCalls(10).build());
    // A field every policy reads chooses nothing.
    assertRefused("windowDuration is ignored by COUNT_WINDOW, which windowSize chooses" + fix,
        () -> BreakerConfig.builder().waitDurationInOpenState(Duration.ofSeconds(5))
            .windowSize(10).windowDuration(Duration.ofSeconds(10)).build());
  }

  @Test
  void a_message_is_built_from_the_status_and_field_and_keeps_the_librarys_as_cause() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BreakerConfig.builder().failureThreshold(0).build());
    assertTrue(e.getCause() instanceof RefusedArgument, String.valueOf(e.getCause()));
    assertEquals("failure_threshold", ((RefusedArgument) e.getCause()).field());
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
  void bad_names_are_refused_in_javas_words() {
    try (Registry reg = Registry.withManualClock()) {
      assertRefused("name must not be empty", () -> reg.create(""));
      assertRefused("name must be at most " + LbNativeConstants.CB_MAX_NAME_BYTES
          + " bytes of UTF-8, got 256", () -> reg.create("x".repeat(256)));
      assertRefused("name must be at most " + LbNativeConstants.CB_MAX_NAME_BYTES
          + " bytes of UTF-8, got 256", () -> reg.getOrCreate("\u00e9".repeat(128)));
      reg.create("y".repeat(255));
      assertMessage(IllegalArgumentException.class, "NUL", () -> reg.create("a\0b"));
      assertMessage(IllegalArgumentException.class, "surrogate", () -> reg.create("\ud800"));
      reg.create("taken");
      BreakerExistsException taken =
          assertThrows(BreakerExistsException.class, () -> reg.create("taken"));
      assertEquals("create: the registry holds a breaker named 'taken' (lookup finds it;"
          + " getOrCreate shares it)", taken.getMessage());
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
  }

  @Test
  void a_registry_option_the_library_refuses_is_named_as_the_builder_names_it(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    assertRefused("capacity must be at most " + LbNativeConstants.CB_MAX_CAPACITY
            + " (0: the default), got 5000000",
        () -> Registry.open(RegistryOptions.builder().capacity(5_000_000).build()));
    assertRefused("eventCapacity must be at most " + LbNativeConstants.CB_MAX_EVENT_CAPACITY
            + " (0: the default), got 2000000000",
        () -> Registry.open(RegistryOptions.builder().eventCapacity(2_000_000_000).build()));
    java.nio.file.Path file = dir.resolve("r.lbr");
    assertRefused("mode must be permission bits 0..0777, got 01000",
        () -> Registry.open(RegistryOptions.builder().path(file).create(true).mode(01000).build()));
    assertRefused("exclusive(true) needs create(true)",
        () -> Registry.open(RegistryOptions.builder().path(file).exclusive(true).build()));
    assertRefused("anyOwner(true) needs create(true)",
        () -> Registry.open(RegistryOptions.builder().path(file).anyOwner(true).build()));
    assertTrue(!java.nio.file.Files.exists(file), "nothing was created");
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
      assertRefused("trip: openFor must be at least 1 \u00b5s, got PT0S",
          () -> b.trip(Duration.ZERO));
      assertRefused("trip: openFor must be at most 366 days, got PT8808H",
          () -> b.trip(Duration.ofDays(367)));
      assertEquals(CircuitBreaker.State.CLOSED, b.state());
    }
  }
}
