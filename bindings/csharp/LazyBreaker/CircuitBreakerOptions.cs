using System;
using System.Collections.Concurrent;
using System.Threading;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>How a breaker decides to trip (cb_policy_t).</summary>
public enum TripPolicy
{
    /// <summary><see cref="CircuitBreakerOptions.FailureThreshold"/> failures in a row (the library's default).</summary>
    Consecutive = (int)cb_policy_t.CB_POLICY_CONSECUTIVE,
    /// <summary>The failure ratio over the last <see cref="CircuitBreakerOptions.WindowSize"/> outcomes.</summary>
    CountWindow = (int)cb_policy_t.CB_POLICY_COUNT_WINDOW,
    /// <summary>The failure ratio over the last <see cref="CircuitBreakerOptions.SamplingDuration"/> (Polly's model).</summary>
    TimeWindow = (int)cb_policy_t.CB_POLICY_TIME_WINDOW,
}

/// <summary>How an outcome counts: the three outcomes of the C ABI (cb_outcome_t).</summary>
public enum Verdict
{
    /// <summary>The call succeeded.</summary>
    Success = (int)cb_outcome_t.CB_SUCCESS,
    /// <summary>The call failed and counts against the dependency.</summary>
    Failure = (int)cb_outcome_t.CB_FAILURE,
    /// <summary>Neither (a cancellation, a client error): counted nowhere.</summary>
    Ignored = (int)cb_outcome_t.CB_IGNORED,
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
/// never hard-codes one, and two processes of different languages with equal
/// settings get equal breakers. Values are checked by the library when the
/// breaker is created: out of range, <see cref="Registry.Create"/> throws
/// <see cref="ArgumentOutOfRangeException"/> whose ParamName is the property
/// and whose message says the range in this type's terms
/// (<c>BreakDuration must be at least 1 µs, got 00:00:00</c>).
/// </summary>
/// <remarks>
/// <para>Durations are whole nanoseconds to the library; a
/// <see cref="TimeSpan"/> gives them in 100 ns ticks.</para>
/// <para>Which options a policy reads is the library's answer
/// (cb_policy_reads; docs/policies.md, "Which settings a policy reads").
/// With <see cref="Policy"/> set, an option it never reads (or reads only
/// with <see cref="SlowCallDuration"/> on, which is off) is an
/// <see cref="ArgumentException"/> naming both. Without it, the first
/// option set that some policy ignores chooses the first of
/// <see cref="TripPolicy.Consecutive"/>, <see cref="TripPolicy.CountWindow"/>
/// and <see cref="TripPolicy.TimeWindow"/> that reads it, and every option
/// set must be one that policy reads (docs/policies.md). As Polly samples a
/// duration, <see cref="FailureRatio"/> or <see cref="MinimumThroughput"/>
/// given without a window option and without <see cref="Policy"/> count as
/// setting <see cref="SamplingDuration"/> (at the library's default), so
/// they give the time window.</para>
/// <para>Unset options are otherwise the library's defaults, not Polly's: a Polly user
/// who sets only some of Polly's four options starts from
/// <see cref="PollyDefaults"/> (docs/csharp.md lists the differences).</para>
/// </remarks>
public sealed class CircuitBreakerOptions
{
    private ulong? _breakDurationNs, _halfOpenTimeoutNs, _samplingDurationNs, _slowCallNs, _maxBreakDurationNs;

    // Polly v8's CircuitBreakerStrategyOptions.SamplingDuration default.
    private const ulong PollySamplingDurationNs = 30_000_000_000;

