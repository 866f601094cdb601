package io.lazybreaker;

import java.time.Duration;

/**
 * Thrown by {@code execute*} when the breaker rejects the call (OPEN, a full
 * HALF_OPEN, FORCED_OPEN). Unchecked, as resilience4j's of the same name.
 * {@link CircuitBreaker#tryAcquire()} never throws it: it returns null.
 */
public class CallNotPermittedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String breakerName;
  private final transient Duration retryAfter;

  CallNotPermittedException(String breakerName, CircuitBreaker.State state, Duration retryAfter) {
    super("CircuitBreaker '" + breakerName + "' is " + state + " and does not permit further calls"
        + (retryAfter.equals(Durations.FOREVER) ? " until it is reset" : "; retry after " + retryAfter));
    this.breakerName = breakerName;
    this.retryAfter = retryAfter;
  }

  /** The breaker's name. */
  public String breakerName() {
    return breakerName;
  }

  /**
   * How long until a call could be admitted, as the breaker said when it
   * rejected this one; {@code ChronoUnit.FOREVER.getDuration()} in FORCED_OPEN
   * (until a reset).
   */
  public Duration retryAfter() {
    return retryAfter;
  }
}
