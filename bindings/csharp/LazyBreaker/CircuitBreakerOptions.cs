using System;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>How a breaker decides to trip.</summary>
public enum TripPolicy
{
    /// <summary><see cref="CircuitBreakerOptions.FailureThreshold"/> failures in a row (the library's default).</summary>
    Consecutive = 0,
    /// <summary>The failure ratio over the last <see cref="CircuitBreakerOptions.WindowSize"/> outcomes.</summary>
    CountWindow = 1,
    /// <summary>The failure ratio over the last <see cref="CircuitBreakerOptions.SamplingDuration"/> (Polly's model).</summary>
    TimeWindow = 2,
}

/// <summary>How an outcome counts: the three outcomes of the C ABI (cb_outcome_t).</summary>
public enum Verdict
{
    /// <summary>The call succeeded.</summary>
    Success = 0,
    /// <summary>The call failed and counts against the dependency.</summary>
    Failure = 1,
    /// <summary>Neither (a cancellation, a client error): counted nowhere.</summary>
    Ignored = 2,
}

/// <summary>
/// What an <c>Execute*</c> call ended with, for
/// <see cref="CircuitBreakerOptions.ShouldHandle"/>: an exception, or a
/// result (boxed when it is a value type: only when ShouldHandle is set).
/// </summary>
public readonly struct CallOutcome
{
    internal CallOutcome(Exception? exception, object? result)
    {
        Exception = exception;
        Result = result;
    }

    /// <summary>The exception the call threw, or <c>null</c> when it returned.</summary>
    public Exception? Exception { get; }

    /// <summary>The call's result when it returned (<c>null</c> for an <see cref="Action"/> or when it threw).</summary>
    public object? Result { get; }
}

/// <summary>
/// A breaker's settings: every field of the C ABI's <c>cb_config</c>, named
/// as Polly v8 names the settings that mean the same thing. A property left
/// <c>null</c> keeps the library's default (cb_config_init), so the binding
/// never hard-codes one. Values are checked by the library when the breaker
/// is created: out of range, <see cref="Registry.Create"/> throws
/// <see cref="ArgumentOutOfRangeException"/> with the library's message,
/// which names the field.
/// </summary>
/// <remarks>
/// <para>Durations are whole nanoseconds to the library; a
/// <see cref="TimeSpan"/> gives them in 100 ns ticks.</para>
/// <para>When <see cref="Policy"/> is not set, it follows from what is:
/// <see cref="SamplingDuration"/> or <see cref="SamplingBuckets"/> set means
/// <see cref="TripPolicy.TimeWindow"/>, <see cref="WindowSize"/> means
/// <see cref="TripPolicy.CountWindow"/>, <see cref="FailureRatio"/> or
/// <see cref="MinimumThroughput"/> alone mean <see cref="TripPolicy.TimeWindow"/>
/// (Polly's model), and otherwise the policy is
/// <see cref="TripPolicy.Consecutive"/>. A migrating Polly user who sets
/// FailureRatio, SamplingDuration and MinimumThroughput gets the same
/// breaker.</para>
/// </remarks>
public sealed class CircuitBreakerOptions
{
    private ulong? _breakDurationNs, _halfOpenTimeoutNs, _samplingDurationNs, _slowCallNs, _maxBreakDurationNs;

    /// <summary>Consecutive failures that trip (policy <see cref="TripPolicy.Consecutive"/>); library default 5.</summary>
    public int? FailureThreshold { get; set; }

    /// <summary>How long OPEN rejects before a probe (Polly: BreakDuration); library default 30 s.</summary>
    public TimeSpan? BreakDuration { get => ToTimeSpan(_breakDurationNs); set => _breakDurationNs = ToNs(value, nameof(BreakDuration)); }

    /// <summary>Probes admitted at once in HALF_OPEN; library default 1 (Polly always admits one).</summary>
    public int? HalfOpenMaxCalls { get; set; }

    /// <summary>Probe successes that close the breaker; library default 1.</summary>
    public int? HalfOpenSuccessThreshold { get; set; }

    /// <summary>A probe that has not reported after this long counts as failed (the probe lease); default: the break duration.</summary>
    public TimeSpan? HalfOpenTimeout { get => ToTimeSpan(_halfOpenTimeoutNs); set => _halfOpenTimeoutNs = ToNs(value, nameof(HalfOpenTimeout)); }

