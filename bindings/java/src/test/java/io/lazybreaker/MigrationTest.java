package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/java.md, "For users of resilience4j": one test per row of the table, in
 * its order, each named after the row. A row whose test fails is a row that
 * misleads.
 */
class MigrationTest {
  private final Registry reg = Registry.withManualClock();

  @AfterEach
  void close() {
    reg.close();
  }

  private static BreakerConfig trips(int failures) {
    return BreakerConfig.builder().failureThreshold(failures)
        .waitDurationInOpenState(Duration.ofSeconds(10)).build();
  }

  @Test
  void registry_of_defaults_and_of_config() {
    assertTrue(Registry.defaultRegistry().isDefault());
    try (Registry r = Registry.open(RegistryOptions.builder().capacity(4).build())) {
      assertFalse(r.isDefault());
      r.create("a");
      assertEquals(1, r.breakers().size());
    }
  }

  @Test
  void registry_circuit_breaker_by_name_is_get_or_create() {
    CircuitBreaker a = reg.getOrCreate("pay", trips(3));
    CircuitBreaker b = reg.getOrCreate("pay", trips(3));
    a.tryAcquire().failure();
    assertEquals(1, b.stats().failures, "one breaker behind both objects");
    assertThrows(BreakerExistsException.class, () -> reg.getOrCreate("pay", trips(4)));
    assertThrows(BreakerExistsException.class, () -> reg.create("pay"));
    assertTrue(reg.lookup("pay").isPresent());
  }

  @Test
  void config_custom_build_and_of_defaults_with_this_librarys_defaults() {
    BreakerConfig d = BreakerConfig.defaults();
    // not resilience4j's (50 %, 100 calls, 60 s, 10 probes): the library's
    assertEquals(BreakerConfig.Policy.CONSECUTIVE_FAILURES, d.policy());
    assertEquals(5, d.failureThreshold());
    assertEquals(Duration.ofSeconds(30), d.waitDurationInOpenState());
    assertEquals(1, d.permittedNumberOfCallsInHalfOpenState());
    assertEquals(d, BreakerConfig.builder().build());
  }

  @Test
  void failure_rate_and_slow_call_rate_thresholds_in_percent() {
    BreakerConfig c = BreakerConfig.builder().failureRateThreshold(25).slowCallRateThreshold(80)
        .slowCallDurationThreshold(Duration.ofSeconds(1)).build();
    assertEquals(0.25, c.failureRateThresholdRatio());
    assertEquals(0.8, c.slowCallRateThresholdRatio(), 1e-7);
    assertEquals(25f, c.failureRateThreshold());
  }

  @Test
  void slow_call_duration_minimum_calls_half_open_permits_and_open_wait_keep_their_names() {
    BreakerConfig c = BreakerConfig.builder().slowCallDurationThreshold(Duration.ofMillis(700))
        .minimumNumberOfCalls(7).permittedNumberOfCallsInHalfOpenState(3)
        .waitDurationInOpenState(Duration.ofSeconds(9)).build();
    assertEquals(Duration.ofMillis(700), c.slowCallDurationThreshold());
    assertEquals(7, c.minimumNumberOfCalls());
    assertEquals(3, c.permittedNumberOfCallsInHalfOpenState());
    assertEquals(Duration.ofSeconds(9), c.waitDurationInOpenState());
  }

