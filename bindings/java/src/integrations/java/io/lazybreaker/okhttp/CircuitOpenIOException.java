package io.lazybreaker.okhttp;

import io.lazybreaker.CallNotPermittedException;
import java.io.IOException;
import java.time.Duration;

/**
 * What {@link BreakerInterceptor} throws while an upstream's breaker is open:
 * an {@link IOException}, as OkHttp requires of an interceptor (OkHttp 3
 * hands an enqueued call's callback only an IOException; anything else is
 * lost on its dispatcher thread). Its cause is the breaker's {@link
 * CallNotPermittedException}.
 */
public final class CircuitOpenIOException extends IOException {
  private static final long serialVersionUID = 1L;

  CircuitOpenIOException(CallNotPermittedException rejected) {
    super(rejected.getMessage(), rejected);
  }

  /** The breaker's rejection. */
  public CallNotPermittedException rejection() {
    return (CallNotPermittedException) getCause();
  }

  /** How long until the breaker could admit a request (its rejection's). */
  public Duration retryAfter() {
    return rejection().retryAfter();
  }
}
