package io.lazybreaker;

import java.time.Duration;

/**
 * Thrown by {@code execute*} when the breaker rejects the call (OPEN, a full
 * HALF_OPEN, FORCED_OPEN). Unchecked, as resilience4j's of the same name.
 * {@link CircuitBreaker#tryAcquire()} never throws it: it returns null.
 *
 * <p>The wait is asked of the breaker only when {@link #retryAfter()} or the
 * message is first read, not at the rejection (which then costs no call to
 * the library). It has no stack trace unless the breaker's configuration
 * says {@code writableStackTraceEnabled(true)}: filling one in is nearly all
 * the cost of a rejection that throws.
 */
public class CallNotPermittedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String breakerName;
  private final CircuitBreaker.State state;
  private final transient CircuitBreaker breaker;
  private transient Duration retryAfter;

  CallNotPermittedException(
      String breakerName,
      CircuitBreaker.State state,
      CircuitBreaker breaker,
      boolean writableStackTrace) {
    super(null, null, true, writableStackTrace);
    this.breakerName = breakerName;
    this.state = state;
    this.breaker = breaker;
  }

  /** The breaker's name. */
  public String breakerName() {
    return breakerName;
  }

  /**
   * How long until a call could be admitted, as the breaker says when this is
   * first called (the same answer afterwards); {@code
   * ChronoUnit.FOREVER.getDuration()} in FORCED_OPEN (until a reset); zero
   * when the breaker has been closed since, or after deserialization.
   */
  public synchronized Duration retryAfter() {
    if (retryAfter == null) {
      if (state == CircuitBreaker.State.FORCED_OPEN) {
        retryAfter = Durations.FOREVER;
      } else {
        try {
          retryAfter = breaker == null ? Duration.ZERO : breaker.retryAfter();
        } catch (IllegalStateException closedSince) {
          retryAfter = Duration.ZERO;
        }
      }
    }
    return retryAfter;
  }

  @Override
  public String getMessage() {
    Duration wait = retryAfter();
    return "CircuitBreaker '" + breakerName + "' is " + state + " and does not permit further calls"
        + (wait.equals(Durations.FOREVER) ? " until it is reset" : "; retry after " + wait);
  }
}
