package io.lazybreaker.bench;

/**
 * The baseline in gobreaker's shape, in plain Java: one lock (synchronized),
 * counts and a generation under it, the clock read on the way in and on the
 * way out (gobreaker's beforeRequest/afterRequest each call time.Now()).
 * Recovery is lazy, as in gobreaker: the state is worked out from the clock
 * when a call comes.
 */
final class SynchronizedBreaker {
  static final int CLOSED = 0;
  static final int OPEN = 1;
  static final int HALF_OPEN = 2;

  private final int maxRequests;
  private final long timeoutNanos;
  private final int consecutiveFailuresToTrip;
  private int state = CLOSED;
  private long generation;
  private long expiry;
  // gobreaker's Counts
  private int requests;
  private int totalSuccesses;
  private int totalFailures;
  private int consecutiveSuccesses;
  private int consecutiveFailures;

  SynchronizedBreaker(int maxRequests, long timeoutNanos, int consecutiveFailuresToTrip) {
    this.maxRequests = maxRequests;
    this.timeoutNanos = timeoutNanos;
    this.consecutiveFailuresToTrip = consecutiveFailuresToTrip;
  }

  /** The generation the call was admitted in, or -1 when rejected. */
  synchronized long before() {
    long now = System.nanoTime();
    int s = currentState(now);
    if (s == OPEN) return -1;
    if (s == HALF_OPEN && requests >= maxRequests) return -1;
    requests++;
    return generation;
  }

  synchronized void after(long before, boolean success) {
    long now = System.nanoTime();
    int s = currentState(now);
    if (before != generation) return;
    if (success) {
      totalSuccesses++;
      consecutiveSuccesses++;
      consecutiveFailures = 0;
      if (s == HALF_OPEN && consecutiveSuccesses >= maxRequests) setState(CLOSED, now);
    } else {
      totalFailures++;
      consecutiveFailures++;
      consecutiveSuccesses = 0;
      if (s == CLOSED && consecutiveFailures >= consecutiveFailuresToTrip) setState(OPEN, now);
      else if (s == HALF_OPEN) setState(OPEN, now);
    }
  }

  synchronized void forceOpenFor(long nanos) {
    long now = System.nanoTime();
    setState(OPEN, now);
    expiry = now + nanos;
  }

  private int currentState(long now) {
    if (state == OPEN && now - expiry >= 0) setState(HALF_OPEN, now);
    return state;
  }

  private void setState(int s, long now) {
    state = s;
    generation++;
    requests = totalSuccesses = totalFailures = consecutiveSuccesses = consecutiveFailures = 0;
    expiry = s == OPEN ? now + timeoutNanos : 0;
  }
}
