package io.lazybreaker.http;

import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Permit;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * How a client-side integration reports a request to an upstream
 * (docs/http.md, "Outcomes of a request"), in one place for every client.
 */
public final class UpstreamOutcomes {
  private UpstreamOutcomes() {}

  /**
   * An answer: a status of 500 or more is a failure, any other a success;
   * then a 429 or 503 with a usable {@code Retry-After} trips the breaker for
   * exactly that long.
   */
  public static void answered(CircuitBreaker breaker, Permit permit, int status, String retryAfter) {
    if (status >= 500) permit.failure();
    else permit.success();
    if (status == 429 || status == 503) {
      RetryAfter.parse(retryAfter, Instant.now()).ifPresent(breaker::trip);
    }
  }

  /**
   * No answer: a failure (refused, reset, unresolved, timed out), unless the
   * caller cancelled or interrupted the request, which is ignored.
   */
  public static void unanswered(Permit permit, Throwable thrown) {
    if (isCallersCancellation(thrown)) permit.ignore();
    else permit.failure();
  }

  /** Whether {@code thrown} says the caller gave up (not a timeout, which is the upstream's). */
  static boolean isCallersCancellation(Throwable thrown) {
    Throwable t = thrown;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof HttpTimeoutException || t instanceof SocketTimeoutException) return false;
    if (t instanceof CancellationException || t instanceof InterruptedException) return true;
    // a blocking read the caller's thread interrupt ended
    return t instanceof InterruptedIOException;
  }
}
