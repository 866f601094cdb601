package io.lazybreaker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A breaker's settings: every field of the library's {@code cb_config}, plus
 * which outcomes of {@code execute*} count as failures. Immutable; made by
 * {@link #builder()}. Unset fields keep the library's defaults (read from
 * {@code cb_config_init}, never written down here): 5 consecutive failures
 * trip, 30 s open, 1 probe, 1 probe success closes.
 *
 * <p>Where resilience4j has a setting of the same meaning, the builder uses
 * its name ({@link Builder#failureRateThreshold}, {@link
 * Builder#minimumNumberOfCalls}, {@link Builder#slidingWindowSize}, {@link
 * Builder#waitDurationInOpenState}, {@link
 * Builder#permittedNumberOfCallsInHalfOpenState}, {@link
 * Builder#slowCallDurationThreshold}, {@link Builder#slowCallRateThreshold});
 * rates are percentages, as there.
 *
 * <p>{@link Builder#build()} has the library validate the whole config: an
 * out-of-range value throws {@link IllegalArgumentException} with the
 * library's message, which names the field.
 */
public final class BreakerConfig {
  /** The trip policies ({@code cb_policy_t}). */
  public enum Policy {
    /** {@code failureThreshold} failures in a row (the default). */
    CONSECUTIVE_FAILURES(LbNativeConstants.CB_POLICY_CONSECUTIVE),
    /** The failure rate over the last {@code windowSize} outcomes. */
    COUNT_WINDOW(LbNativeConstants.CB_POLICY_COUNT_WINDOW),
    /** The failure rate over the last {@code windowDuration}. */
    TIME_WINDOW(LbNativeConstants.CB_POLICY_TIME_WINDOW);

    final int code;

    Policy(int code) {
      this.code = code;
    }

    static Policy of(int code) {
      for (Policy p : values()) if (p.code == code) return p;
      throw new IllegalStateException("unknown policy " + code);
    }
  }

  /** resilience4j's window types, for {@link Builder#slidingWindowType}. */
  public enum SlidingWindowType {
    COUNT_BASED,
    TIME_BASED
  }

  // The resolved cb_config: the library's defaults with the builder's values.
  private final long failureThreshold;
  private final long openDurationNs;
  private final long halfOpenMaxCalls;
  private final long halfOpenSuccessThreshold;
  private final long halfOpenTimeoutNs;
  private final Policy policy;
  private final long windowSize;
  private final long windowDurationNs;
  private final long windowBuckets;
  private final long minimumCalls;
  private final double failureRate;
  private final long slowCallNs;
  private final double slowCallRate;
  private final double backoffMultiplier;
  private final long openDurationMaxNs;
  private final double openJitter;
  final Classifier classifier;

  private static final BreakerConfig DEFAULTS = builder().build();

  /** The library's defaults. */
  public static BreakerConfig defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  private BreakerConfig(cb_config c, Classifier classifier) {
    failureThreshold = c.getFailure_threshold();
    openDurationNs = c.getOpen_duration_ns();
    halfOpenMaxCalls = c.getHalf_open_max_calls();
    halfOpenSuccessThreshold = c.getHalf_open_success_threshold();
    halfOpenTimeoutNs = c.getHalf_open_timeout_ns();
    policy = Policy.of(c.getPolicy());
    windowSize = c.getWindow_size();
    windowDurationNs = c.getWindow_duration_ns();
    windowBuckets = c.getWindow_buckets();
    minimumCalls = c.getMinimum_calls();
    failureRate = c.getFailure_rate_threshold();
    slowCallNs = c.getSlow_call_ns();
    slowCallRate = c.getSlow_call_rate_threshold();
    backoffMultiplier = c.getOpen_backoff_multiplier();
    openDurationMaxNs = c.getOpen_duration_max_ns();
    openJitter = c.getOpen_jitter();
    this.classifier = classifier;
  }

  /** A fresh native cb_config holding these settings; the caller deletes it. */
  cb_config toNative() {
    cb_config c = new cb_config();
    c.setFailure_threshold(failureThreshold);
    c.setOpen_duration_ns(openDurationNs);
    c.setHalf_open_max_calls(halfOpenMaxCalls);
    c.setHalf_open_success_threshold(halfOpenSuccessThreshold);
    c.setHalf_open_timeout_ns(halfOpenTimeoutNs);
    c.setPolicy(policy.code);
    c.setWindow_size(windowSize);
    c.setWindow_duration_ns(windowDurationNs);
    c.setWindow_buckets(windowBuckets);
    c.setMinimum_calls(minimumCalls);
    c.setFailure_rate_threshold(failureRate);
    c.setSlow_call_ns(slowCallNs);
    c.setSlow_call_rate_threshold(slowCallRate);
    c.setOpen_backoff_multiplier(backoffMultiplier);
    c.setOpen_duration_max_ns(openDurationMaxNs);
    c.setOpen_jitter(openJitter);
    return c;
  }

  /** Consecutive failures that trip (the CONSECUTIVE_FAILURES policy). */
  public int failureThreshold() {
    return (int) failureThreshold;
  }

  /** How long OPEN rejects (before backoff). */
  public Duration waitDurationInOpenState() {
    return Durations.ofNanos(openDurationNs);
  }

  public int permittedNumberOfCallsInHalfOpenState() {
    return (int) halfOpenMaxCalls;
  }

  public int halfOpenSuccessThreshold() {
    return (int) halfOpenSuccessThreshold;
  }

  /** A silent probe counts as failed after this; zero means the open duration. */
  public Duration maxWaitDurationInHalfOpenState() {
    return Durations.ofNanos(halfOpenTimeoutNs);
  }

  public Policy policy() {
    return policy;
  }

  public int windowSize() {
    return (int) windowSize;
  }

  public Duration windowDuration() {
    return Durations.ofNanos(windowDurationNs);
  }

  public int windowBuckets() {
    return (int) windowBuckets;
  }

  public int minimumNumberOfCalls() {
    return (int) minimumCalls;
  }

  /** In percent, as resilience4j has it (the library's fraction times 100). */
  public float failureRateThreshold() {
    return (float) (failureRate * 100.0);
  }

  /** The failure rate that trips, as the ratio the library holds. */
  public double failureRateThresholdRatio() {
    return failureRate;
  }

  /** The slow-call rate that trips, as a ratio. */
  public double slowCallRateThresholdRatio() {
    return slowCallRate;
  }

  /** Zero: slow-call tracking is off. */
  public Duration slowCallDurationThreshold() {
    return Durations.ofNanos(slowCallNs);
  }

  /** In percent. */
  public float slowCallRateThreshold() {
    return (float) (slowCallRate * 100.0);
  }

  public double openBackoffMultiplier() {
    return backoffMultiplier;
  }

  /** The cap of backoff and jitter; zero means none. */
  public Duration maxWaitDurationInOpenState() {
    return Durations.ofNanos(openDurationMaxNs);
  }

  public double openJitter() {
    return openJitter;
  }

  /**
   * Builds a {@link BreakerConfig}. Every setter checks only what Java types
   * cannot carry to the library (null, a negative count or duration); the
   * library judges the rest when {@link #build()} runs.
   */
  public static final class Builder {
    private Integer failureThreshold;
    private Duration openDuration;
    private Integer halfOpenMaxCalls;
    private Integer halfOpenSuccessThreshold;
    private Duration halfOpenTimeout;
    private Policy policy;
    private Integer windowSize;
    private Integer slidingWindowSize;
    private Duration windowDuration;
    private Integer windowBuckets;
    private Integer minimumCalls;
    private Double failureRate;
    private Duration slowCall;
    private Double slowCallRate;
    private Double backoffMultiplier;
    private Duration openDurationMax;
    private Double openJitter;
    private final List<Class<? extends Throwable>> recordExceptions = new ArrayList<>();
    private final List<Class<? extends Throwable>> ignoreExceptions = new ArrayList<>();
    private Predicate<Throwable> recordException;
    private Predicate<Object> recordResult;

    private Builder() {}

    private static int count(int v, String what) {
      if (v < 0) throw new IllegalArgumentException(what + " must not be negative, got " + v);
      return v;
    }

    /** Failures in a row that trip the CONSECUTIVE_FAILURES policy (default 5). */
    public Builder failureThreshold(int failures) {
      failureThreshold = count(failures, "failureThreshold");
      return this;
    }

    /** How long OPEN rejects before a probe (default 30 s). */
    public Builder waitDurationInOpenState(Duration d) {
      Durations.toNanos(d, "waitDurationInOpenState");
      openDuration = d;
      return this;
    }

    /** Probes admitted at once in HALF_OPEN (default 1). */
    public Builder permittedNumberOfCallsInHalfOpenState(int calls) {
      halfOpenMaxCalls = count(calls, "permittedNumberOfCallsInHalfOpenState");
      return this;
    }

    /** Probe successes that close the breaker (default 1). */
    public Builder halfOpenSuccessThreshold(int successes) {
      halfOpenSuccessThreshold = count(successes, "halfOpenSuccessThreshold");
      return this;
    }

    /**
     * How long a probe may stay silent before it counts as failed (the
     * library's half_open_timeout_ns; zero, the default, means the open
     * duration). Resilience4j's setting of this name bounds the time in
     * HALF_OPEN; here it bounds each probe's lease, with no thread.
     */
    public Builder maxWaitDurationInHalfOpenState(Duration d) {
      Durations.toNanos(d, "maxWaitDurationInHalfOpenState");
      halfOpenTimeout = d;
      return this;
    }

    public Builder policy(Policy p) {
      policy = Objects.requireNonNull(p, "policy");
      return this;
    }

    /**
     * resilience4j's window types: COUNT_BASED is the COUNT_WINDOW policy,
     * TIME_BASED the TIME_WINDOW policy. With it, {@link #slidingWindowSize}
     * is a number of calls or of seconds, as in resilience4j.
     */
    public Builder slidingWindowType(SlidingWindowType type) {
      Objects.requireNonNull(type, "slidingWindowType");
      policy = type == SlidingWindowType.COUNT_BASED ? Policy.COUNT_WINDOW : Policy.TIME_WINDOW;
      return this;
    }

    /**
     * resilience4j's window size: outcomes kept under COUNT_WINDOW, seconds
     * under TIME_WINDOW (whichever policy is set when {@link #build()} runs).
     */
    public Builder slidingWindowSize(int size) {
      slidingWindowSize = count(size, "slidingWindowSize");
      return this;
    }

    /** COUNT_WINDOW: the outcomes kept (default 100). */
    public Builder windowSize(int outcomes) {
      windowSize = count(outcomes, "windowSize");
      return this;
    }

    /** TIME_WINDOW: the span kept (default 60 s). */
    public Builder windowDuration(Duration d) {
      Durations.toNanos(d, "windowDuration");
      windowDuration = d;
      return this;
    }

    /** TIME_WINDOW: buckets the span is kept in (default 10). */
    public Builder windowBuckets(int buckets) {
      windowBuckets = count(buckets, "windowBuckets");
      return this;
    }

    /** No rate trips before this many outcomes are in the window (default 100). */
    public Builder minimumNumberOfCalls(int calls) {
      minimumCalls = count(calls, "minimumNumberOfCalls");
      return this;
    }

    /** The failure rate that trips, in percent: (0, 100], default 50. */
    public Builder failureRateThreshold(float percent) {
      failureRate = percent / 100.0;
      return this;
    }

    /**
     * The failure rate that trips as the library holds it, a ratio in (0, 1]
     * (0.5 is 50 %), exactly: for rates a float percentage cannot carry.
     */
    public Builder failureRateThresholdRatio(double ratio) {
      failureRate = ratio;
      return this;
    }

    /** A call slower than this is slow; zero (the default) turns tracking off. */
    public Builder slowCallDurationThreshold(Duration d) {
      Durations.toNanos(d, "slowCallDurationThreshold");
      slowCall = d;
      return this;
    }

    /** The slow-call rate that trips, in percent: (0, 100], default 100. */
    public Builder slowCallRateThreshold(float percent) {
      slowCallRate = percent / 100.0;
      return this;
    }

    /** The slow-call rate that trips as a ratio in (0, 1], exactly. */
    public Builder slowCallRateThresholdRatio(double ratio) {
      slowCallRate = ratio;
      return this;
    }

    /** Each repeated trip multiplies the open duration by this (1..1000; 1, the default, is fixed). */
    public Builder openBackoffMultiplier(double multiplier) {
      backoffMultiplier = multiplier;
      return this;
    }

    /** The cap of backoff and jitter; zero (the default) is none. */
    public Builder maxWaitDurationInOpenState(Duration d) {
      Durations.toNanos(d, "maxWaitDurationInOpenState");
      openDurationMax = d;
      return this;
    }

    /** Each open duration is scaled by a random factor in [1 - j, 1 + j]; [0, 1), default 0. */
    public Builder openJitter(double jitter) {
      openJitter = jitter;
      return this;
    }

    /**
     * Only these exceptions (and their subclasses) are failures of {@code
     * execute*}; any other exception counts as a success, unless ignored. With
     * none listed (the default), every exception is a failure.
     */
    @SafeVarargs
    public final Builder recordExceptions(Class<? extends Throwable>... types) {
      for (Class<? extends Throwable> t : types) recordExceptions.add(Objects.requireNonNull(t));
      return this;
    }

    /** These exceptions are reported as ignored: counted neither way. They win over recordExceptions. */
    @SafeVarargs
    public final Builder ignoreExceptions(Class<? extends Throwable>... types) {
      for (Class<? extends Throwable> t : types) ignoreExceptions.add(Objects.requireNonNull(t));
      return this;
    }

    /** An exception is a failure when this answers true, or when recordExceptions lists its type. */
    public Builder recordException(Predicate<Throwable> predicate) {
      recordException = Objects.requireNonNull(predicate, "recordException");
      return this;
    }

    /** A result for which this answers true is a failure (an HTTP 503 returned, not thrown). */
    public Builder recordResult(Predicate<Object> predicate) {
      recordResult = Objects.requireNonNull(predicate, "recordResult");
      return this;
    }

    /**
     * The config, validated by the library.
     *
     * @throws IllegalArgumentException with the library's message (naming the
     *     field) for an out-of-range value
     */
    public BreakerConfig build() {
      cb_config c = new cb_config();
      try {
        if (failureThreshold != null) c.setFailure_threshold(failureThreshold);
        if (openDuration != null) c.setOpen_duration_ns(openDuration.toNanos());
        if (halfOpenMaxCalls != null) c.setHalf_open_max_calls(halfOpenMaxCalls);
        if (halfOpenSuccessThreshold != null)
          c.setHalf_open_success_threshold(halfOpenSuccessThreshold);
        if (halfOpenTimeout != null) c.setHalf_open_timeout_ns(halfOpenTimeout.toNanos());
        if (policy != null) c.setPolicy(policy.code);
        if (slidingWindowSize != null) {
          if (Policy.of(c.getPolicy()) == Policy.TIME_WINDOW) {
            c.setWindow_duration_ns(Durations.toNanos(
                Duration.ofSeconds(slidingWindowSize), "slidingWindowSize"));
          } else {
            c.setWindow_size(slidingWindowSize);
          }
        }
        if (windowSize != null) c.setWindow_size(windowSize);
        if (windowDuration != null) c.setWindow_duration_ns(windowDuration.toNanos());
        if (windowBuckets != null) c.setWindow_buckets(windowBuckets);
        if (minimumCalls != null) c.setMinimum_calls(minimumCalls);
        if (failureRate != null) c.setFailure_rate_threshold(failureRate);
        if (slowCall != null) c.setSlow_call_ns(slowCall.toNanos());
        if (slowCallRate != null) c.setSlow_call_rate_threshold(slowCallRate);
        if (backoffMultiplier != null) c.setOpen_backoff_multiplier(backoffMultiplier);
        if (openDurationMax != null) c.setOpen_duration_max_ns(openDurationMax.toNanos());
        if (openJitter != null) c.setOpen_jitter(openJitter);
        Registry.validate(c);
        return new BreakerConfig(
            c,
            new Classifier(
                List.copyOf(recordExceptions),
                List.copyOf(ignoreExceptions),
                recordException,
                recordResult));
      } finally {
        c.delete();
      }
    }
  }
}
