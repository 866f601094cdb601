package io.lazybreaker.okhttp;

import io.lazybreaker.CallNotPermittedException;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Permit;
import io.lazybreaker.http.UpstreamBreakers;
import io.lazybreaker.http.UpstreamOutcomes;
import java.io.IOException;
import java.util.Objects;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * An OkHttp application interceptor ({@code addInterceptor}) putting a
 * breaker per upstream in front of every request, by the convention of
 * docs/http.md: while the breaker is open nothing is sent and the call fails
 * with {@link CircuitOpenIOException}; an answer of 500 or more, or none
 * (refused, reset, timed out), is a failure; a call the caller cancelled is
 * ignored; a 429 or 503 with {@code Retry-After} trips the breaker for that
 * long. As an application interceptor it sees each call once, after OkHttp's
 * own retries and redirects.
 */
public final class BreakerInterceptor implements Interceptor {
  private final UpstreamBreakers breakers;

  public BreakerInterceptor(UpstreamBreakers breakers) {
    this.breakers = Objects.requireNonNull(breakers, "breakers");
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    CircuitBreaker breaker = breakers.of(request.url().uri());
    Permit permit;
    try {
      permit = breaker.acquirePermission();
    } catch (CallNotPermittedException rejected) {
      throw new CircuitOpenIOException(rejected);
    }
    // OkHttp ends a call that ran past its call timeout by cancelling it, so a
    // cancelled call is the caller's only if that timeout has not passed. The
    // timeout started before this interceptor ran, and OkHttp tells no one that
    // it fired: a cancel within the timeout's last tenth (50 ms at most) is
    // taken for the timeout.
    long callTimeoutNanos = chain.call().timeout().timeoutNanos(); // 0: none
    long start = callTimeoutNanos > 0 ? System.nanoTime() : 0;
    Response response;
    try {
      response = chain.proceed(request);
    } catch (Throwable t) {
      boolean timedOut = callTimeoutNanos > 0
          && System.nanoTime() - start >= callTimeoutNanos - Math.min(callTimeoutNanos / 10, 50_000_000L);
      if (timedOut) permit.failure();
      else if (chain.call().isCanceled()) permit.ignore();
      else UpstreamOutcomes.unanswered(permit, t);
      throw t;
    }
    UpstreamOutcomes.answered(breaker, permit, response.code(), response.header("Retry-After"));
    return response;
  }
}
