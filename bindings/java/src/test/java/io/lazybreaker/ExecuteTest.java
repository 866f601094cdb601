package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ExecuteTest {
  private final Registry reg = Registry.withManualClock();

  @AfterEach
  void close() {
    reg.close();
  }

  private CircuitBreaker breaker(BreakerConfig.Builder cfg) {
    return reg.create("exec", cfg.build());
  }

  @Test
  void execute_on_a_rejected_breaker_throws_with_the_retry_after_and_the_name_and_does_not_run() {
    CircuitBreaker b = breaker(BreakerConfig.builder().failureThreshold(1)
        .waitDurationInOpenState(Duration.ofSeconds(30)));
    b.tryAcquire().failure();
    reg.advance(Duration.ofSeconds(12));
    AtomicBoolean ran = new AtomicBoolean();
    CallNotPermittedException e =
        assertThrows(
            CallNotPermittedException.class,
            () -> b.executeSupplier(() -> ran.getAndSet(true)));
    assertFalse(ran.get());
    assertEquals(Duration.ofSeconds(18), e.retryAfter());
    assertEquals("exec", e.breakerName());
    assertTrue(e.getMessage().contains("'exec' is OPEN"), e.getMessage());
    assertThrows(CallNotPermittedException.class, () -> b.executeRunnable(() -> ran.set(true)));
    assertThrows(CallNotPermittedException.class, () -> b.executeCallable(() -> ran.getAndSet(true)));
    assertFalse(ran.get());
    assertEquals(3, b.stats().rejected);
  }

  @Test
  void a_rejection_has_no_stack_trace_unless_the_configuration_asks_for_one() {
    CircuitBreaker quiet = breaker(BreakerConfig.builder());
    quiet.forceOpen();
    CallNotPermittedException e =
        assertThrows(CallNotPermittedException.class, () -> quiet.executeRunnable(() -> {}));
    assertEquals(0, e.getStackTrace().length);
    CircuitBreaker traced =
        reg.create("traced", BreakerConfig.builder().writableStackTraceEnabled(true).build());
    traced.forceOpen();
    e = assertThrows(CallNotPermittedException.class, () -> traced.executeRunnable(() -> {}));
    assertTrue(e.getStackTrace().length > 0);
  }

  @Test
  void a_forced_open_breaker_rejects_with_a_retry_after_of_forever() {
    CircuitBreaker b = breaker(BreakerConfig.builder());
    b.forceOpen();
    CallNotPermittedException e =
        assertThrows(CallNotPermittedException.class, () -> b.executeRunnable(() -> {}));
    assertEquals(ChronoUnit.FOREVER.getDuration(), e.retryAfter());
  }

  @Test
  void a_result_is_a_success_and_an_exception_a_failure_that_is_rethrown() {
    CircuitBreaker b = breaker(BreakerConfig.builder());
    assertEquals(42, b.executeSupplier(() -> 42));
    RuntimeException boom = new RuntimeException("boom");
    assertSame(boom, assertThrows(RuntimeException.class, () -> b.executeSupplier(() -> {
      throw boom;
    })));
    Error error = new AssertionError("an Error counts too");
    assertSame(error, assertThrows(AssertionError.class, () -> b.executeRunnable(() -> {
      throw error;
    })));
    IOException checked = new IOException("checked");
    assertSame(checked, assertThrows(IOException.class, () -> b.executeCallable(() -> {
      throw checked;
    })));
    CircuitBreaker.Stats s = b.stats();
    assertEquals(1, s.successes);
    assertEquals(3, s.failures);
  }

  @Test
  void ignore_exceptions_are_reported_as_ignored() {
    CircuitBreaker b =
        breaker(BreakerConfig.builder().failureThreshold(1)
            .ignoreExceptions(IllegalArgumentException.class));
    assertThrows(IllegalArgumentException.class, () -> b.executeRunnable(() -> {
      throw new NumberFormatException("a subclass is ignored too");
    }));
    assertEquals(1, b.stats().ignored);
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
  }

  @Test
  void with_record_exceptions_only_those_fail_and_others_count_as_successes() {
    CircuitBreaker b =
        breaker(BreakerConfig.builder().failureThreshold(1)
            .recordExceptions(UncheckedIOException.class)
            .ignoreExceptions(IllegalStateException.class));
    assertThrows(IllegalArgumentException.class, () -> b.executeRunnable(() -> {
      throw new IllegalArgumentException("not recorded: a success");
    }));
    assertThrows(IllegalStateException.class, () -> b.executeRunnable(() -> {
      throw new IllegalStateException("ignored");
    }));
    assertEquals(1, b.stats().successes);
    assertEquals(1, b.stats().ignored);
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
    assertThrows(UncheckedIOException.class, () -> b.executeRunnable(() -> {
      throw new UncheckedIOException(new IOException("recorded"));
    }));
    assertEquals(CircuitBreaker.State.OPEN, b.state());
  }

  @Test
  void record_exception_predicate_decides_alongside_the_listed_types() {
    CircuitBreaker b =
        breaker(BreakerConfig.builder()
            .recordException(t -> t.getMessage() != null && t.getMessage().startsWith("5")));
    assertThrows(RuntimeException.class, () -> b.executeRunnable(() -> {
      throw new RuntimeException("503");
    }));
    assertThrows(RuntimeException.class, () -> b.executeRunnable(() -> {
      throw new RuntimeException("404");
    }));
    assertEquals(1, b.stats().failures);
    assertEquals(1, b.stats().successes);
  }

  @Test
  void record_result_turns_a_returned_503_into_a_failure() {
    CircuitBreaker b =
        breaker(BreakerConfig.builder().failureThreshold(2)
            .recordResult(r -> r instanceof Integer && (Integer) r >= 500));
    assertEquals(200, b.executeSupplier(() -> 200));
    assertEquals(503, b.executeSupplier(() -> 503));
    assertEquals(503, b.executeSupplier(() -> 503));
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals(2, b.stats().failures);
  }

  @Test
  void a_throwing_classifier_still_reports_the_call_as_a_failure_and_its_exception_propagates() {
    CircuitBreaker b =
        breaker(BreakerConfig.builder()
            .recordResult(r -> {
              throw new IllegalStateException("a buggy predicate");
            }));
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> b.executeSupplier(() -> 1));
    assertEquals("a buggy predicate", e.getMessage());
    assertEquals(1, b.stats().failures);
    assertEquals(0, b.stats().admitted - b.stats().successes - b.stats().failures);
  }

  @Test
  void slow_calls_are_timed_by_the_library_from_admission_to_report() {
    CircuitBreaker b =
        breaker(BreakerConfig.builder().slowCallDurationThreshold(Duration.ofMillis(100)));
    b.executeRunnable(() -> reg.advance(Duration.ofMillis(150)));
    b.executeRunnable(() -> reg.advance(Duration.ofMillis(50)));
    assertEquals(1, b.stats().slow);
  }
}