  @Test
  void sliding_window_type_and_size_with_count_based_when_no_type_is_given() {
    // resilience4j's default window is COUNT_BASED: so is the inferred one.
    CircuitBreaker b = reg.create("r4j", BreakerConfig.builder().failureRateThreshold(50)
        .slidingWindowSize(10).minimumNumberOfCalls(4).build());
    for (int i = 0; i < 10 && b.state() == CircuitBreaker.State.CLOSED; i++) {
      Permit p = b.tryAcquire();
      if (i % 2 == 0) p.failure(); else p.success();
    }
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    BreakerConfig time = BreakerConfig.builder()
        .slidingWindowType(BreakerConfig.SlidingWindowType.TIME_BASED).slidingWindowSize(20)
        .build();
    assertEquals(Duration.ofSeconds(20), time.windowDuration(), "seconds, as in resilience4j");
    assertEquals(12, BreakerConfig.builder()
        .slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED).slidingWindowSize(12)
        .build().windowSize());
  }

  @Test
  void failure_threshold_is_the_consecutive_policy_and_no_window_option() {
    CircuitBreaker b = reg.create("run", trips(3));
    for (int i = 0; i < 3; i++) b.tryAcquire().failure();
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BreakerConfig.builder().slidingWindowType(BreakerConfig.SlidingWindowType.COUNT_BASED)
            .failureThreshold(3).build());
    assertTrue(e.getMessage().startsWith("failureThreshold does nothing under"
        + " slidingWindowType(COUNT_BASED)"), e.getMessage());
  }

  @Test
  void max_wait_duration_in_half_open_state_is_each_probes_lease() {
    CircuitBreaker b = reg.create("lease", BreakerConfig.builder().failureThreshold(1)
        .waitDurationInOpenState(Duration.ofSeconds(1))
        .maxWaitDurationInHalfOpenState(Duration.ofSeconds(2)).build());
    b.tryAcquire().failure();
    reg.advance(Duration.ofSeconds(1));
    Permit silent = b.tryAcquire(); // the probe, never reported
    assertNotNull(silent);
    assertNull(b.tryAcquire(), "one probe at a time");
    reg.pollEvents(100);
    reg.advance(Duration.ofSeconds(2));
    b.tryAcquire(); // the next call finds the lease expired: no thread did it
    assertTrue(reg.pollEvents(100).stream()
        .anyMatch(t -> t.reason() == StateTransition.Reason.PROBE_LEASE_EXPIRED));
  }

  @Test
  void wait_interval_function_is_backoff_cap_and_jitter() {
    CircuitBreaker b = reg.create("backoff", BreakerConfig.builder().failureThreshold(1)
        .waitDurationInOpenState(Duration.ofSeconds(1)).openBackoffMultiplier(2)
        .maxWaitDurationInOpenState(Duration.ofSeconds(3)).build());
    b.tryAcquire().failure();
    assertEquals(Duration.ofSeconds(1), b.retryAfter());
    reg.advance(Duration.ofSeconds(1));
    b.tryAcquire().failure(); // the probe fails: the next open lasts twice as long
    assertEquals(Duration.ofSeconds(2), b.retryAfter());
    reg.advance(Duration.ofSeconds(2));
    b.tryAcquire().failure();
    assertEquals(Duration.ofSeconds(3), b.retryAfter(), "capped");
  }

  @Test
  void record_and_ignore_exceptions_record_exception_and_record_result_with_ignore_winning() {
    CircuitBreaker b = reg.create("classify", BreakerConfig.builder().failureThreshold(100)
        .recordExceptions(IllegalStateException.class)
        .ignoreExceptions(UnsupportedOperationException.class)
        .recordException(t -> t.getMessage() != null && t.getMessage().equals("503"))
        .recordResult(r -> "busy".equals(r)).build());
    assertThrows(IllegalStateException.class, () -> b.executeRunnable(() -> {
      throw new IllegalStateException();
    }));
    assertThrows(RuntimeException.class, () -> b.executeRunnable(() -> {
      throw new RuntimeException("503");
    }));
    assertThrows(UnsupportedOperationException.class, () -> b.executeRunnable(() -> {
      throw new UnsupportedOperationException("503"); // matches the predicate, ignored wins
    }));
    assertThrows(RuntimeException.class, () -> b.executeRunnable(() -> {
      throw new RuntimeException("other"); // recorded neither way: a success
    }));
    b.executeSupplier(() -> "busy");
    CircuitBreaker.Stats s = b.stats();
    assertEquals(3, s.failures);
    assertEquals(1, s.ignored);
    assertEquals(1, s.successes);
  }

  @Test
  void automatic_transition_from_open_to_half_open_is_not_needed() {
    CircuitBreaker b = reg.create("lazy", trips(1));
    b.tryAcquire().failure();
    reg.advance(Duration.ofSeconds(10));
    assertEquals(CircuitBreaker.State.OPEN, b.state(), "nothing moved without a call");
    Permit probe = b.tryAcquire();
    assertEquals(CircuitBreaker.State.HALF_OPEN, b.state());
    probe.success();
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
  }

  @Test
  void try_acquire_permission_and_on_success_on_error_are_a_permit() {
    CircuitBreaker b = reg.create("permit", trips(1));
    Permit p = b.tryAcquire();
    p.success();
    assertThrows(IllegalStateException.class, p::failure, "one verdict");
    b.tryAcquire().failure();
    assertNull(b.tryAcquire(), "rejected: null, no exception");
  }

  @Test
  void execute_supplier_callable_and_runnable() throws Exception {
    CircuitBreaker b = reg.create("execute", trips(5));
    assertEquals(1, b.executeSupplier(() -> 1));
    assertEquals(2, b.executeCallable(() -> 2));
    b.executeRunnable(() -> {});
    assertEquals(3, b.stats().successes);
  }

  @Test
  void call_not_permitted_exception_with_retry_after() {
    CircuitBreaker b = reg.create("rejects", trips(1));
    b.tryAcquire().failure();
    CallNotPermittedException e =
        assertThrows(CallNotPermittedException.class, () -> b.executeSupplier(() -> 1));
    assertEquals("rejects", e.breakerName());
    assertEquals(Duration.ofSeconds(10), e.retryAfter());
  }

  @Test
  void get_state_forced_open_disabled_and_reset() {
    CircuitBreaker b = reg.create("manual", trips(1));
    b.forceOpen();
    assertEquals(CircuitBreaker.State.FORCED_OPEN, b.state());
    b.disable();
    assertEquals(CircuitBreaker.State.DISABLED, b.state());
    b.tryAcquire().failure();
    assertEquals(CircuitBreaker.State.DISABLED, b.state(), "never trips");
    b.reset();
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
  }

  @Test
  void transition_to_open_state_for_is_trip() {
    CircuitBreaker b = reg.create("trip", trips(5));
    b.trip(Duration.ofSeconds(20));
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals(Duration.ofSeconds(20), b.retryAfter());
  }

  @Test
  void get_metrics_is_stats() {
    CircuitBreaker b = reg.create("stats", trips(5));
    b.tryAcquire().success();
    b.tryAcquire().failure();
    CircuitBreaker.Stats s = b.stats();
    assertEquals(2, s.admitted);
    assertEquals(1, s.failures);
    assertEquals(1, s.consecutiveFailures);
  }

  @Test
  void get_circuit_breaker_config_is_config() {
    BreakerConfig c = BreakerConfig.builder().failureThreshold(7)
        .waitDurationInOpenState(Duration.ofSeconds(3))
        .maxWaitDurationInHalfOpenState(Duration.ofSeconds(3)).build();
    assertEquals(c, reg.create("cfg", c).config());
  }

  @Test
  void event_publisher_on_state_transition_is_poll_events() {
    CircuitBreaker b = reg.create("events", trips(1));
    b.tryAcquire().failure();
    List<StateTransition> e = reg.pollEvents(10);
    assertEquals(1, e.size());
    assertEquals(CircuitBreaker.State.CLOSED, e.get(0).from());
    assertEquals(CircuitBreaker.State.OPEN, e.get(0).to());
    assertEquals(StateTransition.Reason.CONSECUTIVE_FAILURES, e.get(0).reason());
    assertEquals("consecutive_failures", e.get(0).reason().label());
  }

  @Test
  void micrometer_and_prometheus_module_is_prometheus() {
    CircuitBreaker b = reg.create("scraped", trips(1));
    b.tryAcquire().failure();
    String text = reg.prometheus();
    assertTrue(text.contains("breaker=\"scraped\""), text);
    assertTrue(text.contains("state=\"" + CircuitBreaker.State.OPEN.label() + "\""), text);
  }

  @Test
  void metrics_only_state_is_not_available() {
    assertEquals(List.of("CLOSED", "OPEN", "HALF_OPEN", "FORCED_OPEN", "DISABLED"),
        Arrays.stream(CircuitBreaker.State.values()).map(Enum::name).collect(Collectors.toList()));
    assertSame(CircuitBreaker.State.HALF_OPEN, CircuitBreaker.State.of(
        LbNativeConstants.CB_STATE_HALF_OPEN));
    assertEquals("half_open", CircuitBreaker.State.HALF_OPEN.label());
  }

  @Test
  void static_decorate_supplier_callable_function_runnable_keep_their_signatures() throws Exception {
    CircuitBreaker b = reg.create("decorated", trips(1));
    java.util.function.Supplier<Integer> s = CircuitBreaker.decorateSupplier(b, () -> 1);
    java.util.concurrent.Callable<Integer> c = CircuitBreaker.decorateCallable(b, () -> 2);
    java.util.function.Function<Integer, Integer> f = CircuitBreaker.decorateFunction(b, x -> x * 3);
    Runnable r = CircuitBreaker.decorateRunnable(b, () -> {});
    assertEquals(1, s.get());
    assertEquals(2, c.call());
    assertEquals(6, f.apply(2));
    r.run();
    assertEquals(4, b.stats().successes);
  }

  @Test
  void execute_and_decorate_completion_stage_report_on_completion_and_ignore_a_cancel()
      throws Exception {
    CircuitBreaker b = reg.create("stages", trips(1));
    java.util.concurrent.CompletableFuture<String> pending = new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.CompletionStage<String> s = b.executeCompletionStage(() -> pending);
    pending.cancel(true);
    assertEquals(1, b.stats().ignored);
    assertEquals("x", CircuitBreaker.decorateCompletionStage(b,
        () -> java.util.concurrent.CompletableFuture.completedFuture("x")).get().toCompletableFuture().get());
    assertEquals(1, b.stats().successes);
    assertTrue(s.toCompletableFuture().isCancelled());
  }

  @Test
  void decorators_with_fallback_is_an_overload() throws Exception {
    CircuitBreaker b = reg.create("fallback", trips(1));
    assertEquals("cached", b.executeSupplier(() -> { throw new IllegalStateException(); }, e -> "cached"));
    assertEquals("open", b.executeSupplier(() -> "not run",
        e -> e instanceof CallNotPermittedException ? "open" : "other"));
    assertEquals("open", b.executeCompletionStage(
        () -> java.util.concurrent.CompletableFuture.completedFuture("not run"),
        e -> e instanceof CallNotPermittedException ? "open" : "other").toCompletableFuture().get());
  }

  @Test
  void acquire_permission_throws_and_gives_the_permit() {
    CircuitBreaker b = reg.create("acquire", trips(1));
    b.acquirePermission().failure();
    assertThrows(CallNotPermittedException.class, b::acquirePermission);
  }

  @Test
  void spring_boot_properties_configs_and_instances_are_breaker_configs_from_properties() {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("resilience4j.circuitbreaker.configs.default.failure-rate-threshold", "30");
    p.setProperty("resilience4j.circuitbreaker.configs.slow.waitDurationInOpenState", "PT1M");
    p.setProperty("resilience4j.circuitbreaker.instances.pay.baseConfig", "slow");
    p.setProperty("resilience4j.circuitbreaker.instances.pay.slow-call-duration-threshold", "2s");
    BreakerConfigs c = BreakerConfigs.fromProperties(p, "resilience4j.circuitbreaker");
    assertEquals(30f, c.config("pay").failureRateThreshold());
    assertEquals(Duration.ofMinutes(1), c.config("pay").waitDurationInOpenState());
    assertEquals(Duration.ofSeconds(2), c.config("pay").slowCallDurationThreshold());
  }

  @Test
  void properties_this_library_does_not_apply_are_errors_naming_them() {
    for (String key : new String[] {"automaticTransitionFromOpenToHalfOpenEnabled",
             "registerHealthIndicator", "eventConsumerBufferSize", "enableExponentialBackoff"}) {
      java.util.Properties p = new java.util.Properties();
      p.setProperty("resilience4j.circuitbreaker.instances.a." + key, "true");
      String m = assertThrows(IllegalArgumentException.class,
          () -> BreakerConfigs.fromProperties(p, "resilience4j.circuitbreaker")).getMessage();
      assertTrue(m.startsWith("resilience4j.circuitbreaker.instances.a." + key + " is not applied"), m);
    }
  }

  @Test
  void registry_circuit_breaker_by_name_from_properties_is_configs_get_or_create() {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("resilience4j.circuitbreaker.instances.pay.failureThreshold", "2");
    BreakerConfigs c = BreakerConfigs.fromProperties(p, "resilience4j.circuitbreaker");
    assertEquals(2, c.getOrCreate(reg, "pay").config().failureThreshold());
    assertEquals(5, c.getOrCreate(reg, "other").config().failureThreshold(), "the default for an unlisted name");
  }
}