    /// <summary>The trip policy; see the remarks for what it is when left unset.</summary>
    public TripPolicy? Policy { get; set; }

    /// <summary>Count window: the outcomes kept; library default 100.</summary>
    public int? WindowSize { get; set; }

    /// <summary>Time window: its length (Polly: SamplingDuration); library default 60 s.</summary>
    public TimeSpan? SamplingDuration { get => ToTimeSpan(_samplingDurationNs); set => _samplingDurationNs = ToNs(value, nameof(SamplingDuration)); }

    /// <summary>Time window: its buckets (Polly always uses 10 for a duration of at least 10 s); library default 10.</summary>
    public int? SamplingBuckets { get; set; }

    /// <summary>No ratio trips before this many outcomes are in the window (Polly: MinimumThroughput); library default 100.</summary>
    public int? MinimumThroughput { get; set; }

    /// <summary>The failure ratio that trips, in (0, 1] (Polly: FailureRatio); library default 0.5.</summary>
    public double? FailureRatio { get; set; }

    /// <summary>A call slower than this counts as slow; <see cref="TimeSpan.Zero"/> (the default) turns slow-call tracking off.</summary>
    public TimeSpan? SlowCallDuration { get => ToTimeSpan(_slowCallNs); set => _slowCallNs = ToNs(value, nameof(SlowCallDuration)); }

    /// <summary>The slow-call ratio that trips, in (0, 1]; library default 1.0.</summary>
    public double? SlowCallRatio { get; set; }

    /// <summary>Each repeated trip multiplies the break duration by this (1..1000); 1 (the default) keeps it fixed.</summary>
    public double? BreakDurationMultiplier { get; set; }

    /// <summary>The cap of backoff and jitter; <see cref="TimeSpan.Zero"/> (the default) = no cap but the library's 366 days.</summary>
    public TimeSpan? MaxBreakDuration { get => ToTimeSpan(_maxBreakDurationNs); set => _maxBreakDurationNs = ToNs(value, nameof(MaxBreakDuration)); }

    /// <summary>Each break duration is scaled by a random factor in [1 - j, 1 + j], j in [0, 1); default 0.</summary>
    public double? BreakDurationJitter { get; set; }

    /// <summary>
    /// Which outcomes of <c>Execute*</c> count as what (Polly: ShouldHandle,
    /// here with three answers). <c>null</c> (the default): an exception is a
    /// <see cref="Verdict.Failure"/>, a result a <see cref="Verdict.Success"/>.
    /// An <see cref="OperationCanceledException"/> raised for the caller's own
    /// cancellation token is <see cref="Verdict.Ignored"/> before this is asked.
    /// If ShouldHandle itself throws or answers a value outside
    /// <see cref="Verdict"/>, the call is reported as a failure (its result
    /// is returned, or its exception rethrown, as without it).
    /// </summary>
    public Func<CallOutcome, Verdict>? ShouldHandle { get; set; }

    // The conformance runner sets durations to the nanosecond (a TimeSpan
    // counts 100 ns ticks); by cb_config field name.
    internal void SetNanoseconds(string field, ulong ns)
    {
        switch (field)
        {
            case "open_duration_ns": _breakDurationNs = ns; break;
            case "half_open_timeout_ns": _halfOpenTimeoutNs = ns; break;
            case "window_duration_ns": _samplingDurationNs = ns; break;
            case "slow_call_ns": _slowCallNs = ns; break;
            case "open_duration_max_ns": _maxBreakDurationNs = ns; break;
            default: throw new ArgumentException($"not a duration field of cb_config: {field}", nameof(field));
        }
    }

    internal TripPolicy EffectivePolicy =>
        Policy ?? (_samplingDurationNs.HasValue || SamplingBuckets.HasValue ? TripPolicy.TimeWindow
                   : WindowSize.HasValue ? TripPolicy.CountWindow
                   : FailureRatio.HasValue || MinimumThroughput.HasValue ? TripPolicy.TimeWindow
                   : TripPolicy.Consecutive);

