using System;
using System.Globalization;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// The library's refusals of a configuration in this binding's words: from
/// the status and cb_last_error_field() (never from the library's message
/// text), the <see cref="CircuitBreakerOptions"/> property and its C# type,
/// with the ranges from the ABI's limit constants.
/// </summary>
internal static class ConfigErrors
{
    /// <summary>The property that sets a cb_config field; null for a field this binding does not know.</summary>
    internal static string? OptionFor(string? field) => ConfigFields.Find(field)?.Option;

    /// <summary>
    /// The exception for a CB_EINVAL of cb_create / cb_get_or_create:
    /// an option out of range (ArgumentOutOfRangeException, ParamName the
    /// property), or the breaker's name (ArgumentException, ParamName "name").
    /// </summary>
    internal static Exception Refused(NativeArgumentException e, CircuitBreakerOptions o, string name)
    {
        if (e.Field == "name") return BadName(name, e);
        string? option = OptionFor(e.Field);
        if (option is null)
            return new ArgumentException($"the library refused these options ({e.Message})", "options", e);
        return new ArgumentOutOfRangeException(option, Describe(option, o));
    }

    /// <summary>A count or duration below zero, refused before the library sees it.</summary>
    internal static ArgumentOutOfRangeException Negative(string option, object value) =>
        new(option, $"{option} must not be negative, got {Show(value)}");

    // "<Option> must be <range>, got <value>", the value as it was set.
    internal static string Describe(string option, CircuitBreakerOptions o) => option switch
    {
        nameof(CircuitBreakerOptions.FailureThreshold) => Count(option, o.FailureThreshold, LbNative.CB_MAX_FAILURE_THRESHOLD),
        nameof(CircuitBreakerOptions.HalfOpenMaxCalls) => Count(option, o.HalfOpenMaxCalls, LbNative.CB_MAX_HALF_OPEN_CALLS),
        nameof(CircuitBreakerOptions.HalfOpenSuccessThreshold) =>
            Count(option, o.HalfOpenSuccessThreshold, LbNative.CB_MAX_HALF_OPEN_SUCCESSES),
        nameof(CircuitBreakerOptions.WindowSize) => Count(option, o.WindowSize, LbNative.CB_MAX_WINDOW_SIZE),
        nameof(CircuitBreakerOptions.SamplingBuckets) => Count(option, o.SamplingBuckets, LbNative.CB_MAX_WINDOW_BUCKETS),
        nameof(CircuitBreakerOptions.MinimumThroughput) => Count(option, o.MinimumThroughput, LbNative.CB_MAX_MINIMUM_CALLS),
        nameof(CircuitBreakerOptions.BreakDuration) =>
            Duration(option, o.BreakDurationNs, LbNative.CB_MIN_OPEN_DURATION_NS, LbNative.CB_MAX_DURATION_NS, null),
        nameof(CircuitBreakerOptions.SamplingDuration) =>
            Duration(option, o.SamplingDurationNs, LbNative.CB_MIN_WINDOW_DURATION_NS, LbNative.CB_MAX_DURATION_NS, null),
        nameof(CircuitBreakerOptions.HalfOpenTimeout) =>
            Duration(option, o.HalfOpenTimeoutNs, 0, LbNative.CB_MAX_DURATION_NS, "the break duration"),
        nameof(CircuitBreakerOptions.SlowCallDuration) =>
            Duration(option, o.SlowCallNs, 0, LbNative.CB_MAX_DURATION_NS, "slow-call tracking off"),
        nameof(CircuitBreakerOptions.MaxBreakDuration) => MaxBreak(o),
        nameof(CircuitBreakerOptions.FailureRatio) => $"{option} must be in (0, 1], got {Show(o.FailureRatio)}",
        nameof(CircuitBreakerOptions.SlowCallRatio) => $"{option} must be in (0, 1], got {Show(o.SlowCallRatio)}",
        nameof(CircuitBreakerOptions.BreakDurationJitter) => $"{option} must be in [0, 1), got {Show(o.BreakDurationJitter)}",
        nameof(CircuitBreakerOptions.BreakDurationMultiplier) =>
            $"{option} must be 1..{Show(LbNative.CB_MAX_BACKOFF_MULTIPLIER)}, got {Show(o.BreakDurationMultiplier)}",
        nameof(CircuitBreakerOptions.Policy) =>
            $"{option} must be TripPolicy.{TripPolicy.Consecutive}, TripPolicy.{TripPolicy.CountWindow} or " +
            $"TripPolicy.{TripPolicy.TimeWindow}, got {(o.Policy is TripPolicy p ? ((int)p).ToString(CultureInfo.InvariantCulture) : "(unset)")}",
        _ => $"{option} is out of range",
    };

    private static string Count(string option, int? value, uint max) =>
        $"{option} must be 1..{max.ToString(CultureInfo.InvariantCulture)}, got {Show(value)}";

    private static string Duration(string option, ulong? ns, ulong min, ulong max, string? zeroMeans)
    {
        string got = ns is ulong v ? Show(CircuitBreakerOptions.ToTimeSpan(v)) : "(unset)";
        if (ns is ulong low && low < min) return $"{option} must be at least {Friendly(min)}, got {got}";
        return zeroMeans is null
            ? $"{option} must be at most {Friendly(max)}, got {got}"
            : $"{option} must be at most {Friendly(max)} (TimeSpan.Zero: {zeroMeans}), got {got}";
    }

