using System;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// A cb_config field as <see cref="CircuitBreakerOptions"/> sets it: its C
/// name (cb_last_error_field, cb_policy_reads), the property, and whether
/// the property is set.
/// </summary>
internal sealed class ConfigField
{
    private readonly Func<CircuitBreakerOptions, bool> _isSet;

    internal ConfigField(int index, string name, string option, Func<CircuitBreakerOptions, bool> isSet)
    {
        Index = index;
        Name = name;
        Option = option;
        _isSet = isSet;
    }

    /// <summary>The field's place in CB_CONFIG_FIELDS (and in cb_config).</summary>
    internal int Index { get; }

    internal string Name { get; }

    internal string Option { get; }

    internal bool IsSet(CircuitBreakerOptions o) => _isSet(o);
}

/// <summary>Every cb_config field, in CB_CONFIG_FIELDS order, as this binding's options name it.</summary>
internal static class ConfigFields
{
    internal static readonly ConfigField[] All = Make(
        ("failure_threshold", nameof(CircuitBreakerOptions.FailureThreshold), o => o.FailureThreshold.HasValue),
        ("open_duration_ns", nameof(CircuitBreakerOptions.BreakDuration), o => o.BreakDurationNs.HasValue),
        ("half_open_max_calls", nameof(CircuitBreakerOptions.HalfOpenMaxCalls), o => o.HalfOpenMaxCalls.HasValue),
        ("half_open_success_threshold", nameof(CircuitBreakerOptions.HalfOpenSuccessThreshold),
         o => o.HalfOpenSuccessThreshold.HasValue),
        ("half_open_timeout_ns", nameof(CircuitBreakerOptions.HalfOpenTimeout), o => o.HalfOpenTimeoutNs.HasValue),
        ("policy", nameof(CircuitBreakerOptions.Policy), o => o.Policy.HasValue),
        ("window_size", nameof(CircuitBreakerOptions.WindowSize), o => o.WindowSize.HasValue),
        ("window_duration_ns", nameof(CircuitBreakerOptions.SamplingDuration), o => o.SamplingDurationNs.HasValue),
        ("window_buckets", nameof(CircuitBreakerOptions.SamplingBuckets), o => o.SamplingBuckets.HasValue),
        ("minimum_calls", nameof(CircuitBreakerOptions.MinimumThroughput), o => o.MinimumThroughput.HasValue),
        ("failure_rate_threshold", nameof(CircuitBreakerOptions.FailureRatio), o => o.FailureRatio.HasValue),
        ("slow_call_ns", nameof(CircuitBreakerOptions.SlowCallDuration), o => o.SlowCallNs.HasValue),
        ("slow_call_rate_threshold", nameof(CircuitBreakerOptions.SlowCallRatio), o => o.SlowCallRatio.HasValue),
        ("open_backoff_multiplier", nameof(CircuitBreakerOptions.BreakDurationMultiplier),
         o => o.BreakDurationMultiplier.HasValue),
        ("open_duration_max_ns", nameof(CircuitBreakerOptions.MaxBreakDuration), o => o.MaxBreakDurationNs.HasValue),
        ("open_jitter", nameof(CircuitBreakerOptions.BreakDurationJitter), o => o.BreakDurationJitter.HasValue));

    /// <summary>window_duration_ns, which a ratio or throughput given alone counts as setting, as Polly samples a duration.</summary>
    internal static readonly ConfigField WindowDuration = Named("window_duration_ns");

    /// <summary>The field named <paramref name="name"/> (a cb_config field's C name), or null.</summary>
    internal static ConfigField? Find(string? name)
    {
        foreach (ConfigField f in All)
        {
            if (f.Name == name) return f;
        }
        return null;
    }

    private static ConfigField Named(string name) =>
        Find(name) ?? throw new InvalidOperationException($"cb_config has no field {name} in this binding's map");

    private static ConfigField[] Make(params (string Name, string Option, Func<CircuitBreakerOptions, bool> IsSet)[] fields)
    {
        var all = new ConfigField[fields.Length];
        for (int i = 0; i < fields.Length; i++) all[i] = new ConfigField(i, fields[i].Name, fields[i].Option, fields[i].IsSet);
        return all;
    }
}

/// <summary>
/// How each policy reads each field: the library's answers
/// (cb_policy_reads, lists.h's CB_POLICY_READS), asked once per process
/// for every policy and field, never written here.
/// </summary>
internal static class PolicyReads
{
    internal const int Ignored = LbNative.CB_FIELD_IGNORED;
    internal const int Read = LbNative.CB_FIELD_READ;
    internal const int ReadWithSlowCalls = LbNative.CB_FIELD_READ_WITH_SLOW_CALLS;

    /// <summary>The policies in the order the inference tries them.</summary>
    internal static readonly TripPolicy[] Policies = { TripPolicy.Consecutive, TripPolicy.CountWindow, TripPolicy.TimeWindow };

    private static readonly int[] s_answers = AskTheLibrary();

    /// <summary>CB_FIELD_READ, CB_FIELD_IGNORED or CB_FIELD_READ_WITH_SLOW_CALLS.</summary>
    internal static int Answer(TripPolicy policy, ConfigField field) => s_answers[(int)policy * ConfigFields.All.Length + field.Index];

    /// <summary>Whether <paramref name="policy"/> reads the field with slow-call tracking on or off.</summary>
    internal static bool Reads(TripPolicy policy, ConfigField field, bool slowCalls)
    {
        int answer = Answer(policy, field);
        return answer == Read || (answer == ReadWithSlowCalls && slowCalls);
    }

    /// <summary>Whether every policy answers CB_FIELD_READ: such a field never chooses nor refuses a policy.</summary>
    internal static bool ReadByEvery(ConfigField field)
    {
        foreach (TripPolicy p in Policies)
        {
            if (Answer(p, field) != Read) return false;
        }
        return true;
    }

    private static int[] AskTheLibrary()
    {
        var answers = new int[Policies.Length * ConfigFields.All.Length];
        foreach (TripPolicy p in Policies)
        {
            foreach (ConfigField f in ConfigFields.All)
                answers[(int)p * ConfigFields.All.Length + f.Index] = LbNative.cb_policy_reads((int)p, f.Name);
        }
        return answers;
    }
}
