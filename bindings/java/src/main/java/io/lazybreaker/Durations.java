package io.lazybreaker;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/** Durations to and from the library's unsigned 64-bit nanoseconds. */
final class Durations {
  private Durations() {}

  /** The wait the library reports as UINT64_MAX (FORCED_OPEN): forever. */
  static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

  /**
   * {@code d} in nanoseconds. The library validates the range of every value;
   * only what a uint64_t cannot hold (a negative duration, or one past 292
   * years) is refused here.
   */
  static long toNanos(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative()) {
      throw new IllegalArgumentException(what + " must not be negative, got " + d);
    }
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(what + " is too long for nanoseconds: " + d, e);
    }
  }

  /** The library's nanoseconds (unsigned) as a Duration; UINT64_MAX is forever. */
  static Duration ofNanos(long unsignedNanos) {
    if (unsignedNanos == -1L) return FOREVER;
    if (unsignedNanos < 0) {
      return Duration.ofSeconds(
          Long.divideUnsigned(unsignedNanos, 1_000_000_000L),
          Long.remainderUnsigned(unsignedNanos, 1_000_000_000L));
    }
    return Duration.ofNanos(unsignedNanos);
  }
}
