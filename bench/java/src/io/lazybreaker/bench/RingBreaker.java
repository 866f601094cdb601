package io.lazybreaker.bench;

/**
 * The window baseline in plain Java, in the shape of resilience4j's count-based breaker (this
 * repository's own code, the Java twin of bench/r4j_window.cpp, not resilience4j's): CLOSED
 * admits on one volatile read of the state; every outcome takes one lock around a ring of the
 * last N outcomes with running totals (the leaving outcome subtracted, the new one added, a slow
 * call counted from the duration the caller measured), then compares the failure rate with the
 * threshold once minimumCalls are in. OPEN reads the clock on every call to see whether its wait
 * is over. Written to be fast, not to be beaten: nothing is allocated per call, and the clock is
 * read in CLOSED only by the caller that times its call (resilience4j's decorators read
 * System.nanoTime() twice per call).
 */
final class RingBreaker {
  private static final byte EMPTY = 0;
  private static final byte SUCCESS = 1;
  private static final byte FAILURE = 2;
  private static final int CLOSED = 0;
  private static final int OPEN = 1;

  private final byte[] ring;
  private final int minimumCalls;
  private final double failureRatePercent;
  private final long slowNanos;
  private final long openNanos;
  private volatile int state = CLOSED;
  private volatile long openedAt;
  private int head;
  private int calls;
  private int failures;
  private int slow;

  RingBreaker(int windowSize, int minimumCalls, double failureRatePercent, long slowNanos,
      long openNanos) {
    this.ring = new byte[windowSize];
    this.minimumCalls = minimumCalls;
    this.failureRatePercent = failureRatePercent;
    this.slowNanos = slowNanos;
    this.openNanos = openNanos;
  }

  /** Whether a call may go ahead. */
  boolean acquirePermission() {
    if (state == CLOSED) return true;
    if (System.nanoTime() - openedAt < openNanos) return false;
    synchronized (this) {
      clear();
      state = CLOSED;
    }
    return true;
  }

  void onSuccess(long durationNanos) {
    record(SUCCESS, durationNanos);
  }

  void onError(long durationNanos) {
    record(FAILURE, durationNanos);
  }

  /** OPEN now, for the open duration. */
  synchronized void transitionToOpen() {
    openedAt = System.nanoTime();
    state = OPEN;
  }

  private synchronized void record(byte outcome, long durationNanos) {
    head = head + 1 == ring.length ? 0 : head + 1;
    byte leaving = ring[head];
    if (leaving != EMPTY) {
      calls--;
      if (leaving == FAILURE) failures--;
    }
    ring[head] = outcome;
    calls++;
    if (outcome == FAILURE) failures++;
    if (durationNanos > slowNanos) slow++;
    if (calls >= minimumCalls
        && failures * 100.0 / calls >= failureRatePercent
        && state == CLOSED) {
      openedAt = System.nanoTime();
      state = OPEN;
    }
  }

  private void clear() {
    java.util.Arrays.fill(ring, EMPTY);
    calls = failures = slow = 0;
  }
}
