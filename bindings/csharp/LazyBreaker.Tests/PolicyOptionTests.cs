using System;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// The policy follows from the options set by the library's answers
/// (cb_policy_reads); an option the policy never reads is an error naming
/// both; PollyDefaults is Polly's defaults, and a breaker's Options read
/// back find it again.
/// </summary>
public class PolicyOptionTests
{
    private static ArgumentException Refused(CircuitBreakerOptions o)
    {
        using var registry = Registry.WithManualClock();
        var e = Assert.Throws<ArgumentException>(() => registry.Create("refused", o));
        Assert.False(registry.TryGet("refused", out _));
        return e;
    }

    [Fact]
    public void An_option_the_explicit_policy_ignores_is_an_error_naming_both()
    {
        var e = Refused(new CircuitBreakerOptions { Policy = TripPolicy.CountWindow, FailureThreshold = 3 });
        Assert.Equal(nameof(CircuitBreakerOptions.FailureThreshold), e.ParamName);
        Assert.StartsWith("FailureThreshold is ignored by Policy = TripPolicy.CountWindow: it is read by " +
                          "TripPolicy.Consecutive only; set Policy to the policy you mean, or leave FailureThreshold unset", e.Message);

        e = Refused(new CircuitBreakerOptions { Policy = TripPolicy.Consecutive, FailureRatio = 0.2 });
        Assert.Equal(nameof(CircuitBreakerOptions.FailureRatio), e.ParamName);
        Assert.StartsWith("FailureRatio is ignored by Policy = TripPolicy.Consecutive: it is read by " +
                          "TripPolicy.CountWindow and TripPolicy.TimeWindow only", e.Message);

        e = Refused(new CircuitBreakerOptions { Policy = TripPolicy.TimeWindow, WindowSize = 10 });
        Assert.Equal(nameof(CircuitBreakerOptions.WindowSize), e.ParamName);

        e = Refused(new CircuitBreakerOptions { Policy = TripPolicy.CountWindow, SamplingBuckets = 4 });
        Assert.Equal(nameof(CircuitBreakerOptions.SamplingBuckets), e.ParamName);
    }

    [Fact]
    public void Options_no_policy_reads_together_are_an_error_naming_the_option_that_chose_the_policy()
    {
        var e = Refused(new CircuitBreakerOptions { SamplingDuration = TimeSpan.FromSeconds(10), WindowSize = 10 });
        Assert.Equal(nameof(CircuitBreakerOptions.SamplingDuration), e.ParamName);
        Assert.StartsWith("SamplingDuration is ignored by TripPolicy.CountWindow, which WindowSize chooses: " +
                          "set Policy, or leave one of them unset", e.Message);
        // FailureRatio alone counts as SamplingDuration set (Polly's model),
        // and the consecutive policy, which FailureThreshold chooses, reads neither.
        e = Refused(new CircuitBreakerOptions { FailureThreshold = 3, FailureRatio = 0.5 });
        Assert.Equal(nameof(CircuitBreakerOptions.FailureRatio), e.ParamName);
        Assert.StartsWith("FailureRatio is ignored by TripPolicy.Consecutive, which FailureThreshold chooses", e.Message);
        // The consecutive policy reads WindowSize only for its slow-call rate.
        e = Refused(new CircuitBreakerOptions { FailureThreshold = 3, WindowSize = 10 });
        Assert.Equal(nameof(CircuitBreakerOptions.WindowSize), e.ParamName);
        Assert.StartsWith("WindowSize is ignored by TripPolicy.Consecutive, which FailureThreshold chooses", e.Message);
        // With slow calls on, FailureThreshold chooses it and it reads WindowSize.
        Assert.Equal(TripPolicy.Consecutive, new CircuitBreakerOptions
        {
            FailureThreshold = 3, WindowSize = 10, SlowCallDuration = TimeSpan.FromSeconds(1),
        }.EffectivePolicy);
    }

