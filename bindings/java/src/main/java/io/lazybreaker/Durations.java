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

  /**
   * A bound in nanoseconds as people write it, in the largest unit that
   * holds it exactly: "1 µs", "1 ms", "366 days".
   */
  static String describe(long unsignedNanos) {
    final long[] sizes = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L,
        1_000_000_000L, 1_000_000L, 1_000L};
    final String[] units = {" days", " h", " min", " s", " ms", " \u00b5s"};
    if (unsignedNanos == 0) return "0";
    for (int i = 0; i < sizes.length; i++) {
      if (Long.remainderUnsigned(unsignedNanos, sizes[i]) == 0) {
        long n = Long.divideUnsigned(unsignedNanos, sizes[i]);
        return n + (i == 0 && n == 1 ? " day" : units[i]);
      }
    }
    return Long.toUnsignedString(unsignedNanos) + " ns";
  }
}
