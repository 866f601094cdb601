package io.lazybreaker;

import static io.lazybreaker.LbNativeConstants.CB_MAX_BACKOFF_MULTIPLIER;
import static io.lazybreaker.LbNativeConstants.CB_MAX_DURATION_NS;
import static io.lazybreaker.LbNativeConstants.CB_MAX_FAILURE_THRESHOLD;
import static io.lazybreaker.LbNativeConstants.CB_MAX_HALF_OPEN_CALLS;
import static io.lazybreaker.LbNativeConstants.CB_MAX_HALF_OPEN_SUCCESSES;
import static io.lazybreaker.LbNativeConstants.CB_MAX_MINIMUM_CALLS;
import static io.lazybreaker.LbNativeConstants.CB_MAX_WINDOW_BUCKETS;
import static io.lazybreaker.LbNativeConstants.CB_MAX_WINDOW_SIZE;
import static io.lazybreaker.LbNativeConstants.CB_MIN_OPEN_DURATION_NS;
import static io.lazybreaker.LbNativeConstants.CB_MIN_WINDOW_DURATION_NS;

import java.util.function.Function;

/**
 * The {@code cb_config} fields in {@link BreakerConfig.Builder}'s words: the
 * C name that {@code cb_last_error_field()} reports, the builder option that
 * sets the field, how Java writes its values, and its bounds (the library's
 * limits as SWIG wraps them, never numbers typed again). It says what the
 * library refused, or how two configurations differ, as the user wrote it.
 */
enum ConfigField {
  FAILURE_THRESHOLD("failure_threshold", "failureThreshold", Unit.COUNT,
      1, CB_MAX_FAILURE_THRESHOLD, cb_config::getFailure_threshold),
  OPEN_DURATION("open_duration_ns", "waitDurationInOpenState", Unit.DURATION,
      CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS, cb_config::getOpen_duration_ns),
  HALF_OPEN_MAX_CALLS("half_open_max_calls", "permittedNumberOfCallsInHalfOpenState", Unit.COUNT,
      1, CB_MAX_HALF_OPEN_CALLS, cb_config::getHalf_open_max_calls),
  HALF_OPEN_SUCCESSES("half_open_success_threshold", "halfOpenSuccessThreshold", Unit.COUNT,
      1, CB_MAX_HALF_OPEN_SUCCESSES, cb_config::getHalf_open_success_threshold),
  HALF_OPEN_TIMEOUT("half_open_timeout_ns", "maxWaitDurationInHalfOpenState", Unit.DURATION,
      0, CB_MAX_DURATION_NS, cb_config::getHalf_open_timeout_ns),
  POLICY("policy", "policy", Unit.POLICY, 0, 0, c -> (long) c.getPolicy()),
  WINDOW_SIZE("window_size", "windowSize", Unit.COUNT,
      1, CB_MAX_WINDOW_SIZE, cb_config::getWindow_size),
  WINDOW_DURATION("window_duration_ns", "windowDuration", Unit.DURATION,
      CB_MIN_WINDOW_DURATION_NS, CB_MAX_DURATION_NS, cb_config::getWindow_duration_ns),
  WINDOW_BUCKETS("window_buckets", "windowBuckets", Unit.COUNT,
      1, CB_MAX_WINDOW_BUCKETS, cb_config::getWindow_buckets),
  MINIMUM_CALLS("minimum_calls", "minimumNumberOfCalls", Unit.COUNT,
      1, CB_MAX_MINIMUM_CALLS, cb_config::getMinimum_calls),
  FAILURE_RATE("failure_rate_threshold", "failureRateThreshold", Unit.PERCENT,
      0, 0, cb_config::getFailure_rate_threshold),
  SLOW_CALL("slow_call_ns", "slowCallDurationThreshold", Unit.DURATION,
      0, CB_MAX_DURATION_NS, cb_config::getSlow_call_ns),
  SLOW_CALL_RATE("slow_call_rate_threshold", "slowCallRateThreshold", Unit.PERCENT,
      0, 0, cb_config::getSlow_call_rate_threshold),
  BACKOFF("open_backoff_multiplier", "openBackoffMultiplier", Unit.FACTOR,
      0, 0, cb_config::getOpen_backoff_multiplier),
  OPEN_DURATION_MAX("open_duration_max_ns", "maxWaitDurationInOpenState", Unit.DURATION,
      CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS, cb_config::getOpen_duration_max_ns),
  JITTER("open_jitter", "openJitter", Unit.JITTER, 0, 0, cb_config::getOpen_jitter);

