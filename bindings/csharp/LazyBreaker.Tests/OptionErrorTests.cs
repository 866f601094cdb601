using System;
using System.IO;
using LazyBreaker.Native;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// Every kind of bad argument says what is wrong in C#'s words (the option's
/// property name and type), from the library's status and
/// cb_last_error_field: counts, durations, ratios, the policy, names,
/// registry options, the clock, Trip, and GetOrCreate's differing option.
/// </summary>
public sealed class OptionErrorTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("lazybreaker-csharp-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static ArgumentOutOfRangeException OutOfRange(CircuitBreakerOptions o)
    {
        using var registry = Registry.WithManualClock();
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => registry.Create("bad", o));
        Assert.False(registry.TryGet("bad", out _)); // nothing was created
        return e;
    }

    private static string Text(ArgumentException e) => e.Message.Replace($" (Parameter '{e.ParamName}')", "");

    [Fact]
    public void A_count_out_of_range_names_the_option_and_its_range()
    {
        var e = OutOfRange(new CircuitBreakerOptions { MinimumThroughput = 0 });
        Assert.Equal(nameof(CircuitBreakerOptions.MinimumThroughput), e.ParamName);
        Assert.Equal("MinimumThroughput must be 1..1000000000, got 0", Text(e));
        e = OutOfRange(new CircuitBreakerOptions { HalfOpenSuccessThreshold = 256 });
        Assert.Equal("HalfOpenSuccessThreshold must be 1..255, got 256", Text(e));
    }

    [Fact]
    public void A_negative_count_is_refused_before_the_library_in_the_same_words()
    {
        var e = OutOfRange(new CircuitBreakerOptions { WindowSize = -1 });
        Assert.Equal(nameof(CircuitBreakerOptions.WindowSize), e.ParamName);
        Assert.Equal("WindowSize must not be negative, got -1", Text(e));
    }

    [Fact]
    public void A_duration_out_of_range_speaks_TimeSpan()
    {
        var e = OutOfRange(new CircuitBreakerOptions { BreakDuration = TimeSpan.Zero });
        Assert.Equal(nameof(CircuitBreakerOptions.BreakDuration), e.ParamName);
        Assert.Equal("BreakDuration must be at least 1 µs, got 00:00:00", Text(e));

        e = OutOfRange(new CircuitBreakerOptions { SamplingDuration = TimeSpan.FromDays(400) });
        Assert.Equal("SamplingDuration must be at most 366 days, got 400.00:00:00", Text(e));

        e = OutOfRange(new CircuitBreakerOptions { SamplingDuration = TimeSpan.FromMilliseconds(0.5) });
        Assert.Equal("SamplingDuration must be at least 1 ms, got 00:00:00.0005000", Text(e));

        e = OutOfRange(new CircuitBreakerOptions { HalfOpenTimeout = TimeSpan.FromDays(367) });
        Assert.Equal("HalfOpenTimeout must be at most 366 days (TimeSpan.Zero: the break duration), got 367.00:00:00", Text(e));
    }

    [Fact]
    public void A_cap_under_the_break_duration_names_both()
    {
        var e = OutOfRange(new CircuitBreakerOptions
        {
            BreakDuration = TimeSpan.FromSeconds(10), MaxBreakDuration = TimeSpan.FromSeconds(5),
        });
        Assert.Equal(nameof(CircuitBreakerOptions.MaxBreakDuration), e.ParamName);
        Assert.Equal("MaxBreakDuration must be TimeSpan.Zero (no cap) or BreakDuration (00:00:10)..366 days, got 00:00:05", Text(e));
        e = OutOfRange(new CircuitBreakerOptions { MaxBreakDuration = TimeSpan.FromSeconds(5) });
        Assert.Equal("MaxBreakDuration must be TimeSpan.Zero (no cap) or BreakDuration (00:00:30)..366 days, got 00:00:05", Text(e));
    }

    [Fact]
    public void A_ratio_or_factor_out_of_range_says_its_interval()
    {
        Assert.Equal("SlowCallRatio must be in (0, 1], got 0", Text(OutOfRange(new CircuitBreakerOptions { SlowCallRatio = 0 })));
        Assert.Equal("BreakDurationJitter must be in [0, 1), got 1", Text(OutOfRange(new CircuitBreakerOptions { BreakDurationJitter = 1 })));
        Assert.Equal("BreakDurationMultiplier must be 1..1000, got 0.5",
                     Text(OutOfRange(new CircuitBreakerOptions { BreakDurationMultiplier = 0.5 })));
        Assert.Equal("FailureRatio must be in (0, 1], got NaN",
                     Text(OutOfRange(new CircuitBreakerOptions { FailureRatio = double.NaN })));
    }

    [Fact]
    public void A_policy_outside_TripPolicy_is_ArgumentOutOfRangeException()
    {
        var e = OutOfRange(new CircuitBreakerOptions { Policy = (TripPolicy)7 });
        Assert.Equal(nameof(CircuitBreakerOptions.Policy), e.ParamName);
        Assert.Equal("Policy must be TripPolicy.Consecutive, TripPolicy.CountWindow or TripPolicy.TimeWindow, got 7", Text(e));
        // With an option beside it, still the policy's error (an unknown policy is the library's to refuse).
        e = OutOfRange(new CircuitBreakerOptions { Policy = (TripPolicy)7, FailureThreshold = 3 });
        Assert.Equal(nameof(CircuitBreakerOptions.Policy), e.ParamName);
    }

    [Fact]
    public void A_bad_name_is_ArgumentException_about_the_name()
    {
        using var registry = Registry.WithManualClock();
        var empty = Assert.Throws<ArgumentException>(() => registry.Create(""));
        Assert.Equal("name", empty.ParamName);
        Assert.Equal("a breaker's name must not be empty", Text(empty));
        var tooLong = Assert.Throws<ArgumentException>(() => registry.GetOrCreate(new string('é', 128)));
        Assert.Equal("a breaker's name must be at most 255 bytes of UTF-8, got 256", Text(tooLong));
        Assert.Empty(registry.Breakers);
    }

    [Fact]
    public void Registry_options_out_of_range_name_the_RegistryOptions_property()
    {
        var capacity = Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions { Capacity = int.MaxValue }));
        Assert.Equal(nameof(RegistryOptions.Capacity), capacity.ParamName);
        Assert.Equal($"Capacity must be at most {LbNative.CB_MAX_CAPACITY}, got 2147483647", Text(capacity));

        var events = Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions { EventCapacity = int.MaxValue }));
        Assert.Equal(nameof(RegistryOptions.EventCapacity), events.ParamName);
        Assert.Equal($"EventCapacity must be at most {LbNative.CB_MAX_EVENT_CAPACITY}, got 2147483647", Text(events));

        var clock = Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions { Clock = (RegistryClock)7 }));
        Assert.Equal(nameof(RegistryOptions.Clock), clock.ParamName);
        Assert.Equal("Clock must be RegistryClock.Monotonic or RegistryClock.Manual, got 7", Text(clock));

        var mode = Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions
        {
            Path = Path.Combine(_dir, "mode.lbr"), Create = true, Mode = (UnixFileMode)Convert.ToInt32("1777", 8),
        }));
        Assert.Equal(nameof(RegistryOptions.Mode), mode.ParamName);
        Assert.Equal("Mode must be permission bits (UserRead .. OtherExecute, at most octal 777), got octal 1777", Text(mode));
        Assert.False(File.Exists(Path.Combine(_dir, "mode.lbr")));
    }

    [Fact]
    public void Exclusive_without_Create_is_ArgumentException_naming_both()
    {
        var e = Assert.Throws<ArgumentException>(() => Registry.Open(new RegistryOptions
        {
            Path = Path.Combine(_dir, "x.lbr"), Exclusive = true,
        }));
        Assert.Equal(nameof(RegistryOptions.Exclusive), e.ParamName);
        Assert.Equal("Exclusive needs Create as well", Text(e));
    }

    [Fact]
    public void A_file_made_with_another_capacity_or_clock_says_which_options_disagree()
    {
        string path = Path.Combine(_dir, "made.lbr");
        Registry.Open(new RegistryOptions { Path = path, Create = true, Capacity = 64, Clock = RegistryClock.Manual }).Dispose();
        var capacity = Assert.Throws<ArgumentException>(() => Registry.Open(new RegistryOptions
        {
            Path = path, Capacity = 128, Clock = RegistryClock.Manual,
        }));
        Assert.Equal(nameof(RegistryOptions.Capacity), capacity.ParamName);
        Assert.Equal($"the registry file '{path}' has another Capacity than 128 (leave Capacity unset to take the file's)",
                     Text(capacity));
        var clock = Assert.Throws<ArgumentException>(() => Registry.Open(new RegistryOptions { Path = path }));
        Assert.Equal(nameof(RegistryOptions.Clock), clock.ParamName);
        Assert.Equal($"the registry file '{path}' has another Clock than RegistryClock.Monotonic", Text(clock));
        using var same = Registry.Open(new RegistryOptions { Path = path, Clock = RegistryClock.Manual });
    }

    [Fact]
    public void Advancing_a_monotonic_clock_or_past_the_end_of_a_manual_one_says_so()
    {
        using var monotonic = Registry.Open();
        var notManual = Assert.Throws<InvalidOperationException>(() => monotonic.Advance(TimeSpan.FromSeconds(1)));
        Assert.Equal("the registry's clock is RegistryClock.Monotonic: only a RegistryClock.Manual clock is advanced",
                     notManual.Message);

        using var manual = Registry.WithManualClock();
        manual.AdvanceNanoseconds(5);
        var overflow = Assert.Throws<ArgumentOutOfRangeException>(() => manual.AdvanceNanoseconds(ulong.MaxValue));
        Assert.Equal("nanoseconds", overflow.ParamName);
        Assert.Equal($"advancing the clock (now 5 ns) by {ulong.MaxValue} ns would pass {ulong.MaxValue} ns", Text(overflow));
        Assert.Equal(5UL, manual.NowNanoseconds); // nothing moved
    }

    [Fact]
    public void Trip_out_of_range_speaks_TimeSpan()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("trip");
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => breaker.Trip(TimeSpan.Zero));
        Assert.Equal("openFor", e.ParamName);
        Assert.Equal("openFor must be 1 µs..366 days, got 00:00:00", Text(e));
        Assert.Equal(CircuitState.Closed, breaker.State);
    }

    [Fact]
    public void GetOrCreate_with_another_configuration_names_the_option_that_differs()
    {
        using var registry = Registry.WithManualClock();
        using var first = registry.GetOrCreate("inventory", new CircuitBreakerOptions { BreakDuration = TimeSpan.FromSeconds(5) });
        var e = Assert.Throws<BreakerExistsException>(() => registry.GetOrCreate("inventory",
            new CircuitBreakerOptions { BreakDuration = TimeSpan.FromSeconds(6) }));
        Assert.Equal(nameof(CircuitBreakerOptions.BreakDuration), e.Option);
        Assert.Equal(LbNative.CB_EEXIST, e.Status);
        var policy = Assert.Throws<BreakerExistsException>(() => registry.GetOrCreate("inventory",
            new CircuitBreakerOptions { BreakDuration = TimeSpan.FromSeconds(5), FailureRatio = 0.5 }));
        Assert.Equal(nameof(CircuitBreakerOptions.Policy), policy.Option);
        var taken = Assert.Throws<BreakerExistsException>(() => registry.Create("inventory"));
        Assert.Null(taken.Option);
    }

    [Fact]
    public void A_status_with_no_exception_of_its_own_is_named_by_the_library()
    {
        var e = Assert.IsType<LazyBreakerException>(NativeErrors.ToException(LbNative.CB_EINTERNAL, "", null));
        Assert.Equal("CB_EINTERNAL", e.Message);
        Assert.Equal("lazybreaker status -99", NativeErrors.ToException(-99, "", null).Message);
    }
}