    /// <summary>
    /// Polly v8's defaults (CircuitBreakerStrategyOptions), set explicitly:
    /// <see cref="Policy"/> TimeWindow, <see cref="FailureRatio"/> 0.1,
    /// <see cref="SamplingDuration"/> 30 s, <see cref="MinimumThroughput"/> 100,
    /// <see cref="BreakDuration"/> 5 s. A new instance each time; set more on it
    /// as on any options. The library's own defaults (what a new
    /// <see cref="CircuitBreakerOptions"/> has) differ: 0.5, 60 s, 100, 30 s,
    /// and the consecutive policy unless a window option is set.
    /// </summary>
    public static CircuitBreakerOptions PollyDefaults => new()
    {
        Policy = TripPolicy.TimeWindow,
        FailureRatio = 0.1,
        _samplingDurationNs = PollySamplingDurationNs,
        MinimumThroughput = 100,
        BreakDuration = TimeSpan.FromSeconds(5),
    };

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

    /// <summary>Time window: its length (Polly: SamplingDuration); library default 60 s (Polly's: 30 s).</summary>
    public TimeSpan? SamplingDuration { get => ToTimeSpan(_samplingDurationNs); set => _samplingDurationNs = ToNs(value, nameof(SamplingDuration)); }

    /// <summary>Time window: its buckets (Polly always uses 10 for a duration of at least 10 s); library default 10.</summary>
    public int? SamplingBuckets { get; set; }

    /// <summary>No ratio trips before this many outcomes are in the window (Polly: MinimumThroughput); library default 100.</summary>
    public int? MinimumThroughput { get; set; }

    /// <summary>The failure ratio that trips, in (0, 1] (Polly: FailureRatio); library default 0.5 (Polly's: 0.1).</summary>
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

    // cb_config keeps a field its policy does not read as given: the options
    // read back from a breaker that C made so must find it again, and that
    // is no mistake of this process's to report.
    internal bool AcceptIgnoredOptions { get; set; }

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

    internal ulong? BreakDurationNs => _breakDurationNs;
    internal ulong? HalfOpenTimeoutNs => _halfOpenTimeoutNs;
    internal ulong? SamplingDurationNs => _samplingDurationNs;
    internal ulong? SlowCallNs => _slowCallNs;
    internal ulong? MaxBreakDurationNs => _maxBreakDurationNs;

    internal TripPolicy EffectivePolicy => Policy ?? InferPolicy(PolicyFieldsSet(out _), SlowCallsOn).Policy;

    private bool SlowCallsOn => (_slowCallNs ?? NativeConfig.Defaults.slow_call_ns) != 0;

    // Polly samples a duration: a ratio or a throughput given without a
    // window and without a policy count as setting SamplingDuration (at the
    // library's default, as every language's), so the rule below gives the
    // time window. The option that counts so, or null when none does.
    private string? PollyWindowFrom() =>
        Policy.HasValue || WindowSize.HasValue || _samplingDurationNs.HasValue || SamplingBuckets.HasValue ? null
        : MinimumThroughput.HasValue ? nameof(MinimumThroughput)
        : FailureRatio.HasValue ? nameof(FailureRatio)
        : null;

    // The fields set (a bit per ConfigField.Index) that some policy does
    // not read: only they choose or refuse a policy.
    private uint PolicyFieldsSet(out string? samplingFrom)
    {
        uint set = 0;
        foreach (ConfigField f in ConfigFields.All)
        {
            if (f.IsSet(this) && !PolicyReads.ReadByEvery(f)) set |= 1u << f.Index;
        }
        samplingFrom = PollyWindowFrom();
        if (samplingFrom != null) set |= 1u << ConfigFields.WindowDuration.Index;
        return set;
    }

    private static bool IsIn(uint set, ConfigField f) => (set & (1u << f.Index)) != 0;

    // Without a policy: the first that reads every field set; else the one
    // the first field set chooses alone, and the first field it ignores
    // (none when slow calls let it read them all). The library's answers
    // decide (docs/policies.md, "Which settings a policy reads");
    // read-with-slow-calls does not count as read when choosing.
    private static (TripPolicy Policy, ConfigField? Chooser, ConfigField? Ignored) InferPolicy(uint set, bool slowCalls)
    {
        foreach (TripPolicy p in PolicyReads.Policies)
        {
            if (FirstNotRead(p, set, false) is null) return (p, null, null);
        }
        ConfigField? chooser = null;
        foreach (ConfigField f in ConfigFields.All)
        {
            if (IsIn(set, f))
            {
                chooser = f;
                break;
            }
        }
        TripPolicy chosen = TripPolicy.Consecutive;
        foreach (TripPolicy p in PolicyReads.Policies)
        {
            if (PolicyReads.Answer(p, chooser!) == PolicyReads.Read)
            {
                chosen = p;
                break;
            }
        }
        return (chosen, chooser, FirstNotRead(chosen, set, slowCalls));
    }