    private static string MaxBreak(CircuitBreakerOptions o)
    {
        const string option = nameof(CircuitBreakerOptions.MaxBreakDuration);
        string got = o.MaxBreakDurationNs is ulong v ? Show(CircuitBreakerOptions.ToTimeSpan(v)) : "(unset)";
        ulong breakNs = o.BreakDurationNs ?? DefaultBreakNs();
        string from = $"BreakDuration ({Show(CircuitBreakerOptions.ToTimeSpan(breakNs))})";
        return $"{option} must be TimeSpan.Zero (no cap) or {from}..{Friendly(LbNative.CB_MAX_DURATION_NS)}, got {got}";
    }

    private static ulong DefaultBreakNs()
    {
        using var defaults = new cb_config();
        return defaults.open_duration_ns;
    }

    /// <summary>The breaker's name refused by the library (CB_EINVAL, field "name").</summary>
    internal static ArgumentException BadName(string name, Exception inner) =>
        name.Length == 0
            ? new ArgumentException("a breaker's name must not be empty", nameof(name), inner)
            : new ArgumentException(
                $"a breaker's name must be at most {LbNative.CB_MAX_NAME_BYTES} bytes of UTF-8, " +
                $"got {System.Text.Encoding.UTF8.GetByteCount(name)}", nameof(name), inner);

    /// <summary>A whole number of days, hours, ... down to ns: how a limit reads best.</summary>
    internal static string Friendly(ulong ns)
    {
        (ulong Unit, string Name)[] units =
        {
            (86_400_000_000_000, " days"), (3_600_000_000_000, " h"), (60_000_000_000, " min"),
            (1_000_000_000, " s"), (1_000_000, " ms"), (1_000, " µs"),
        };
        foreach (var (unit, unitName) in units)
        {
            if (ns != 0 && ns % unit == 0) return (ns / unit).ToString(CultureInfo.InvariantCulture) + unitName;
        }
        return ns.ToString(CultureInfo.InvariantCulture) + " ns";
    }

    internal static string Show(object? value) => value switch
    {
        null => "(unset)",
        double d => d.ToString("R", CultureInfo.InvariantCulture),
        TimeSpan t => t.ToString("c", CultureInfo.InvariantCulture),
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "",
    };
}

/// <summary>
/// The library's refusals of <see cref="RegistryOptions"/> in this binding's
/// words, from cb_last_error_field() and the options as set.
/// </summary>
internal static class RegistryOptionErrors
{
    internal static Exception Refused(NativeArgumentException e, RegistryOptions? o)
    {
        // A capacity or clock in range that the library names is one a
        // registry file disagrees with.
        bool fileDisagrees = o?.Path is not null &&
            ((e.Field == "capacity" && o.Capacity is int n && n >= 0 && n <= LbNative.CB_MAX_CAPACITY) ||
             (e.Field == "clock" && (o.Clock is null || Enum.IsDefined(o.Clock.Value))));
        switch (fileDisagrees ? "file " + e.Field : e.Field)
        {
            case "file capacity":
                return new ArgumentException(
                    $"the registry file '{o!.Path}' has another Capacity than {o.Capacity} (leave Capacity unset to take the file's)",
                    nameof(RegistryOptions.Capacity), e);
            case "file clock":
                return new ArgumentException(
                    $"the registry file '{o!.Path}' has another Clock than RegistryClock.{o.Clock ?? RegistryClock.Monotonic}",
                    nameof(RegistryOptions.Clock), e);
            case "capacity":
                return new ArgumentOutOfRangeException(nameof(RegistryOptions.Capacity),
                    $"Capacity must be at most {LbNative.CB_MAX_CAPACITY}, got {ConfigErrors.Show(o?.Capacity)}");
            case "event_capacity":
                return new ArgumentOutOfRangeException(nameof(RegistryOptions.EventCapacity),
                    $"EventCapacity must be at most {LbNative.CB_MAX_EVENT_CAPACITY}, got {ConfigErrors.Show(o?.EventCapacity)}");
            case "clock":
                return new ArgumentOutOfRangeException(nameof(RegistryOptions.Clock),
                    $"Clock must be RegistryClock.{RegistryClock.Monotonic} or RegistryClock.{RegistryClock.Manual}, " +
                    $"got {(o?.Clock is RegistryClock c ? ((int)c).ToString(CultureInfo.InvariantCulture) : "(unset)")}");
            case "mode":
                return new ArgumentOutOfRangeException(nameof(RegistryOptions.Mode),
                    $"Mode must be permission bits (UserRead .. OtherExecute, at most octal 777), " +
                    $"got octal {Convert.ToString((int)(o?.Mode ?? 0), 8)}");
            case "flags":
                // Unknown bits cannot come from here: what is left is a flag
                // that needs Create.
                string flag = o?.Exclusive == true ? nameof(RegistryOptions.Exclusive) : nameof(RegistryOptions.AnyOwner);
                return new ArgumentException($"{flag} needs Create as well", flag, e);
            default:
                return new ArgumentException($"the library refused these registry options ({e.Message})", "options", e);
        }
    }
}
