using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// One test per row of docs/csharp.md's "For Polly v8 users" table, in its
/// order: what the row says a Polly user writes here does what it says.
/// </summary>
public class PollyMigrationTests
{
    private sealed class HttpFailure : Exception { }

    private static void Fail(CircuitBreaker b) => Assert.Throws<HttpFailure>(() => b.Execute(() => throw new HttpFailure()));

    [Fact]
    public void Row_AddCircuitBreaker_is_Registry_Default_Create()
    {
        using var breaker = Registry.Default.Create("polly-row-pipeline", new CircuitBreakerOptions { FailureThreshold = 1 });
        Assert.Same(Registry.Default, breaker.Registry);
        Fail(breaker);
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public void Row_FailureRatio_trips_at_that_ratio()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("ratio", new CircuitBreakerOptions { FailureRatio = 0.5, MinimumThroughput = 4 });
        breaker.Execute(() => 0);
        breaker.Execute(() => 0);
        Fail(breaker);
        Assert.Equal(CircuitState.Closed, breaker.State); // 1 of 3: under MinimumThroughput
        Fail(breaker);
        Assert.Equal(CircuitState.Open, breaker.State);   // 2 of 4 reach 0.5
    }

    [Fact]
    public void Row_SamplingDuration_forgets_outcomes_older_than_it()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("sampling", new CircuitBreakerOptions
        {
            FailureRatio = 0.5, MinimumThroughput = 2, SamplingDuration = TimeSpan.FromSeconds(10),
        });
        Assert.Equal(10, breaker.Options.SamplingBuckets); // the row: default 10 buckets
        Fail(breaker);
        registry.Advance(TimeSpan.FromSeconds(11));
        breaker.Execute(() => 0);
        breaker.Execute(() => 0);
        Fail(breaker);
        Assert.Equal(CircuitState.Closed, breaker.State); // 1 of 3: the first failure aged out (2 of 4 would trip)
    }

    [Fact]
    public void Row_MinimumThroughput_holds_every_trip_below_it()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("throughput", new CircuitBreakerOptions { FailureRatio = 0.1, MinimumThroughput = 5 });
        for (int i = 0; i < 4; i++) Fail(breaker);
        Assert.Equal(CircuitState.Closed, breaker.State);
        Fail(breaker);
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public void Row_BreakDuration_is_how_long_OPEN_rejects()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("break", new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(5) });
        Fail(breaker);
        registry.Advance(TimeSpan.FromSeconds(4));
        Assert.False(breaker.TryAcquire(out _));
        registry.Advance(TimeSpan.FromSeconds(1));
        Assert.True(breaker.TryAcquire(out var probe));
        Assert.Equal(CircuitState.HalfOpen, breaker.State);
        probe.Success();
        Assert.Equal(CircuitState.Closed, breaker.State);
    }

    [Fact]
    public void Row_BreakDurationGenerator_is_backoff_or_Trip()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("backoff", new CircuitBreakerOptions
        {
            FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(1), BreakDurationMultiplier = 2,
            MaxBreakDuration = TimeSpan.FromSeconds(3),
        });
        Fail(breaker);
        Assert.Equal(TimeSpan.FromSeconds(1), breaker.RetryAfter);
        registry.Advance(TimeSpan.FromSeconds(1));
        Fail(breaker); // the probe fails
        Assert.Equal(TimeSpan.FromSeconds(2), breaker.RetryAfter);
        registry.Advance(TimeSpan.FromSeconds(2));
        Fail(breaker);
        Assert.Equal(TimeSpan.FromSeconds(3), breaker.RetryAfter); // capped
        breaker.Reset();
        breaker.Trip(TimeSpan.FromSeconds(20)); // "429, Retry-After: 20"
        Assert.Equal(TimeSpan.FromSeconds(20), breaker.RetryAfter);
    }

    [Fact]
    public void Row_ShouldHandle_counts_only_what_it_handles()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("handle", new CircuitBreakerOptions
        {
            FailureThreshold = 1,
            ShouldHandle = o => o.Exception is HttpFailure ? Verdict.Failure : o.Exception is null ? Verdict.Success : Verdict.Ignored,
        });
        Assert.Throws<ArgumentException>(() => breaker.Execute(() => throw new ArgumentException()));
        Assert.Equal((0UL, 1UL), (breaker.Statistics.Failures, breaker.Statistics.Ignored));
        Assert.Equal(CircuitState.Closed, breaker.State);
        Fail(breaker);
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public void Row_consecutive_failures_are_FailureThreshold_the_default_policy()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("consecutive", new CircuitBreakerOptions { FailureThreshold = 3 });
        Assert.Equal(TripPolicy.Consecutive, breaker.Options.Policy);
        Fail(breaker);
        Fail(breaker);
        breaker.Execute(() => 0); // a success ends the run
        Fail(breaker);
        Fail(breaker);
        Assert.Equal(CircuitState.Closed, breaker.State);
        Fail(breaker);
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public async Task Row_Execute_and_ExecuteAsync()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("execute");
        Assert.Equal(1, breaker.Execute(() => 1));
        Assert.Equal(2, await breaker.ExecuteAsync(_ => ValueTask.FromResult(2), CancellationToken.None));
        Assert.Equal(2UL, breaker.Statistics.Successes);
    }

    [Fact]
    public void Row_ExecuteOutcomeAsync_is_TryAcquire()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("outcome", new CircuitBreakerOptions { FailureThreshold = 1 });
        Assert.True(breaker.TryAcquire(out var permit));
        permit.Failure();
        Assert.False(breaker.TryAcquire(out _)); // rejected, no exception
        Assert.Equal(1UL, breaker.Statistics.Rejected);
    }

    [Fact]
    public void Row_BrokenCircuitException_RetryAfter_and_IsolatedCircuitException()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("broken", new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(7) });
        Fail(breaker);
        var broken = Assert.Throws<BrokenCircuitException>(() => breaker.Execute(() => 0));
        Assert.Equal(TimeSpan.FromSeconds(7), broken.RetryAfter);
        breaker.Isolate();
        var isolated = Assert.Throws<IsolatedCircuitException>(() => breaker.Execute(() => 0));
        Assert.Null(isolated.RetryAfter);
    }

    [Fact]
    public void Row_CircuitState_is_State_with_Pollys_names_and_Disabled()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("state", new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(1) });
        Assert.Equal(CircuitState.Closed, breaker.State);
        Fail(breaker);
        Assert.Equal(CircuitState.Open, breaker.State);
        registry.Advance(TimeSpan.FromSeconds(1));
        Assert.True(breaker.TryAcquire(out _));
        Assert.Equal(CircuitState.HalfOpen, breaker.State);
        breaker.Isolate();
        Assert.Equal(CircuitState.Isolated, breaker.State);
        breaker.Disable();
        Assert.Equal(CircuitState.Disabled, breaker.State);
    }

    [Fact]
    public void Row_IsolateAsync_and_CloseAsync_are_Isolate_and_Reset()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("manual");
        breaker.Isolate();
        Assert.False(breaker.TryAcquire(out _));
        breaker.Reset();
        Assert.True(breaker.TryAcquire(out var permit));
        permit.Success();
    }

    [Fact]
    public void Row_OnOpened_OnHalfOpened_OnClosed_are_PollEvents()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("events", new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(1) });
        Fail(breaker);
        registry.Advance(TimeSpan.FromSeconds(1));
        breaker.Execute(() => 0);
        var seen = registry.PollEvents().Select(e => (e.BreakerName, e.From, e.To, e.Reason)).ToArray();
        Assert.Equal(new[]
        {
            ("events", CircuitState.Closed, CircuitState.Open, TransitionReason.ConsecutiveFailures),
            ("events", CircuitState.Open, CircuitState.HalfOpen, TransitionReason.OpenElapsed),
            ("events", CircuitState.HalfOpen, CircuitState.Closed, TransitionReason.ProbesSucceeded),
        }, seen);
    }

    [Fact]
    public void Row_FakeTimeProvider_is_WithManualClock_and_Advance()
    {
        using var registry = Registry.WithManualClock();
        Assert.Equal(0UL, registry.NowNanoseconds);
        registry.Advance(TimeSpan.FromMilliseconds(3));
        Assert.Equal(3_000_000UL, registry.NowNanoseconds);
    }

    [Fact]
    public void Row_one_probe_in_half_open_is_HalfOpenMaxCalls_HalfOpenSuccessThreshold_and_HalfOpenTimeout()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("probes", new CircuitBreakerOptions
        {
            FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(1), HalfOpenMaxCalls = 2,
            HalfOpenSuccessThreshold = 2, HalfOpenTimeout = TimeSpan.FromSeconds(3),
        });
        Fail(breaker);
        registry.Advance(TimeSpan.FromSeconds(1));
        Assert.True(breaker.TryAcquire(out var first));
        Assert.True(breaker.TryAcquire(out var second));
        Assert.False(breaker.TryAcquire(out _)); // two probes at once
        first.Success();
        Assert.Equal(CircuitState.HalfOpen, breaker.State); // one success of two
        second.Success();
        Assert.Equal(CircuitState.Closed, breaker.State);

        Fail(breaker);
        registry.Advance(TimeSpan.FromSeconds(1));
        Assert.True(breaker.TryAcquire(out var silent1));
        Assert.True(breaker.TryAcquire(out var silent2));
        registry.Advance(TimeSpan.FromSeconds(3));
        Assert.False(breaker.TryAcquire(out _));
        Assert.Equal(CircuitState.Open, breaker.State); // the silent probes' lease ran out
        silent1.Dispose();
        silent2.Dispose();
    }

    [Fact]
    public void Row_metering_is_Statistics_and_Prometheus()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("metered");
        breaker.Execute(() => 0);
        Fail(breaker);
        Assert.Equal((1UL, 1UL, 2UL), (breaker.Statistics.Successes, breaker.Statistics.Failures, breaker.Statistics.Admitted));
        Assert.Contains("breaker=\"metered\"", registry.Prometheus());
    }

    [Fact]
    public void Row_Pollys_defaults_are_PollyDefaults_and_unset_options_the_librarys()
    {
        using var registry = Registry.WithManualClock();
        using var polly = registry.Create("polly-defaults", CircuitBreakerOptions.PollyDefaults);
        using var ours = registry.Create("library-defaults",
                                         new CircuitBreakerOptions { Policy = TripPolicy.TimeWindow, FailureRatio = 0.1 });
        var (p, o) = (polly.Options, ours.Options);
        Assert.Equal((0.1, TimeSpan.FromSeconds(30), 100, TimeSpan.FromSeconds(5)),
                     (p.FailureRatio!.Value, p.SamplingDuration!.Value, p.MinimumThroughput!.Value, p.BreakDuration!.Value));
        Assert.Equal((TimeSpan.FromSeconds(60), 100, TimeSpan.FromSeconds(30)),
                     (o.SamplingDuration!.Value, o.MinimumThroughput!.Value, o.BreakDuration!.Value));
        // A ratio alone samples a duration as Polly does, of the library's length.
        using var ratioAlone = registry.Create("ratio-alone", new CircuitBreakerOptions { FailureRatio = 0.1 });
        Assert.Equal((TripPolicy.TimeWindow, TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(30)),
                     (ratioAlone.Options.Policy!.Value, ratioAlone.Options.SamplingDuration!.Value,
                      ratioAlone.Options.BreakDuration!.Value));
        using var ratioUnset = registry.Create("ratio-unset", new CircuitBreakerOptions { SamplingDuration = TimeSpan.FromSeconds(30) });
        Assert.Equal(0.5, ratioUnset.Options.FailureRatio);
    }
}
