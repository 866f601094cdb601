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
}
