package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder starts from the library's defaults and maps resilience4j's names. */
class ConfigTest {
  @Test
  void defaults_are_the_librarys() {
    BreakerConfig d = BreakerConfig.defaults();
    assertEquals(5, d.failureThreshold());
    assertEquals(Duration.ofSeconds(30), d.waitDurationInOpenState());
    assertEquals(1, d.permittedNumberOfCallsInHalfOpenState());
    assertEquals(1, d.halfOpenSuccessThreshold());
    assertEquals(BreakerConfig.Policy.CONSECUTIVE_FAILURES, d.policy());
    assertEquals(100, d.windowSize());
    assertEquals(Duration.ofSeconds(60), d.windowDuration());
    assertEquals(10, d.windowBuckets());
    assertEquals(100, d.minimumNumberOfCalls());
    assertEquals(50f, d.failureRateThreshold());
    assertEquals(Duration.ZERO, d.slowCallDurationThreshold());
    assertEquals(100f, d.slowCallRateThreshold());
    assertEquals(1.0, d.openBackoffMultiplier());
    assertEquals(Duration.ZERO, d.maxWaitDurationInOpenState());
    assertEquals(0.0, d.openJitter());
  }

  @Test
  void resilience4j_names_mean_what_they_mean_there() {
    BreakerConfig c =
        BreakerConfig.builder()
            .slidingWindowType(BreakerConfig.SlidingWindowType.TIME_BASED)
            .slidingWindowSize(20) // seconds, as in resilience4j
            .failureRateThreshold(25) // percent
            .minimumNumberOfCalls(7)
            .permittedNumberOfCallsInHalfOpenState(3)
            .waitDurationInOpenState(Duration.ofSeconds(9))
            .slowCallDurationThreshold(Duration.ofMillis(700))
            .slowCallRateThreshold(80)
            .build();
    assertEquals(BreakerConfig.Policy.TIME_WINDOW, c.policy());
    assertEquals(Duration.ofSeconds(20), c.windowDuration());
    assertEquals(0.25, c.failureRateThresholdRatio());
    assertEquals(7, c.minimumNumberOfCalls());
    assertEquals(3, c.permittedNumberOfCallsInHalfOpenState());
    assertEquals(Duration.ofSeconds(9), c.waitDurationInOpenState());
    assertEquals(Duration.ofMillis(700), c.slowCallDurationThreshold());
    assertEquals(0.8, c.slowCallRateThresholdRatio(), 1e-7);
    BreakerConfig count =
        BreakerConfig.builder()
            .slidingWindowSize(50)
            .slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED)
            .build();
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW, count.policy());
    assertEquals(50, count.windowSize());
  }

  @Test
  void a_count_window_breaker_trips_on_the_failure_rate_after_the_minimum_calls() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b =
          reg.create(
              "rate",
              BreakerConfig.builder()
                  .slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED)
                  .slidingWindowSize(10)
                  .minimumNumberOfCalls(4)
                  .failureRateThreshold(50)
                  .build());
      b.tryAcquire().success();
      b.tryAcquire().failure();
      b.tryAcquire().success();
      assertEquals(CircuitBreaker.State.CLOSED, b.state());
      b.tryAcquire().failure(); // 2 of 4: 50 %
      assertEquals(CircuitBreaker.State.OPEN, b.state());
    }
  }

  @Test
  void resilience4js_rate_options_without_a_window_type_give_a_count_window() {
    // The trap: before, this stayed CLOSED under the consecutive policy.
    BreakerConfig c =
        BreakerConfig.builder()
            .failureRateThreshold(50)
            .slidingWindowSize(10)
            .minimumNumberOfCalls(4)
            .build();
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW, c.policy());
    assertEquals(10, c.windowSize());
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("inferred", c);
      boolean[] fails = {true, false, true, false, true, false, true, false, true, false};
      for (boolean fail : fails) {
        Permit p = b.tryAcquire();
        if (p == null) break;
        if (fail) p.failure(); else p.success();
      }
      assertEquals(CircuitBreaker.State.OPEN, b.state());
      assertEquals(1, b.stats().trips);
    }
    // Each of the three alone infers it too.
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW,
        BreakerConfig.builder().failureRateThreshold(30).build().policy());
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW,
        BreakerConfig.builder().slidingWindowSize(20).build().policy());
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW,
        BreakerConfig.builder().minimumNumberOfCalls(5).build().policy());
    // A time window's own options give a time window; slidingWindowSize is then seconds.
    BreakerConfig t = BreakerConfig.builder().windowBuckets(5).slidingWindowSize(20).build();
    assertEquals(BreakerConfig.Policy.TIME_WINDOW, t.policy());
    assertEquals(Duration.ofSeconds(20), t.windowDuration());
    assertEquals(BreakerConfig.Policy.TIME_WINDOW,
        BreakerConfig.builder().windowDuration(Duration.ofSeconds(5)).build().policy());
    // windowSize alone chooses a count window, slow calls or not.
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW, BreakerConfig.builder().windowSize(4)
        .slowCallDurationThreshold(Duration.ofSeconds(1)).build().policy());
    // failureThreshold, the first field set, chooses the consecutive policy, which reads its
    // slow-call window when slow calls are tracked.
    BreakerConfig s = BreakerConfig.builder().failureThreshold(3).windowSize(4)
        .minimumNumberOfCalls(4).slowCallDurationThreshold(Duration.ofSeconds(1)).build();
    assertEquals(BreakerConfig.Policy.CONSECUTIVE_FAILURES, s.policy());
    assertEquals(4, s.windowSize());
    // The failure rate is a window's.
    assertEquals(BreakerConfig.Policy.COUNT_WINDOW, BreakerConfig.builder().windowSize(4)
        .failureRateThreshold(50).slowCallDurationThreshold(Duration.ofSeconds(1)).build()
        .policy());
    // Options every policy reads give the first policy.
    assertEquals(BreakerConfig.Policy.CONSECUTIVE_FAILURES,
        BreakerConfig.builder().waitDurationInOpenState(Duration.ofSeconds(5)).build().policy());
  }

  @Test
  void config_reads_back_what_the_breaker_holds() {
    java.util.function.Supplier<BreakerConfig.Builder> settings = () ->
        BreakerConfig.builder()
            .slidingWindowType(BreakerConfig.SlidingWindowType.TIME_BASED)
            .slidingWindowSize(20)
            .windowBuckets(4)
            .failureRateThreshold(25)
            .minimumNumberOfCalls(7)
            .waitDurationInOpenState(Duration.ofSeconds(9))
            .openBackoffMultiplier(2)
            .maxWaitDurationInOpenState(Duration.ofMinutes(2))
            .openJitter(0.25);
    BreakerConfig c = settings.get().build();
    try (Registry reg = Registry.withManualClock()) {
      BreakerConfig back = reg.create("read-back", c).config();
      assertEquals(settings.get().maxWaitDurationInHalfOpenState(Duration.ofSeconds(9)).build(),
          back);
      assertEquals(BreakerConfig.Policy.TIME_WINDOW, back.policy());
      assertEquals(Duration.ofSeconds(20), back.windowDuration());
      assertEquals(4, back.windowBuckets());
      assertEquals(25f, back.failureRateThreshold());
      assertEquals(Duration.ofMinutes(2), back.maxWaitDurationInOpenState());
      // half_open_timeout_ns 0 reads as the open duration
      assertEquals(Duration.ofSeconds(9), back.maxWaitDurationInHalfOpenState());
      assertEquals(BreakerConfig.defaults().waitDurationInOpenState(),
          reg.create("defaults").config().waitDurationInOpenState());
    }
  }

  @Test
  void get_or_create_with_another_configuration_names_the_option_that_differs() {
    try (Registry reg = Registry.withManualClock()) {
      reg.getOrCreate("pay", BreakerConfig.builder().failureThreshold(5).build());
      BreakerExistsException e = org.junit.jupiter.api.Assertions.assertThrows(
          BreakerExistsException.class,
          () -> reg.getOrCreate("pay", BreakerConfig.builder().failureThreshold(3).build()));
      assertEquals("getOrCreate: breaker 'pay' exists with another configuration: its"
          + " failureThreshold is 5, this config's 3", e.getMessage());
      e = org.junit.jupiter.api.Assertions.assertThrows(BreakerExistsException.class,
          () -> reg.getOrCreate("pay", BreakerConfig.builder().failureThreshold(5)
              .waitDurationInOpenState(Duration.ofSeconds(10)).build()));
      assertEquals("getOrCreate: breaker 'pay' exists with another configuration: its"
          + " waitDurationInOpenState is PT30S, this config's PT10S", e.getMessage());
      reg.getOrCreate("rate", BreakerConfig.builder().failureRateThreshold(50).build());
      e = org.junit.jupiter.api.Assertions.assertThrows(BreakerExistsException.class,
          () -> reg.getOrCreate("rate", BreakerConfig.builder().failureRateThreshold(40).build()));
      assertEquals("getOrCreate: breaker 'rate' exists with another configuration: its"
          + " failureRateThreshold is 50.0, this config's 40.0", e.getMessage());
      assertEquals(2, reg.breakers().size());
    }
  }
}