    private static ConfigField? FirstNotRead(TripPolicy policy, uint set, bool slowCalls)
    {
        foreach (ConfigField f in ConfigFields.All)
        {
            int answer = PolicyReads.Answer(policy, f);
            bool read = answer == PolicyReads.Read || (slowCalls && answer == PolicyReads.ReadWithSlowCalls);
            if (IsIn(set, f) && !read) return f;
        }
        return null;
    }

    /// <summary>
    /// The policy the breaker gets: the one set, or the one inferred. A
    /// field set that it does not read is an <see cref="ArgumentException"/>
    /// naming the option and the policy (a setting that would change
    /// nothing is a mistake), unless the options were read back from a
    /// breaker made so in C.
    /// </summary>
    private TripPolicy CheckedPolicy()
    {
        if (Policy is TripPolicy chosen)
        {
            // A policy outside TripPolicy reads nothing known: the library
            // refuses it, and that is the error to report.
            if (!AcceptIgnoredOptions && Enum.IsDefined(chosen)) RefuseUnread(chosen);
            return chosen;
        }
        uint set = PolicyFieldsSet(out string? samplingFrom);
        var (inferred, chooser, ignored) = InferPolicy(set, SlowCallsOn);
        if (ignored is null || AcceptIgnoredOptions) return inferred;
        string ignoredOption = Spelling(ignored, samplingFrom), chooserOption = Spelling(chooser!, samplingFrom);
        throw new ArgumentException(
            $"{ignoredOption} is ignored by TripPolicy.{inferred}, which {chooserOption} chooses: " +
            "set Policy, or leave one of them unset", ignoredOption);
    }

    // The option a field set stands for: SamplingDuration counted as set
    // for Polly's sake is the option that set it.
    private static string Spelling(ConfigField f, string? samplingFrom) =>
        f == ConfigFields.WindowDuration && samplingFrom != null ? samplingFrom : f.Option;

    private void RefuseUnread(TripPolicy policy)
    {
        bool slowCalls = SlowCallsOn;
        foreach (ConfigField f in ConfigFields.All)
        {
            if (!f.IsSet(this) || PolicyReads.Reads(policy, f, slowCalls)) continue;
            string without = PolicyReads.Answer(policy, f) == PolicyReads.ReadWithSlowCalls
                ? $" without {nameof(SlowCallDuration)}" : "";
            throw new ArgumentException(
                $"{f.Option} is ignored by Policy = TripPolicy.{policy}{without}: it is read by {ReadersOf(f)} only; " +
                $"set Policy to the policy you mean, or leave {f.Option} unset",
                f.Option);
        }
    }

    // "TripPolicy.CountWindow and TripPolicy.TimeWindow (and by
    // TripPolicy.Consecutive for the slow-call rate, with SlowCallDuration on)",
    // from the library's answers.
    private static string ReadersOf(ConfigField f)
    {
        string read = "", withSlowCalls = "";
        foreach (TripPolicy p in PolicyReads.Policies)
        {
            int answer = PolicyReads.Answer(p, f);
            if (answer == PolicyReads.Read) read += (read.Length == 0 ? "" : " and ") + $"TripPolicy.{p}";
            else if (answer == PolicyReads.ReadWithSlowCalls)
                withSlowCalls += (withSlowCalls.Length == 0 ? "" : " and ") + $"TripPolicy.{p}";
        }
        if (withSlowCalls.Length == 0) return read;
        string slowCallRate = $"{withSlowCalls} for the slow-call rate, with {nameof(SlowCallDuration)} on";
        return read.Length == 0 ? slowCallRate : $"{read} (and by {slowCallRate})";
    }