    /// <summary>A cb_config from the library's defaults with what is set here written over them.</summary>
    internal cb_config ToNative()
    {
        var c = new cb_config();
        try
        {
            if (FailureThreshold is int ft) c.failure_threshold = ToUInt(ft, nameof(FailureThreshold));
            if (_breakDurationNs is ulong bd) c.open_duration_ns = bd;
            if (HalfOpenMaxCalls is int hm) c.half_open_max_calls = ToUInt(hm, nameof(HalfOpenMaxCalls));
            if (HalfOpenSuccessThreshold is int hs) c.half_open_success_threshold = ToUInt(hs, nameof(HalfOpenSuccessThreshold));
            if (_halfOpenTimeoutNs is ulong ht) c.half_open_timeout_ns = ht;
            c.policy = (int)EffectivePolicy;
            if (WindowSize is int ws) c.window_size = ToUInt(ws, nameof(WindowSize));
            if (_samplingDurationNs is ulong sd) c.window_duration_ns = sd;
            if (SamplingBuckets is int sb) c.window_buckets = ToUInt(sb, nameof(SamplingBuckets));
            if (MinimumThroughput is int mt) c.minimum_calls = ToUInt(mt, nameof(MinimumThroughput));
            if (FailureRatio is double fr) c.failure_rate_threshold = fr;
            if (_slowCallNs is ulong sc) c.slow_call_ns = sc;
            if (SlowCallRatio is double sr) c.slow_call_rate_threshold = sr;
            if (BreakDurationMultiplier is double bm) c.open_backoff_multiplier = bm;
            if (_maxBreakDurationNs is ulong mb) c.open_duration_max_ns = mb;
            if (BreakDurationJitter is double bj) c.open_jitter = bj;
            return c;
        }
        catch
        {
            c.Dispose();
            throw;
        }
    }

    /// <summary>The option a cb_config field is set by, for the library's messages.</summary>
    internal static string OptionFor(string message)
    {
        foreach (var (field, option) in FieldNames)
        {
            if (message.Contains(field, StringComparison.Ordinal)) return option;
        }
        return "options";
    }

    // Longest first: "open_duration_max_ns" before "open_duration_ns".
    private static readonly (string Field, string Option)[] FieldNames =
    {
        ("half_open_success_threshold", nameof(HalfOpenSuccessThreshold)),
        ("slow_call_rate_threshold", nameof(SlowCallRatio)),
        ("open_backoff_multiplier", nameof(BreakDurationMultiplier)),
        ("failure_rate_threshold", nameof(FailureRatio)),
        ("open_duration_max_ns", nameof(MaxBreakDuration)),
        ("half_open_timeout_ns", nameof(HalfOpenTimeout)),
        ("half_open_max_calls", nameof(HalfOpenMaxCalls)),
        ("window_duration_ns", nameof(SamplingDuration)),
        ("failure_threshold", nameof(FailureThreshold)),
        ("open_duration_ns", nameof(BreakDuration)),
        ("window_buckets", nameof(SamplingBuckets)),
        ("minimum_calls", nameof(MinimumThroughput)),
        ("slow_call_ns", nameof(SlowCallDuration)),
        ("window_size", nameof(WindowSize)),
        ("open_jitter", nameof(BreakDurationJitter)),
        ("policy", nameof(Policy)),
    };

    private static uint ToUInt(int value, string option) =>
        value >= 0 ? (uint)value
                   : throw new ArgumentOutOfRangeException(option, value, $"{option} must not be negative");

    internal static ulong ToNs(TimeSpan value, string option)
    {
        if (value < TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(option, value, $"{option} must not be negative");
        // 100 ns per tick; TimeSpan.MaxValue (29,227 years) does not fit 64
        // bits of nanoseconds: it is the library's business to refuse what
        // is over its maxima, so saturate rather than wrap.
        ulong ticks = (ulong)value.Ticks;
        return ticks > ulong.MaxValue / 100 ? ulong.MaxValue : ticks * 100;
    }

    private static ulong? ToNs(TimeSpan? value, string option) => value is TimeSpan v ? ToNs(v, option) : null;

    internal static TimeSpan ToTimeSpan(ulong ns) =>
        ns / 100 > (ulong)TimeSpan.MaxValue.Ticks ? TimeSpan.MaxValue : TimeSpan.FromTicks((long)(ns / 100));

    private static TimeSpan? ToTimeSpan(ulong? ns) => ns is ulong v ? ToTimeSpan(v) : null;
}
