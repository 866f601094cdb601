package io.lazybreaker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * <p>The policy follows from the options set, unless {@link Builder#policy} or
 * {@link Builder#slidingWindowType} chooses it: the first field set that some
 * policy ignores chooses the first policy, in the order CONSECUTIVE_FAILURES,
 * COUNT_WINDOW, TIME_WINDOW, that reads it, by the library's own answers
 * ({@code cb_policy_reads}; the rule of docs/policies.md, as in every binding). So resilience4j's rate options
 * ({@code failureRateThreshold}, {@code slidingWindowSize}, {@code
 * minimumNumberOfCalls}) give a count window, as resilience4j's default
 * COUNT_BASED window; {@code failureThreshold} the consecutive policy;
 * {@code windowDuration}, {@code windowBuckets} a time window. An option the
 * policy ignores is an {@link IllegalArgumentException} naming the option and
 * the policy.
 *
 * <p>{@link Builder#build()} has the library validate the whole config: an
 * out-of-range value throws {@link IllegalArgumentException} in the
 * builder's words ({@code waitDurationInOpenState must be at least 1 µs, got
 * PT0S}), built from the field the library names, never from its message.
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
  // The option that set each field, as the user wrote it (for messages
  // that name a field: getOrCreate's "differs").
  private final Map<ConfigField, Named> named;

  /** An option's name and the unit its values were given in. */
  static final class Named {
    final String option;
    final ConfigField.Unit unit;

    Named(String option, ConfigField.Unit unit) {
      this.option = option;
      this.unit = unit;
    }
  }

  private static final BreakerConfig DEFAULTS = builder().build();

  /** The library's defaults. */
  public static BreakerConfig defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  private BreakerConfig(cb_config c, Classifier classifier, Map<ConfigField, Named> named) {
    this.named = named;
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

  /** The configuration a breaker holds (cb_config_get), with the classifier it runs. */
  static BreakerConfig fromNative(cb_config c, Classifier classifier) {
    return new BreakerConfig(c, classifier, Map.of());
  }

  /** The option that set {@code f} here, or its builder name. */
  Named nameOf(ConfigField f) {
    Named n = named.get(f);
    return n != null ? n : new Named(f.option, f.unit);
  }

  /** A fresh native cb_config holding these settings; the caller deletes it. */
  // The native cb_config of this configuration, made once and reused by
  // every create and getOrCreate with it (the library copies it in the
  // call, never keeps it): one struct and one Cleaner per configuration,
  // none per breaker. Freed when this configuration is collected.
  private volatile cb_config interned;

  /** The interned native configuration; the caller must not delete it. */
  cb_config interned() {
    cb_config c = interned;
    if (c != null) return c;
    synchronized (this) {
      if (interned == null) {
        cb_config made = toNative();
        Registry.CLEANER.register(this, made::delete);
        interned = made;
      }
      return interned;
    }
  }

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

  /**
   * Equal configurations: every cb_config field equal (the classifier, a
   * Java-side matter, is not compared), as getOrCreate compares them.
   */
  @Override
  public boolean equals(Object o) {
    if (!(o instanceof BreakerConfig)) return false;
    BreakerConfig b = (BreakerConfig) o;
    return failureThreshold == b.failureThreshold && openDurationNs == b.openDurationNs
        && halfOpenMaxCalls == b.halfOpenMaxCalls
        && halfOpenSuccessThreshold == b.halfOpenSuccessThreshold
        && halfOpenTimeoutNs == b.halfOpenTimeoutNs && policy == b.policy
        && windowSize == b.windowSize && windowDurationNs == b.windowDurationNs
        && windowBuckets == b.windowBuckets && minimumCalls == b.minimumCalls
        && Double.compare(failureRate, b.failureRate) == 0 && slowCallNs == b.slowCallNs
        && Double.compare(slowCallRate, b.slowCallRate) == 0
        && Double.compare(backoffMultiplier, b.backoffMultiplier) == 0
        && openDurationMaxNs == b.openDurationMaxNs
        && Double.compare(openJitter, b.openJitter) == 0;
  }

  @Override
  public int hashCode() {
    return Objects.hash(failureThreshold, openDurationNs, halfOpenMaxCalls,
        halfOpenSuccessThreshold, halfOpenTimeoutNs, policy, windowSize, windowDurationNs,
        windowBuckets, minimumCalls, failureRate, slowCallNs, slowCallRate, backoffMultiplier,
        openDurationMaxNs, openJitter);
  }

  @Override
  public String toString() {
    return "BreakerConfig{policy=" + policy + ", failureThreshold=" + failureThreshold
        + ", waitDurationInOpenState=" + waitDurationInOpenState()
        + ", permittedNumberOfCallsInHalfOpenState=" + halfOpenMaxCalls
        + ", halfOpenSuccessThreshold=" + halfOpenSuccessThreshold
        + ", maxWaitDurationInHalfOpenState=" + maxWaitDurationInHalfOpenState()
        + ", windowSize=" + windowSize + ", windowDuration=" + windowDuration()
        + ", windowBuckets=" + windowBuckets + ", minimumNumberOfCalls=" + minimumCalls
        + ", failureRateThreshold=" + failureRateThreshold() + ", slowCallDurationThreshold="
        + slowCallDurationThreshold() + ", slowCallRateThreshold=" + slowCallRateThreshold()
        + ", openBackoffMultiplier=" + backoffMultiplier + ", maxWaitDurationInOpenState="
        + maxWaitDurationInOpenState() + ", openJitter=" + openJitter + "}";
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
   * cannot carry to the library (null, a negative count or duration); {@link
   * #build()} resolves the policy, then the library judges the rest.
   */
  public static final class Builder {
    private Integer failureThreshold;
    private Duration openDuration;
    private Integer halfOpenMaxCalls;
    private Integer halfOpenSuccessThreshold;
    private Duration halfOpenTimeout;
    private Policy policy;
    private String policyChosenBy; // "policy(COUNT_WINDOW)", "slidingWindowType(TIME_BASED)"
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
    // Each field's option as the user last set it, in the order of the calls.
    private final Map<ConfigField, Named> named = new EnumMap<>(ConfigField.class);
    private final Map<String, ConfigField> set = new LinkedHashMap<>();
    private final List<Class<? extends Throwable>> recordExceptions = new ArrayList<>();
    private final List<Class<? extends Throwable>> ignoreExceptions = new ArrayList<>();
    private Predicate<Throwable> recordException;
    private Predicate<Object> recordResult;
    private boolean writableStackTrace;

    private Builder() {}

    private static int count(int v, String what) {
      if (v < 0) throw new IllegalArgumentException(what + " must not be negative, got " + v);
      return v;
    }

    private void mark(String option, ConfigField field, ConfigField.Unit unit) {
      set.remove(option); // the last call's place counts
      set.put(option, field);
      named.put(field, new Named(option, unit));
    }

    /** Failures in a row that trip the CONSECUTIVE_FAILURES policy (default 5). */
    public Builder failureThreshold(int failures) {
      failureThreshold = count(failures, "failureThreshold");
      mark("failureThreshold", ConfigField.FAILURE_THRESHOLD, ConfigField.Unit.COUNT);
      return this;
    }

    /** How long OPEN rejects before a probe (default 30 s). */
    public Builder waitDurationInOpenState(Duration d) {
      Durations.toNanos(d, "waitDurationInOpenState");
      openDuration = d;
      mark("waitDurationInOpenState", ConfigField.OPEN_DURATION, ConfigField.Unit.DURATION);
      return this;
    }

    /** Probes admitted at once in HALF_OPEN (default 1). */
    public Builder permittedNumberOfCallsInHalfOpenState(int calls) {
      halfOpenMaxCalls = count(calls, "permittedNumberOfCallsInHalfOpenState");
      mark("permittedNumberOfCallsInHalfOpenState", ConfigField.HALF_OPEN_MAX_CALLS,
          ConfigField.Unit.COUNT);
      return this;
    }

    /** Probe successes that close the breaker (default 1). */
    public Builder halfOpenSuccessThreshold(int successes) {
      halfOpenSuccessThreshold = count(successes, "halfOpenSuccessThreshold");
      mark("halfOpenSuccessThreshold", ConfigField.HALF_OPEN_SUCCESSES, ConfigField.Unit.COUNT);
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
      mark("maxWaitDurationInHalfOpenState", ConfigField.HALF_OPEN_TIMEOUT,
          ConfigField.Unit.DURATION);
      return this;
    }

    /** Chooses the policy; an option it ignores is then an error of {@link #build()}. */
    public Builder policy(Policy p) {
      policy = Objects.requireNonNull(p, "policy");
      policyChosenBy = "policy(" + p + ")";
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
      policyChosenBy = "slidingWindowType(" + type + ")";
      return this;
    }

    /**
     * resilience4j's window size: outcomes kept under COUNT_WINDOW (also the
     * inferred one), seconds under TIME_WINDOW.
     */
    public Builder slidingWindowSize(int size) {
      slidingWindowSize = count(size, "slidingWindowSize");
      set.remove("slidingWindowSize");
      set.put("slidingWindowSize", ConfigField.WINDOW_SIZE); // its field: when the policy is known
      return this;
    }

    /** COUNT_WINDOW: the outcomes kept (default 100). */
    public Builder windowSize(int outcomes) {
      windowSize = count(outcomes, "windowSize");
      mark("windowSize", ConfigField.WINDOW_SIZE, ConfigField.Unit.COUNT);
      return this;
    }

    /** TIME_WINDOW: the span kept (default 60 s). */
    public Builder windowDuration(Duration d) {
      Durations.toNanos(d, "windowDuration");
      windowDuration = d;
      mark("windowDuration", ConfigField.WINDOW_DURATION, ConfigField.Unit.DURATION);
      return this;
    }

    /** TIME_WINDOW: buckets the span is kept in (default 10). */
    public Builder windowBuckets(int buckets) {
      windowBuckets = count(buckets, "windowBuckets");
      mark("windowBuckets", ConfigField.WINDOW_BUCKETS, ConfigField.Unit.COUNT);
      return this;
    }

    /** No rate trips before this many outcomes are in the window (default 100). */
    public Builder minimumNumberOfCalls(int calls) {
      minimumCalls = count(calls, "minimumNumberOfCalls");
      mark("minimumNumberOfCalls", ConfigField.MINIMUM_CALLS, ConfigField.Unit.COUNT);
      return this;
    }

    /** The failure rate that trips, in percent: (0, 100], default 50. */
    public Builder failureRateThreshold(float percent) {
      failureRate = percent / 100.0;
      set.remove("failureRateThresholdRatio");
      mark("failureRateThreshold", ConfigField.FAILURE_RATE, ConfigField.Unit.PERCENT);
      return this;
    }

    /**
     * The failure rate that trips as the library holds it, a ratio in (0, 1]
     * (0.5 is 50 %), exactly: for rates a float percentage cannot carry.
     */
    public Builder failureRateThresholdRatio(double ratio) {
      failureRate = ratio;
      set.remove("failureRateThreshold");
      mark("failureRateThresholdRatio", ConfigField.FAILURE_RATE, ConfigField.Unit.RATIO);
      return this;
    }

    /** A call slower than this is slow; zero (the default) turns tracking off. */
    public Builder slowCallDurationThreshold(Duration d) {
      Durations.toNanos(d, "slowCallDurationThreshold");
      slowCall = d;
      mark("slowCallDurationThreshold", ConfigField.SLOW_CALL, ConfigField.Unit.DURATION);
      return this;
    }

    /** The slow-call rate that trips, in percent: (0, 100], default 100. */
    public Builder slowCallRateThreshold(float percent) {
      slowCallRate = percent / 100.0;
      set.remove("slowCallRateThresholdRatio");
      mark("slowCallRateThreshold", ConfigField.SLOW_CALL_RATE, ConfigField.Unit.PERCENT);
      return this;
    }

    /** The slow-call rate that trips as a ratio in (0, 1], exactly. */
    public Builder slowCallRateThresholdRatio(double ratio) {
      slowCallRate = ratio;
      set.remove("slowCallRateThreshold");
      mark("slowCallRateThresholdRatio", ConfigField.SLOW_CALL_RATE, ConfigField.Unit.RATIO);
      return this;
    }

    /** Each repeated trip multiplies the open duration by this (1..1000; 1, the default, is fixed). */
    public Builder openBackoffMultiplier(double multiplier) {
      backoffMultiplier = multiplier;
      mark("openBackoffMultiplier", ConfigField.BACKOFF, ConfigField.Unit.FACTOR);
      return this;
    }

    /** The cap of backoff and jitter; zero (the default) is none. */
    public Builder maxWaitDurationInOpenState(Duration d) {
      Durations.toNanos(d, "maxWaitDurationInOpenState");
      openDurationMax = d;
      mark("maxWaitDurationInOpenState", ConfigField.OPEN_DURATION_MAX, ConfigField.Unit.DURATION);
      return this;
    }

    /** Each open duration is scaled by a random factor in [1 - j, 1 + j]; [0, 1), default 0. */
    public Builder openJitter(double jitter) {
      openJitter = jitter;
      mark("openJitter", ConfigField.JITTER, ConfigField.Unit.JITTER);
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
     * Whether a {@link CallNotPermittedException} records the stack it was
     * thrown from (default false, unlike resilience4j's {@code
     * writableStackTraceEnabled}): during an outage every call is rejected,
     * and filling in the stack is nearly all the cost of a throwing
     * rejection, for a trace that always says the same thing.
     */
    public Builder writableStackTraceEnabled(boolean enabled) {
      writableStackTrace = enabled;
      return this;
    }

    // ---- the policy: chosen, or inferred from the options set ----------------
    // The one rule of docs/policies.md, "Which settings a policy reads", applied to the
    // library's answers (PolicyReads), never to a table of this binding's: so equal settings
    // give equal configurations in every language.

    /**
     * The field {@code option} writes under {@code p}: resilience4j's slidingWindowSize is a
     * time window's duration (in seconds), any other window's size; null {@code p} (no policy
     * yet) is a size.
     */
    private static ConfigField fieldUnder(Policy p, String option, ConfigField field) {
      return p == Policy.TIME_WINDOW && option.equals("slidingWindowSize")
          ? ConfigField.WINDOW_DURATION
          : field;
    }

    /** Each option set with the field it writes under {@code p}, in the order of the fields. */
    private List<Map.Entry<String, ConfigField>> fieldsSet(Policy p) {
      List<Map.Entry<String, ConfigField>> out = new ArrayList<>();
      for (Map.Entry<String, ConfigField> e : set.entrySet()) {
        out.add(Map.entry(e.getKey(), fieldUnder(p, e.getKey(), e.getValue())));
      }
      out.sort(Map.Entry.comparingByValue()); // ConfigField's order is CB_CONFIG_FIELDS'
      return out;
    }

    /**
     * The policy chosen; else the one the first field set that some policy ignores chooses (the
     * first of CONSECUTIVE_FAILURES, COUNT_WINDOW, TIME_WINDOW the library says reads it, with
     * CB_FIELD_READ); with none set, the first.
     *
     * @throws IllegalArgumentException when the policy does not read a field set
     */
    private Policy resolvePolicy(boolean slowCallsTracked) {
      if (policy != null) {
        refuseUnread(policy, slowCallsTracked);
        return policy;
      }
      for (Policy p : Policy.values()) {
        if (fieldsSet(p).stream().allMatch(e -> PolicyReads.reads(p, e.getValue()))) return p;
      }
      return chosenByFirstField(slowCallsTracked);
    }

    private void refuseUnread(Policy p, boolean slowCallsTracked) {
      for (Map.Entry<String, ConfigField> e : fieldsSet(p)) {
        if (PolicyReads.reads(p, e.getValue(), slowCallsTracked)) continue;
        String option = e.getKey();
        String under = option + " does nothing under " + policyChosenBy
            + (policyChosenBy.startsWith("policy(") ? "" : " (the " + p + " policy)");
        if (PolicyReads.of(p, e.getValue()) == LbNativeConstants.CB_FIELD_READ_WITH_SLOW_CALLS) {
          throw new IllegalArgumentException(under + " without slowCallDurationThreshold:"
              + " set slowCallDurationThreshold, or leave " + option + " unset");
        }
        throw new IllegalArgumentException(under + ": set one of them, not both");
      }
    }

    /**
     * No policy reads every field set (CB_FIELD_READ): the policy the first field set that some
     * policy ignores chooses, if it reads every field set (a slow-call window's with slow calls
     * tracked); else names it, the field that chose it and the first field it does not read.
     */
    private Policy chosenByFirstField(boolean slowCallsTracked) {
      Map.Entry<String, ConfigField> first = null;
      Policy chosen = null;
      for (Map.Entry<String, ConfigField> e : fieldsSet(null)) {
        for (Policy p : Policy.values()) {
          if (PolicyReads.reads(p, e.getValue())) {
            chosen = chosen != null ? chosen : p;
          } else if (first == null) {
            first = e;
          }
        }
        if (first != null) break;
        chosen = null;
      }
      if (first == null || chosen == null) {
        throw new IllegalArgumentException("no one policy reads all of " + set.keySet());
      }
      String fix = ": set policy(...) or slidingWindowType(...), or leave one of them unset";
      for (Map.Entry<String, ConfigField> e : fieldsSet(chosen)) {
        if (PolicyReads.reads(chosen, e.getValue(), slowCallsTracked)) continue;
        boolean slowCallWindow = PolicyReads.of(chosen, e.getValue())
            == LbNativeConstants.CB_FIELD_READ_WITH_SLOW_CALLS;
        throw new IllegalArgumentException(e.getKey() + " is ignored by " + chosen
            + ", which " + first.getKey() + " chooses"
            + (slowCallWindow
                ? " (only its slow-call window reads it: set slowCallDurationThreshold)"
                : "")
            + fix);
      }
      return chosen;
    }

    /**
     * The config, validated by the library.
     *
     * @throws IllegalArgumentException for an option the policy ignores
     *     (naming both), or an out-of-range value (naming the option, its
     *     bounds and the value, in the option's own type)
     */
    public BreakerConfig build() {
      Map<ConfigField, Named> names = new EnumMap<>(named);
      cb_config c = new cb_config();
      try {
        long slowCallNs = slowCall != null ? slowCall.toNanos() : c.getSlow_call_ns();
        Policy resolved = resolvePolicy(slowCallNs != 0);
        if (failureThreshold != null) c.setFailure_threshold(failureThreshold);
        if (openDuration != null) c.setOpen_duration_ns(openDuration.toNanos());
        if (halfOpenMaxCalls != null) c.setHalf_open_max_calls(halfOpenMaxCalls);
        if (halfOpenSuccessThreshold != null)
          c.setHalf_open_success_threshold(halfOpenSuccessThreshold);
        if (halfOpenTimeout != null) c.setHalf_open_timeout_ns(halfOpenTimeout.toNanos());
        c.setPolicy(resolved.code);
        if (slidingWindowSize != null) {
          if (resolved == Policy.TIME_WINDOW) {
            c.setWindow_duration_ns(Durations.toNanos(
                Duration.ofSeconds(slidingWindowSize), "slidingWindowSize"));
            names.put(ConfigField.WINDOW_DURATION,
                new Named("slidingWindowSize", ConfigField.Unit.SECONDS));
          } else {
            c.setWindow_size(slidingWindowSize);
            names.put(ConfigField.WINDOW_SIZE,
                new Named("slidingWindowSize", ConfigField.Unit.COUNT));
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
        try {
          Registry.validate(c);
        } catch (RefusedArgument e) {
          ConfigField f = ConfigField.of(e.field());
          if (f == null) throw e;
          Named n = names.getOrDefault(f, new Named(f.option, f.unit));
          IllegalArgumentException mine =
              new IllegalArgumentException(f.refusal(c, n.option, n.unit));
          mine.initCause(e);
          throw mine;
        }
        return new BreakerConfig(
            c,
            new Classifier(
                List.copyOf(recordExceptions),
                List.copyOf(ignoreExceptions),
                recordException,
                recordResult,
                writableStackTrace),
            names);
      } finally {
        c.delete();
      }
    }
  }
}