    [Fact]
    public void The_consecutive_policy_reads_the_window_options_for_its_slow_call_rate()
    {
        using var registry = Registry.WithManualClock();
        var o = new CircuitBreakerOptions
        {
            Policy = TripPolicy.Consecutive, FailureThreshold = 100, SlowCallDuration = TimeSpan.FromMilliseconds(10),
            WindowSize = 2, MinimumThroughput = 2, SlowCallRatio = 1.0,
        };
        using var breaker = registry.Create("slow", o);
        int calls = 0;
        while (calls < 10 && breaker.TryAcquire(out var permit))
        {
            registry.Advance(TimeSpan.FromMilliseconds(20));
            permit.Success();
            calls++;
        }
        // Slow successes trip it within a few calls: with the defaults
        // (WindowSize 100, MinimumThroughput 100) it would take 97.
        Assert.Equal(CircuitState.Open, breaker.State);
        Assert.InRange(calls, 1, 4);
        // Without slow calls the same window options are ignored, so refused.
        o.SlowCallDuration = null;
        var e = Refused(o);
        Assert.Equal(nameof(CircuitBreakerOptions.WindowSize), e.ParamName);
        Assert.StartsWith("WindowSize is ignored by Policy = TripPolicy.Consecutive without SlowCallDuration: it is read by " +
                          "TripPolicy.CountWindow (and by TripPolicy.Consecutive for the slow-call rate, with SlowCallDuration on) only",
                          e.Message);
    }

    [Fact]
    public void The_policy_follows_from_what_is_set()
    {
        Assert.Equal(TripPolicy.Consecutive, new CircuitBreakerOptions { FailureThreshold = 2 }.EffectivePolicy);
        Assert.Equal(TripPolicy.CountWindow, new CircuitBreakerOptions { WindowSize = 10, FailureRatio = 0.5 }.EffectivePolicy);
        Assert.Equal(TripPolicy.TimeWindow, new CircuitBreakerOptions { FailureRatio = 0.5 }.EffectivePolicy);
        Assert.Equal(TripPolicy.TimeWindow, new CircuitBreakerOptions { MinimumThroughput = 5 }.EffectivePolicy);
        Assert.Equal(TripPolicy.TimeWindow, new CircuitBreakerOptions { SamplingBuckets = 5 }.EffectivePolicy);
        Assert.Equal(TripPolicy.CountWindow,
                     new CircuitBreakerOptions { WindowSize = 10, MinimumThroughput = 5, SlowCallDuration = TimeSpan.FromSeconds(1) }
                         .EffectivePolicy);
        // Options every policy reads choose none.
        Assert.Equal(TripPolicy.Consecutive,
                     new CircuitBreakerOptions { BreakDuration = TimeSpan.FromSeconds(1), SlowCallRatio = 0.5 }.EffectivePolicy);
        Assert.Equal(TripPolicy.Consecutive, new CircuitBreakerOptions().EffectivePolicy);
    }

    [Fact]
    public void PollyDefaults_are_Pollys_and_a_new_options_the_librarys()
    {
        var polly = CircuitBreakerOptions.PollyDefaults;
        Assert.Equal(TripPolicy.TimeWindow, polly.Policy);
        Assert.Equal(0.1, polly.FailureRatio);
        Assert.Equal(TimeSpan.FromSeconds(30), polly.SamplingDuration);
        Assert.Equal(100, polly.MinimumThroughput);
        Assert.Equal(TimeSpan.FromSeconds(5), polly.BreakDuration);
        Assert.NotSame(polly, CircuitBreakerOptions.PollyDefaults);

        using var registry = Registry.WithManualClock();
        using var library = registry.Create("library", new CircuitBreakerOptions { FailureRatio = 0.1 });
        CircuitBreakerOptions read = library.Options;
        Assert.Equal(TripPolicy.TimeWindow, read.Policy);
        // A ratio without a window samples a duration, as Polly does, of the library's length.
        Assert.Equal(TimeSpan.FromSeconds(60), read.SamplingDuration); // not Polly's 30 s
        Assert.Equal(100, read.MinimumThroughput);
        Assert.Equal(TimeSpan.FromSeconds(30), read.BreakDuration);    // not Polly's 5 s
        using var timeWindow = registry.Create("time window", new CircuitBreakerOptions { Policy = TripPolicy.TimeWindow, FailureRatio = 0.1 });
        Assert.Equal(TimeSpan.FromSeconds(60), timeWindow.Options.SamplingDuration); // the library's, with Policy set
        using var unset = registry.Create("unset");
        Assert.Equal((TripPolicy.Consecutive, 5), (unset.Options.Policy!.Value, unset.Options.FailureThreshold!.Value));
    }

