package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** executeCompletionStage, the decorators and the fallbacks. */
class AsyncTest {
  private final Registry reg = Registry.withManualClock();

  @AfterEach
  void close() {
    reg.close();
  }

  private CircuitBreaker breaker(BreakerConfig.Builder b) {
    return reg.create("async", b.failureThreshold(2).waitDurationInOpenState(Duration.ofSeconds(5)).build());
  }

  private CircuitBreaker breaker() {
    return breaker(BreakerConfig.builder());
  }

  private static Throwable failureOf(CompletionStage<?> stage) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> stage.toCompletableFuture().get());
    return e.getCause();
  }

  @Test
  void the_outcome_is_reported_when_the_stage_completes() throws Exception {
    CircuitBreaker b = breaker();
    CompletableFuture<String> pending = new CompletableFuture<>();
    CompletionStage<String> s = b.executeCompletionStage(() -> pending);
    assertEquals(1, b.stats().admitted);
    assertEquals(0, b.stats().successes, "nothing reported before completion");
    pending.complete("done");
    assertEquals("done", s.toCompletableFuture().get());
    assertEquals(1, b.stats().successes);
  }

  @Test
  void an_exceptional_completion_is_classified_as_a_thrown_exception() {
    CircuitBreaker b = breaker(BreakerConfig.builder().ignoreExceptions(IllegalStateException.class));
    assertInstanceOf(IOException.class,
        failureOf(b.executeCompletionStage(() -> CompletableFuture.failedFuture(new IOException("x")))));
    assertEquals(1, b.stats().failures);
    // a CompletionException's cause is what is classified
    failureOf(b.executeCompletionStage(() -> CompletableFuture.supplyAsync(() -> {
      throw new IllegalStateException("ignored by the config");
    })));
    assertEquals(1, b.stats().ignored);
  }

  @Test
  void a_cancellation_is_ignored() {
    CircuitBreaker b = breaker();
    CompletableFuture<String> pending = new CompletableFuture<>();
    CompletionStage<String> s = b.executeCompletionStage(() -> pending);
    pending.cancel(true);
    assertThrows(Exception.class, () -> s.toCompletableFuture().get());
    assertEquals(1, b.stats().ignored);
    assertEquals(0, b.stats().failures);
  }

  @Test
  void a_rejection_completes_the_stage_and_never_calls_the_supplier() {
    CircuitBreaker b = breaker();
    b.trip(Duration.ofSeconds(9));
    AtomicInteger calls = new AtomicInteger();
    Throwable t = failureOf(b.executeCompletionStage(() -> {
      calls.incrementAndGet();
      return CompletableFuture.completedFuture(1);
    }));
    assertInstanceOf(CallNotPermittedException.class, t);
    assertEquals(Duration.ofSeconds(9), ((CallNotPermittedException) t).retryAfter());
    assertEquals(0, calls.get());
  }

  @Test
  void a_supplier_that_throws_instead_of_returning_a_stage_is_a_failure() {
    CircuitBreaker b = breaker();
    Throwable t = failureOf(b.executeCompletionStage(() -> {
      throw new UncheckedIOException(new IOException("no connection"));
    }));
    assertInstanceOf(UncheckedIOException.class, t);
    assertEquals(1, b.stats().failures);
    assertThrows(NullPointerException.class, () -> b.executeCompletionStage(null));
  }

  @Test
  void the_result_predicate_applies_to_a_stages_result() throws Exception {
    CircuitBreaker b = breaker(BreakerConfig.builder().recordResult(r -> Integer.valueOf(503).equals(r)));
    assertEquals(503, b.executeCompletionStage(() -> CompletableFuture.completedFuture(503)).toCompletableFuture().get());
    assertEquals(1, b.stats().failures);
  }

  @Test
  void fallbacks_answer_rejections_and_failures() throws Exception {
    CircuitBreaker b = breaker();
    Function<Throwable, String> fallback = t -> "fallback:" + t.getClass().getSimpleName();
    assertEquals("ok", b.executeSupplier(() -> "ok", fallback));
    assertEquals("fallback:IllegalStateException",
        b.executeSupplier(() -> { throw new IllegalStateException(); }, fallback));
    assertEquals("fallback:IOException", b.executeCompletionStage(
        () -> CompletableFuture.<String>failedFuture(new IOException()), fallback).toCompletableFuture().get());
    assertEquals(2, b.stats().failures, "the failures are reported before the fallback answers");
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals("fallback:CallNotPermittedException", b.executeSupplier(() -> "not run", fallback));
    assertEquals("fallback:CallNotPermittedException",
        b.executeCompletionStage(() -> CompletableFuture.completedFuture("not run"), fallback)
            .toCompletableFuture().get());
    assertThrows(NullPointerException.class, () -> b.executeSupplier(() -> "x", null));
  }

  @Test
  void resilience4j_static_decorators() throws Exception {
    CircuitBreaker b = breaker();
    Supplier<String> s = CircuitBreaker.decorateSupplier(b, () -> "s");
    Callable<String> c = CircuitBreaker.decorateCallable(b, () -> "c");
    Function<Integer, Integer> f = CircuitBreaker.decorateFunction(b, x -> x + 1);
    AtomicInteger runs = new AtomicInteger();
    Runnable r = CircuitBreaker.decorateRunnable(b, runs::incrementAndGet);
    Supplier<CompletionStage<String>> cs =
        CircuitBreaker.decorateCompletionStage(b, () -> CompletableFuture.completedFuture("cs"));
    assertEquals("s", s.get());
    assertEquals("c", c.call());
    assertEquals(3, f.apply(2));
    r.run();
    assertEquals("cs", cs.get().toCompletableFuture().get());
    assertEquals(1, runs.get());
    assertEquals(5, b.stats().successes);
    b.forceOpen();
    assertThrows(CallNotPermittedException.class, s::get);
    assertThrows(CallNotPermittedException.class, c::call);
    assertThrows(CallNotPermittedException.class, () -> f.apply(1));
    assertThrows(CallNotPermittedException.class, r::run);
    assertInstanceOf(CallNotPermittedException.class, failureOf(cs.get()));
    assertThrows(NullPointerException.class, () -> CircuitBreaker.decorateSupplier(null, () -> 1));
    assertThrows(NullPointerException.class, () -> CircuitBreaker.decorateFunction(b, null));
  }

  /** A retry in resilience4j's shape (Retry.decorateSupplier): the breaker's decorator inside it. */
  private static <T> Supplier<T> retrying(int attempts, Supplier<T> inner) {
    return () -> {
      RuntimeException last = null;
      for (int i = 0; i < attempts; i++) {
        try {
          return inner.get();
        } catch (CallNotPermittedException e) {
          throw e; // resilience4j's Retry config usually ignores it: retrying an open breaker is pointless
        } catch (RuntimeException e) {
          last = e;
        }
      }
      throw last;
    };
  }

  @Test
  void a_retry_around_the_decorator_counts_each_attempt() {
    CircuitBreaker b = breaker();
    AtomicInteger attempts = new AtomicInteger();
    Supplier<String> call = retrying(5, CircuitBreaker.decorateSupplier(b, () -> {
      attempts.incrementAndGet();
      throw new IllegalStateException("down");
    }));
    assertThrows(CallNotPermittedException.class, call::get);
    assertEquals(2, attempts.get(), "two failures trip the breaker; the third attempt is rejected");
    assertEquals(2, b.stats().failures);
    assertEquals(1, b.stats().rejected);
  }

  @Test
  void a_completion_exception_without_cause_is_a_failure() {
    CircuitBreaker b = breaker();
    assertTrue(failureOf(b.executeCompletionStage(
        () -> CompletableFuture.failedFuture(new CompletionException(null)))) instanceof CompletionException);
    assertEquals(1, b.stats().failures);
  }
}
