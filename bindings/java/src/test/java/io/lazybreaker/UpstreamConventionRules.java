package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.http.HttpBreakerNames;
import java.net.URI;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/http.md's rules for a client-side integration, each a test; a
 * subclass per integration says how it makes a request, cancels one, and
 * how its rejection carries the wait. The registry's clock is manual, so a
 * trip's wait is read back exactly.
 */
abstract class UpstreamConventionRules {
  protected final Registry registry = Registry.withManualClock();
  protected final BreakerConfig config =
      BreakerConfig.builder().failureThreshold(3).waitDurationInOpenState(Duration.ofSeconds(10)).build();
  protected final Upstream upstream;

  UpstreamConventionRules() {
    try {
      upstream = new Upstream();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Makes a request through the integration; its status; throws when there is no answer. */
  abstract int call(URI uri) throws Exception;

  /** Makes a request through the integration with a 300 ms timeout. */
  abstract int callWithTimeout(URI uri) throws Exception;

  /** Starts a request to the (holding) upstream and cancels it once it has arrived. */
  abstract void callAndCancel(URI uri, Upstream upstream) throws Exception;

  /** The wait carried by what a rejected {@link #call} threw, failing if it is not a rejection. */
  abstract Duration rejectionWait(Throwable thrown);

  /** A request through the integration whose breaker is named by {@code naming}. */
  abstract int callNamed(URI uri, java.util.function.Function<URI, String> naming) throws Exception;

  @AfterEach
  void closeAll() {
    upstream.close();
    registry.close();
  }

  CircuitBreaker breaker() {
    return registry.lookup(upstream.breakerName()).orElseThrow();
  }

  @Test
  void the_breaker_is_named_http_host_port() throws Exception {
    assertEquals(200, call(upstream.uri("/v1/users?page=2")));
    assertEquals(upstream.breakerName(), breaker().name());
    assertEquals(1, breaker().stats().successes);
  }

  @Test
  void a_status_of_500_or_more_is_a_failure() throws Exception {
    upstream.answer(500, null);
    assertEquals(500, call(upstream.uri("/")));
    upstream.answer(502, null);
    assertEquals(502, call(upstream.uri("/")));
    assertEquals(2, breaker().stats().failures);
    assertEquals(0, breaker().stats().successes);
  }

  @Test
  void any_other_answer_is_a_success_4xx_included() throws Exception {
    upstream.answer(404, null);
    assertEquals(404, call(upstream.uri("/")));
    upstream.answer(499, null);
    call(upstream.uri("/"));
    assertEquals(2, breaker().stats().successes);
    assertEquals(0, breaker().stats().failures);
  }

  @Test
  void a_refused_connection_is_a_failure() throws Exception {
    URI nowhere = URI.create("http://127.0.0.1:" + Upstream.closedPort() + "/");
    assertThrows(Exception.class, () -> call(nowhere));
    CircuitBreaker b = registry.lookup(HttpBreakerNames.of(nowhere)).orElseThrow();
    assertEquals(1, b.stats().failures);
  }

  @Test
  void a_timeout_is_a_failure() throws Exception {
    upstream.holding();
    assertThrows(Exception.class, () -> callWithTimeout(upstream.uri("/slow")));
    upstream.release();
    assertEquals(1, breaker().stats().failures);
    assertEquals(0, breaker().stats().ignored);
  }

  @Test
  void the_callers_cancellation_is_ignored() throws Exception {
    upstream.holding();
    callAndCancel(upstream.uri("/slow"), upstream);
    upstream.release();
    CircuitBreaker b = breaker();
    // the verdict may land just after the cancel returns
    for (int i = 0; i < 500 && b.stats().ignored == 0; i++) Thread.sleep(10);
    assertEquals(1, b.stats().ignored);
    assertEquals(0, b.stats().failures);
  }

  @Test
  void a_429_with_retry_after_seconds_trips_for_exactly_that_long() throws Exception {
    upstream.answer(429, "120");
    assertEquals(429, call(upstream.uri("/")));
    assertEquals(CircuitBreaker.State.OPEN, breaker().state());
    assertEquals(Duration.ofSeconds(120), breaker().retryAfter());
    assertEquals(1, breaker().stats().successes, "429 is the caller's answer: a success, then the trip");
  }

  @Test
  void a_503_with_retry_after_trips_after_its_failure() throws Exception {
    upstream.answer(503, "7");
    assertEquals(503, call(upstream.uri("/")));
    assertEquals(Duration.ofSeconds(7), breaker().retryAfter());
    assertEquals(1, breaker().stats().failures);
  }

  @Test
  void a_retry_after_http_date_trips_until_then() throws Exception {
    String inAnHour = DateTimeFormatter.RFC_1123_DATE_TIME.format(
        ZonedDateTime.now(ZoneOffset.UTC).plusHours(1));
    upstream.answer(429, inAnHour);
    call(upstream.uri("/"));
    Duration wait = breaker().retryAfter();
    assertTrue(wait.compareTo(Duration.ofMinutes(50)) > 0 && wait.compareTo(Duration.ofHours(1)) <= 0,
        "an hour from the wall clock, less the seconds this took: " + wait);
  }

  @Test
  void a_missing_zero_past_or_unreadable_retry_after_trips_nothing() throws Exception {
    for (String v : new String[] {null, "0", "soon", "Wed, 21 Oct 2015 07:28:00 GMT", "-5"}) {
      upstream.answer(429, v);
      call(upstream.uri("/"));
      assertEquals(CircuitBreaker.State.CLOSED, breaker().state(), "Retry-After: " + v);
    }
    upstream.answer(200, "120");
    call(upstream.uri("/"));
    assertEquals(CircuitBreaker.State.CLOSED, breaker().state(), "only 429 and 503 trip");
  }

  @Test
  void a_retry_after_past_366_days_trips_for_366_days() throws Exception {
    upstream.answer(429, "99999999999");
    call(upstream.uri("/"));
    assertEquals(Duration.ofDays(366), breaker().retryAfter());
  }

  @Test
  void while_open_nothing_is_sent_and_the_caller_gets_the_wait() throws Exception {
    upstream.answer(429, "30");
    call(upstream.uri("/"));
    int sent = upstream.requests.get();
    Exception e = assertThrows(Exception.class, () -> call(upstream.uri("/")));
    assertEquals(Duration.ofSeconds(30), rejectionWait(e));
    assertEquals(sent, upstream.requests.get(), "nothing reached the upstream");
    registry.advance(Duration.ofSeconds(30));
    upstream.answer(200, null);
    assertEquals(200, call(upstream.uri("/")), "the probe after the wait");
    assertEquals(CircuitBreaker.State.CLOSED, breaker().state());
  }

  @Test
  void consecutive_failures_open_the_breaker_by_the_library() throws Exception {
    upstream.answer(500, null);
    for (int i = 0; i < 3; i++) call(upstream.uri("/"));
    assertEquals(CircuitBreaker.State.OPEN, breaker().state());
    assertEquals(Duration.ofSeconds(10), breaker().retryAfter());
  }

  @Test
  void a_naming_function_names_the_breaker_otherwise() throws Exception {
    callNamed(upstream.uri("/v2/x"), uri -> "api/" + uri.getPath().split("/")[1]);
    assertEquals(1, registry.lookup("api/v2").orElseThrow().stats().successes);
    assertTrue(registry.lookup(upstream.breakerName()).isEmpty());
  }

  static void awaitArrival(Upstream u) throws InterruptedException {
    assertTrue(u.arrived.await(30, TimeUnit.SECONDS), "the request reached the upstream");
  }
}