    [Fact]
    public void A_PollyDefaults_breaker_trips_at_one_failure_in_ten_of_100_calls_and_breaks_for_5_s()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("polly", CircuitBreakerOptions.PollyDefaults);
        for (int i = 0; i < 90; i++) breaker.Execute(() => 0);
        for (int i = 0; i < 9; i++) Assert.Throws<TimeoutException>(() => breaker.Execute(() => throw new TimeoutException()));
        Assert.Equal(CircuitState.Closed, breaker.State); // 99 calls: under MinimumThroughput
        Assert.Throws<TimeoutException>(() => breaker.Execute(() => throw new TimeoutException()));
        Assert.Equal(CircuitState.Open, breaker.State);   // 10 of 100 reach 0.1
        Assert.Equal(TimeSpan.FromSeconds(5), breaker.RetryAfter);
    }

    [Fact]
    public void Options_read_back_every_option_and_find_the_breaker_again()
    {
        using var registry = Registry.WithManualClock();
        var given = new CircuitBreakerOptions
        {
            FailureRatio = 0.25, SamplingDuration = TimeSpan.FromSeconds(10), MinimumThroughput = 8,
            BreakDuration = TimeSpan.FromSeconds(2), BreakDurationMultiplier = 2, HalfOpenMaxCalls = 3,
        };
        using var breaker = registry.GetOrCreate("read", given);
        CircuitBreakerOptions read = breaker.Options;
        Assert.Equal(TripPolicy.TimeWindow, read.Policy);
        Assert.Equal(0.25, read.FailureRatio);
        Assert.Equal(TimeSpan.FromSeconds(10), read.SamplingDuration);
        Assert.Equal(10, read.SamplingBuckets);
        Assert.Equal(8, read.MinimumThroughput);
        Assert.Equal(TimeSpan.FromSeconds(2), read.BreakDuration);
        Assert.Equal(TimeSpan.FromSeconds(2), read.HalfOpenTimeout); // left to the break duration
        Assert.Equal(2.0, read.BreakDurationMultiplier);
        Assert.Equal(3, read.HalfOpenMaxCalls);
        Assert.Null(read.FailureThreshold); // the time window does not read it
        Assert.Null(read.WindowSize);
        breaker.Trip(TimeSpan.FromMinutes(1));
        using var again = registry.GetOrCreate("read", read);
        Assert.Equal(CircuitState.Open, again.State);
    }

    [Fact]
    public void Options_of_a_breaker_made_with_an_ignored_field_keep_it_and_still_find_it()
    {
        using var registry = Registry.WithManualClock();
        // As C (or the conformance runner) may make it: failure_threshold 2 under a count window.
        var cStyle = new CircuitBreakerOptions { Policy = TripPolicy.CountWindow, WindowSize = 4, FailureThreshold = 2, AcceptIgnoredOptions = true };
        using var breaker = registry.Create("c-made", cStyle);
        CircuitBreakerOptions read = breaker.Options;
        Assert.Equal(2, read.FailureThreshold);
        using var again = registry.GetOrCreate("c-made", read);
        Assert.Equal(breaker.Handle, again.Handle);
    }
}
