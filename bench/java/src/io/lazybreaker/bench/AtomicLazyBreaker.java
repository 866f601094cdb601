package io.lazybreaker.bench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The second baseline, in plain Java, in the shape of the lazy-recovery
 * design: a state word (AtomicInteger: state in the low bits, epoch above),
 * CLOSED admission by one load and no clock read, a success that writes only
 * when the failure run is not already zero, OPEN judged on the clock, one CAS
 * to claim the probe. What lazybreaker does, without the crossing into C.
 */
final class AtomicLazyBreaker {
  static final int CLOSED = 0;
  static final int OPEN = 1;
  static final int HALF_OPEN = 2;
  private static final int STATE_BITS = 2;
  private static final int STATE_MASK = 3;

  private final AtomicInteger word = new AtomicInteger(CLOSED);
  private final AtomicInteger failures = new AtomicInteger();
  private final AtomicLong openedAt = new AtomicLong();
  private final int threshold;
  private final long openNanos;

  AtomicLazyBreaker(int threshold, long openNanos) {
    this.threshold = threshold;
    this.openNanos = openNanos;
  }

  /** A ticket (the state word it was admitted in, never -1) or -1 when rejected. */
  int allow() {
    int w = word.get();
    int s = w & STATE_MASK;
    if (s == CLOSED) return w;
    if (s == OPEN) {
      if (System.nanoTime() - openedAt.get() < openNanos) return -1;
      int probe = ((w >>> STATE_BITS) + 1) << STATE_BITS | HALF_OPEN;
      return word.compareAndSet(w, probe) ? probe : -1;
    }
    return -1; // HALF_OPEN: one probe at a time
  }

  void done(int ticket, boolean success) {
    int w = word.get();
    if (w != ticket) return; // an earlier period's outcome: stale
    int s = w & STATE_MASK;
    if (success) {
      if (s == HALF_OPEN) {
        if (word.compareAndSet(w, ((w >>> STATE_BITS) + 1) << STATE_BITS | CLOSED)) failures.set(0);
      } else if (failures.get() != 0) {
        failures.set(0);
      }
      return;
    }
    if (s == HALF_OPEN || failures.incrementAndGet() >= threshold) trip(w);
  }

  void trip(int w) {
    openedAt.set(System.nanoTime());
    word.compareAndSet(w, ((w >>> STATE_BITS) + 1) << STATE_BITS | OPEN);
  }

  void tripNow() {
    trip(word.get());
  }
}