  /** How the builder takes a field's values (the option's Java type). */
  enum Unit {
    COUNT,
    DURATION,
    /** slidingWindowSize under TIME_WINDOW: whole seconds. */
    SECONDS,
    /** A ratio set as a percentage (0, 100]. */
    PERCENT,
    /** A ratio set as it is, (0, 1] (the *Ratio options). */
    RATIO,
    FACTOR,
    /** [0, 1) */
    JITTER,
    POLICY
  }

  final String field;
  final String option;
  final Unit unit;
  private final long lo;
  private final long hi;
  private final Function<cb_config, Number> read;

  ConfigField(String field, String option, Unit unit, long lo, long hi,
      Function<cb_config, Number> read) {
    this.field = field;
    this.option = option;
    this.unit = unit;
    this.lo = lo;
    this.hi = hi;
    this.read = read;
  }

  /** The field of that C name, or null (a field newer than this binding). */
  static ConfigField of(String cName) {
    if (cName == null) return null;
    for (ConfigField f : values()) if (f.field.equals(cName)) return f;
    return null;
  }

  /** The field's value in {@code c}, written as {@code unit} writes it. */
  String show(cb_config c, Unit as) {
    Number v = read.apply(c);
    switch (as) {
      case COUNT:
        return Long.toString(v.longValue());
      case DURATION:
        return Durations.ofNanos(v.longValue()).toString();
      case SECONDS:
        return Long.toString(Long.divideUnsigned(v.longValue(), 1_000_000_000L));
      case PERCENT:
        return Float.toString((float) (v.doubleValue() * 100.0));
      case POLICY:
        return BreakerConfig.Policy.of(v.intValue()).name();
      default:
        return Double.toString(v.doubleValue());
    }
  }

  /**
   * Why the library refused this field of {@code c}, set by {@code option}
   * in {@code as}: "waitDurationInOpenState must be at least 1 µs, got
   * PT0S".
   */
  String refusal(cb_config c, String name, Unit as) {
    String option = as == Unit.SECONDS ? name + " (seconds, under TIME_WINDOW)" : name;
    String got = ", got " + show(c, as);
    switch (as) {
      case PERCENT:
        return option + " must be above 0 and at most 100 (percent)" + got;
      case RATIO:
        return option + " must be above 0 and at most 1" + got;
      case FACTOR:
        return option + " must be 1.." + CB_MAX_BACKOFF_MULTIPLIER + got;
      case JITTER:
        return option + " must be at least 0 and below 1" + got;
      case POLICY:
        return option + " must be one of "
            + java.util.Arrays.toString(BreakerConfig.Policy.values()) + got;
      default:
        break;
    }
    long v = read.apply(c).longValue();
    if (this == OPEN_DURATION_MAX && v != 0 && Long.compareUnsigned(v, lo) >= 0
        && Long.compareUnsigned(v, hi) <= 0) {
      // The one rule across fields: the cap is not below the open duration.
      return option + " must be zero (no cap) or at least " + OPEN_DURATION.option + " ("
          + OPEN_DURATION.show(c, Unit.DURATION) + ")" + got;
    }
    String zeroOr = this == OPEN_DURATION_MAX ? "zero (no cap) or " : "";
    String must = option + " must be " + zeroOr;
    if (Long.compareUnsigned(v, lo) < 0) return must + "at least " + bound(lo, as, true) + got;
    if (Long.compareUnsigned(v, hi) > 0) return must + "at most " + bound(hi, as, false) + got;
    return must + bound(lo, as, true) + ".." + bound(hi, as, false) + got;
  }

  /** A bound in the option's unit; whole seconds round inwards, so that the bound holds. */
  private static String bound(long raw, Unit as, boolean lower) {
    switch (as) {
      case DURATION:
        return Durations.describe(raw);
      case SECONDS:
        long s = Long.divideUnsigned(raw, 1_000_000_000L);
        return Long.toString(lower && Long.remainderUnsigned(raw, 1_000_000_000L) != 0 ? s + 1 : s);
      default:
        return Long.toUnsignedString(raw);
    }
  }
}