    /// <summary>
    /// The configuration these options stand for: the library's defaults
    /// with what is set here written over them, built and checked once per
    /// set of values and interned (by this instance, and process-wide for
    /// equal options of other instances), so a create that reuses options
    /// costs no rebuilding and no crossing but the create's own.
    /// </summary>
    /// <exception cref="ArgumentException">An option the policy ignores is set.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A count is negative.</exception>
    internal NativeConfig ToConfig()
    {
        var values = new Values(this);
        Interned? mine = Volatile.Read(ref _interned);
        if (mine != null && mine.For.Equals(values)) return mine.Config;
        if (!s_interned.TryGetValue(values, out Interned? shared))
        {
            shared = new Interned(values, Build(CheckedPolicy()));
            // Bounded: beyond it, configurations are built per instance.
            if (s_interned.Count < InternedMax) s_interned.TryAdd(values, shared);
        }
        Volatile.Write(ref _interned, shared);
        return shared.Config;
    }

    private NativeConfig Build(TripPolicy policy)
    {
        NativeConfig c = NativeConfig.Defaults;
        if (FailureThreshold is int ft) c.failure_threshold = ToUInt(ft, nameof(FailureThreshold));
        if (_breakDurationNs is ulong bd) c.open_duration_ns = bd;
        if (HalfOpenMaxCalls is int hm) c.half_open_max_calls = ToUInt(hm, nameof(HalfOpenMaxCalls));
        if (HalfOpenSuccessThreshold is int hs) c.half_open_success_threshold = ToUInt(hs, nameof(HalfOpenSuccessThreshold));
        if (_halfOpenTimeoutNs is ulong ht) c.half_open_timeout_ns = ht;
        c.policy = (int)policy;
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

    private const int InternedMax = 1024;
    private static readonly ConcurrentDictionary<Values, Interned> s_interned = new();
    private Interned? _interned;

    private sealed class Interned
    {
        internal Interned(Values values, NativeConfig config)
        {
            For = values;
            Config = config;
        }

        internal readonly Values For;
        internal readonly NativeConfig Config;
    }

    // Every value the configuration is made from (ShouldHandle is not one).
    private readonly record struct Values(
        int? FailureThreshold, ulong? BreakDurationNs, int? HalfOpenMaxCalls, int? HalfOpenSuccessThreshold,
        ulong? HalfOpenTimeoutNs, TripPolicy? Policy, int? WindowSize, ulong? SamplingDurationNs, int? SamplingBuckets,
        int? MinimumThroughput, double? FailureRatio, ulong? SlowCallNs, double? SlowCallRatio,
        double? BreakDurationMultiplier, ulong? MaxBreakDurationNs, double? BreakDurationJitter, bool AcceptIgnored)
    {
        internal Values(CircuitBreakerOptions o) : this(
            o.FailureThreshold, o._breakDurationNs, o.HalfOpenMaxCalls, o.HalfOpenSuccessThreshold, o._halfOpenTimeoutNs,
            o.Policy, o.WindowSize, o._samplingDurationNs, o.SamplingBuckets, o.MinimumThroughput, o.FailureRatio,
            o._slowCallNs, o.SlowCallRatio, o.BreakDurationMultiplier, o._maxBreakDurationNs, o.BreakDurationJitter,
            o.AcceptIgnoredOptions)
        {
        }
    }

    /// <summary>
    /// The options a breaker's configuration (cb_config_get) reads as: every
    /// option set, the policy explicitly; an option the policy does not read
    /// is left unset when it holds the library's default (so the options can
    /// be changed and used again), and kept otherwise.
    /// </summary>
    internal static CircuitBreakerOptions FromNative(cb_config c, Func<CallOutcome, Verdict>? shouldHandle)
    {
        var o = new CircuitBreakerOptions
        {
            FailureThreshold = (int)c.failure_threshold,
            HalfOpenMaxCalls = (int)c.half_open_max_calls,
            HalfOpenSuccessThreshold = (int)c.half_open_success_threshold,
            Policy = (TripPolicy)c.policy,
            WindowSize = (int)c.window_size,
            SamplingBuckets = (int)c.window_buckets,
            MinimumThroughput = (int)c.minimum_calls,
            FailureRatio = c.failure_rate_threshold,
            SlowCallRatio = c.slow_call_rate_threshold,
            BreakDurationMultiplier = c.open_backoff_multiplier,
            BreakDurationJitter = c.open_jitter,
            ShouldHandle = shouldHandle,
            _breakDurationNs = c.open_duration_ns,
            _halfOpenTimeoutNs = c.half_open_timeout_ns,
            _samplingDurationNs = c.window_duration_ns,
            _slowCallNs = c.slow_call_ns,
            _maxBreakDurationNs = c.open_duration_max_ns,
        };
        TripPolicy policy = (TripPolicy)c.policy;
        if (!Enum.IsDefined(policy)) return o;
        using var defaults = new cb_config();
        bool slowCalls = c.slow_call_ns != 0;
        foreach (ConfigField f in ConfigFields.All)
        {
            if (PolicyReads.Reads(policy, f, slowCalls)) continue;
            if (!o.UnsetIfDefault(f, c, defaults)) o.AcceptIgnoredOptions = true; // made so in C: keep it as it is
        }
        return o;
    }

    // Unsets the option of field f when c holds the library's default there.
    private bool UnsetIfDefault(ConfigField f, cb_config c, cb_config defaults)
    {
        switch (f.Name)
        {
            case "failure_threshold" when c.failure_threshold == defaults.failure_threshold: FailureThreshold = null; return true;
            case "open_duration_ns" when c.open_duration_ns == defaults.open_duration_ns: _breakDurationNs = null; return true;
            case "half_open_max_calls" when c.half_open_max_calls == defaults.half_open_max_calls: HalfOpenMaxCalls = null; return true;
            case "half_open_success_threshold" when c.half_open_success_threshold == defaults.half_open_success_threshold:
                HalfOpenSuccessThreshold = null;
                return true;
            case "half_open_timeout_ns" when c.half_open_timeout_ns == defaults.half_open_timeout_ns: _halfOpenTimeoutNs = null; return true;
            case "window_size" when c.window_size == defaults.window_size: WindowSize = null; return true;
            case "window_duration_ns" when c.window_duration_ns == defaults.window_duration_ns: _samplingDurationNs = null; return true;
            case "window_buckets" when c.window_buckets == defaults.window_buckets: SamplingBuckets = null; return true;
            case "minimum_calls" when c.minimum_calls == defaults.minimum_calls: MinimumThroughput = null; return true;
            case "failure_rate_threshold" when c.failure_rate_threshold.Equals(defaults.failure_rate_threshold):
                FailureRatio = null;
                return true;
            case "slow_call_ns" when c.slow_call_ns == defaults.slow_call_ns: _slowCallNs = null; return true;
            case "slow_call_rate_threshold" when c.slow_call_rate_threshold.Equals(defaults.slow_call_rate_threshold):
                SlowCallRatio = null;
                return true;
            case "open_backoff_multiplier" when c.open_backoff_multiplier.Equals(defaults.open_backoff_multiplier):
                BreakDurationMultiplier = null;
                return true;
            case "open_duration_max_ns" when c.open_duration_max_ns == defaults.open_duration_max_ns: _maxBreakDurationNs = null; return true;
            case "open_jitter" when c.open_jitter.Equals(defaults.open_jitter): BreakDurationJitter = null; return true;
            default: return false; // not the default, or the policy itself: kept
        }
    }

    private static uint ToUInt(int value, string option) =>
        value >= 0 ? (uint)value : throw ConfigErrors.Negative(option, value);

    internal static ulong ToNs(TimeSpan value, string option)
    {
        if (value < TimeSpan.Zero) throw ConfigErrors.Negative(option, value);
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
