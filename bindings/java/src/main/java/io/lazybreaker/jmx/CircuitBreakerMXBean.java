package io.lazybreaker.jmx;

/**
 * What JConsole (or any JMX client) reads and does on one breaker, under
 * {@code io.lazybreaker:type=CircuitBreaker,name=<quoted name>}. Every read
 * asks the library at that moment; nothing is cached or counted in Java.
 */
public interface CircuitBreakerMXBean {
  /** The breaker's name. */
  String getName();

  /** The state, as the library names it ("closed", "open", "half_open", "forced_open", "disabled"). */
  String getState();

  /** Milliseconds until a call could be admitted; -1 while forced open (until a reset). */
  long getRetryAfterMillis();

  long getAdmitted();

  long getRejected();

  long getSuccesses();

  long getFailures();

  long getIgnored();

  long getTrips();

  long getConsecutiveFailures();

  long getSlowCalls();

  /** Failures / calls in the window now (rate policies), 0..1. */
  double getFailureRate();

  /** Slow calls / calls in the window now, 0..1. */
  double getSlowCallRate();

  /** Milliseconds in the current state, on the registry's clock. */
  long getMillisInState();

  /** CLOSED with a fresh count. */
  void reset();

  /** FORCED_OPEN until a reset. */
  void forceOpen();

  /** DISABLED (admits everything, never trips) until a reset. */
  void disable();
}
