using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace LazyBreaker.Tests;

public class LazyRecoveryTests
{
    [Fact]
    public void An_open_breaker_admits_one_probe_once_the_break_duration_has_passed_and_closes_on_its_success()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("lazy", new CircuitBreakerOptions
        {
            FailureThreshold = 2, BreakDuration = TimeSpan.FromSeconds(10),
        });
        for (int i = 0; i < 2; i++)
        {
            Assert.True(breaker.TryAcquire(out var p));
            p.Failure();
        }
        Assert.Equal(CircuitState.Open, breaker.State);
        Assert.False(breaker.TryAcquire(out _));
        Assert.Equal(TimeSpan.FromSeconds(10), breaker.RetryAfter);

        registry.Advance(TimeSpan.FromSeconds(10) - TimeSpan.FromTicks(1));
        Assert.False(breaker.TryAcquire(out _));
        registry.Advance(TimeSpan.FromTicks(1));
        Assert.Equal(CircuitState.Open, breaker.State); // nothing moves until a call arrives
        Assert.Equal(TimeSpan.Zero, breaker.RetryAfter);

        Assert.True(breaker.TryAcquire(out var probe));
        Assert.Equal(CircuitState.HalfOpen, breaker.State);
        Assert.False(breaker.TryAcquire(out _)); // the herd waits
        probe.Success();
        Assert.Equal(CircuitState.Closed, breaker.State);
    }

    [Fact]
    public void Execute_on_an_open_breaker_throws_BrokenCircuitException_with_the_name_and_the_exact_retry_after()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("payments", new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(30) });
        Assert.Throws<TimeoutException>(() => breaker.Execute(() => throw new TimeoutException()));
        registry.Advance(TimeSpan.FromSeconds(12));
        var e = Assert.Throws<BrokenCircuitException>(() => breaker.Execute(() => 1));
        Assert.Equal("payments", e.BreakerName);
        Assert.Equal(TimeSpan.FromSeconds(18), e.RetryAfter);

        breaker.Isolate();
        var isolated = Assert.Throws<IsolatedCircuitException>(() => breaker.Execute(() => { }));
        Assert.Null(isolated.RetryAfter);
        Assert.Null(breaker.RetryAfter);
        Assert.Equal(CircuitState.Isolated, breaker.State);
        breaker.Reset();
        Assert.Equal(7, breaker.Execute(() => 7));
    }

    [Fact]
    public void Trip_opens_for_exactly_the_given_time_and_Disable_admits_everything()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("trip");
        breaker.Trip(TimeSpan.FromSeconds(20));
        Assert.Equal(TimeSpan.FromSeconds(20), breaker.RetryAfter);
        Assert.Equal(1UL, breaker.Statistics.Trips);
        breaker.Disable();
        Assert.Equal(CircuitState.Disabled, breaker.State);
        for (int i = 0; i < 100; i++) Assert.Throws<InvalidOperationException>(() => breaker.Execute(() => throw new InvalidOperationException()));
        Assert.Equal(CircuitState.Disabled, breaker.State);
        Assert.Throws<ArgumentOutOfRangeException>(() => breaker.Trip(TimeSpan.Zero));
    }
}

public class ProbeCapTests
{
    [Fact]
    public void Exactly_half_open_max_calls_probes_are_admitted_among_16_threads_in_each_of_300_rounds()
    {
        const int threads = 16, rounds = 300, maxProbes = 3;
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("herd", new CircuitBreakerOptions
        {
            FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(1), HalfOpenMaxCalls = maxProbes,
        });
        using var start = new Barrier(threads + 1);
        var admitted = new int[rounds];
        var permits = new Permit[rounds, threads];
        var admittedBy = new bool[rounds, threads];
        var workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
        {
            for (int r = 0; r < rounds; r++)
            {
                start.SignalAndWait();
                if (breaker.TryAcquire(out var p))
                {
                    Interlocked.Increment(ref admitted[r]);
                    permits[r, t] = p;
                    admittedBy[r, t] = true;
                }
                start.SignalAndWait();
            }
        })).ToList();
        workers.ForEach(w => w.Start());
        for (int r = 0; r < rounds; r++)
        {
            // Open, and past the break duration: the next calls race for the probes.
            breaker.Trip(TimeSpan.FromSeconds(1));
            registry.Advance(TimeSpan.FromSeconds(1));
            start.SignalAndWait(); // go
            start.SignalAndWait(); // all asked
            Assert.Equal(CircuitState.HalfOpen, breaker.State);
            for (int t = 0; t < threads; t++)
                if (admittedBy[r, t]) permits[r, t].Failure(); // re-open for the next round
        }
        workers.ForEach(w => w.Join());
        Assert.All(admitted, n => Assert.Equal(maxProbes, n));
    }
}

public class AsyncTests
{
    [Fact]
    public async Task ExecuteAsync_returns_the_result_and_records_a_success()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("async");
        int result = await breaker.ExecuteAsync(async ct => { await Task.Yield(); return 41 + 1; });
        Assert.Equal(42, result);
        Assert.Equal(1UL, breaker.Statistics.Successes);
    }

    [Fact]
    public async Task A_cancellation_of_the_callers_own_token_is_reported_as_ignored_not_as_a_failure()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("cancel", new CircuitBreakerOptions { FailureThreshold = 1 });
        using var cts = new CancellationTokenSource();
        var call = breaker.ExecuteAsync(async ct => { await Task.Delay(Timeout.Infinite, ct); return 0; }, cts.Token);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await call);
        var s = breaker.Statistics;
        Assert.Equal(1UL, s.Ignored);
        Assert.Equal(0UL, s.Failures);
        Assert.Equal(CircuitState.Closed, breaker.State);
    }

    [Fact]
    public async Task An_OperationCanceledException_from_elsewhere_counts_as_a_failure()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("timeout", new CircuitBreakerOptions { FailureThreshold = 1 });
        await Assert.ThrowsAsync<TaskCanceledException>(async () =>
            await breaker.ExecuteAsync(ct => new ValueTask(Task.FromCanceled(new CancellationToken(true))), CancellationToken.None));
        Assert.Equal(1UL, breaker.Statistics.Failures);
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public async Task A_token_cancelled_before_the_call_throws_without_asking_the_breaker()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("precancelled");
        await Assert.ThrowsAsync<OperationCanceledException>(async () =>
            await breaker.ExecuteAsync(ct => new ValueTask<int>(1), new CancellationToken(true)));
        Assert.Equal(0UL, breaker.Statistics.Admitted);
    }

    [Fact]
    public async Task ExecuteAsync_on_an_open_breaker_throws_BrokenCircuitException()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("async-open");
        breaker.Isolate();
        await Assert.ThrowsAsync<IsolatedCircuitException>(async () => await breaker.ExecuteAsync(ct => ValueTask.CompletedTask));
    }
}

public class PermitTests
{
    [Fact]
    public void Using_around_a_call_that_throws_reports_a_failure()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("using", new CircuitBreakerOptions { FailureThreshold = 1 });
        Assert.Throws<InvalidOperationException>(() =>
        {
            if (breaker.TryAcquire(out var permit))
            {
                using (permit)
                {
                    throw new InvalidOperationException("downstream failed");
                }
            }
        });
        Assert.Equal(1UL, breaker.Statistics.Failures);
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public void Dispose_after_a_verdict_reports_nothing_more()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("verdict", new CircuitBreakerOptions { FailureThreshold = 1 });
        for (int i = 0; i < 20; i++)
        {
            Assert.True(breaker.TryAcquire(out var permit));
            using (permit) permit.Success();
        }
        // Nested permits with identical tickets: each keeps its own verdict.
        Assert.True(breaker.TryAcquire(out var outer));
        using (outer)
        {
            Assert.True(breaker.TryAcquire(out var inner));
            using (inner) inner.Ignore();
            outer.Success();
        }
        var s = breaker.Statistics;
        Assert.Equal(21UL, s.Successes);
        Assert.Equal(1UL, s.Ignored);
        Assert.Equal(0UL, s.Failures);
    }

    [Fact]
    public void A_second_verdict_on_a_permit_is_refused_and_counts_nothing()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("twice", new CircuitBreakerOptions { FailureThreshold = 2 });
        Assert.True(breaker.TryAcquire(out var p));
        p.Success();
        Assert.Throws<InvalidOperationException>(() => p.Success());
        Assert.Throws<InvalidOperationException>(() => p.Failure());
        Assert.Throws<InvalidOperationException>(() => p.Failure());
        Assert.Throws<InvalidOperationException>(() => p.Ignore());
        p.Dispose();
        var s = breaker.Statistics;
        Assert.Equal(1UL, s.Admitted);
        Assert.Equal(1UL, s.Successes);
        Assert.Equal(0UL, s.Failures);
        Assert.Equal(0UL, s.Ignored);
        Assert.Equal(CircuitState.Closed, breaker.State);
    }

    [Fact]
    public void Permits_reported_then_disposed_count_no_failure_however_many_are_in_flight_on_a_thread()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("many", new CircuitBreakerOptions { FailureThreshold = 1 });
        foreach (int n in new[] { 8, 9, 100, 1000 })
        {
            var permits = new Permit[n];
            for (int i = 0; i < n; i++) Assert.True(breaker.TryAcquire(out permits[i]));
            foreach (var p in permits) p.Success();
            foreach (var p in permits) p.Dispose();
        }
        var s = breaker.Statistics;
        Assert.Equal(1117UL, s.Successes);
        Assert.Equal(0UL, s.Failures);
        Assert.Equal(CircuitState.Closed, breaker.State);
    }

    [Fact]
    public void A_verdict_on_one_thread_and_Dispose_on_another_report_once()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("hop", new CircuitBreakerOptions { FailureThreshold = 1 });
        Assert.True(breaker.TryAcquire(out var p));
        var reporter = new Thread(() => p.Success());
        reporter.Start();
        reporter.Join();
        p.Dispose();
        var s = breaker.Statistics;
        Assert.Equal(1UL, s.Successes);
        Assert.Equal(0UL, s.Failures);
    }

    [Fact]
    public void A_copy_of_a_reported_permit_does_not_report_for_the_next_permit()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("copies", new CircuitBreakerOptions { FailureThreshold = 1 });
        Assert.True(breaker.TryAcquire(out var first));
        Permit copy = first;
        first.Success();
        Assert.True(breaker.TryAcquire(out var second)); // may reuse what the first one held
        Assert.Throws<InvalidOperationException>(() => copy.Failure());
        copy.Dispose();
        second.Ignore();
        var s = breaker.Statistics;
        Assert.Equal((1UL, 0UL, 1UL), (s.Successes, s.Failures, s.Ignored));
    }

    [Fact]
    public void A_default_permit_disposes_quietly_and_refuses_a_verdict()
    {
        Permit none = default;
        Assert.False(none.IsAdmitted);
        none.Dispose();
        Assert.Throws<InvalidOperationException>(() => none.Success());
    }

    [Fact]
    public void TryAcquire_and_Success_allocate_nothing_closed_and_a_rejection_allocates_nothing_open()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("alloc");
        Warm(breaker);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 10_000; i++)
        {
            if (breaker.TryAcquire(out var p)) p.Success();
        }
        long closed = GC.GetAllocatedBytesForCurrentThread() - before;
        breaker.Isolate();
        before = GC.GetAllocatedBytesForCurrentThread();
        int rejected = 0;
        for (int i = 0; i < 10_000; i++)
        {
            if (!breaker.TryAcquire(out _)) rejected++;
        }
        long open = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(10_000, rejected);
        Assert.Equal(0, closed);
        Assert.Equal(0, open);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Warm(CircuitBreaker breaker)
    {
        for (int i = 0; i < 1000; i++)
        {
            if (breaker.TryAcquire(out var p)) { using (p) p.Success(); }
        }
    }
}

public class ClassificationTests
{
    private sealed class HttpError : Exception
    {
        public HttpError(int status) : base($"HTTP {status}") { Status = status; }
        public int Status { get; }
    }

    private static Verdict Http(CallOutcome o) => o switch
    {
        { Exception: HttpError { Status: 404 } } => Verdict.Ignored, // the caller's mistake
        { Exception: not null } => Verdict.Failure,
        { Result: 503 } => Verdict.Failure, // an outage returned as a value
        _ => Verdict.Success,
    };

    [Fact]
    public void ShouldHandle_ignores_a_404_thrown_and_fails_a_503_returned()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("http", new CircuitBreakerOptions { FailureThreshold = 2, ShouldHandle = Http });
        Assert.Throws<HttpError>(() => breaker.Execute<int>(() => throw new HttpError(404)));
        Assert.Equal(503, breaker.Execute(() => 503));
        Assert.Equal(200, breaker.Execute(() => 200)); // resets the run
        Assert.Equal(503, breaker.Execute(() => 503));
        Assert.Throws<HttpError>(() => breaker.Execute<int>(() => throw new HttpError(500)));
        var s = breaker.Statistics;
        Assert.Equal((1UL, 3UL, 1UL), (s.Ignored, s.Failures, s.Successes));
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Fact]
    public void Without_ShouldHandle_every_exception_is_a_failure_and_every_result_a_success()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("default");
        Assert.Equal(503, breaker.Execute(() => 503));
        Assert.Throws<ArgumentException>(() => breaker.Execute(() => throw new ArgumentException()));
        Assert.Equal((1UL, 1UL), (breaker.Statistics.Successes, breaker.Statistics.Failures));
    }

    [Fact]
    public void A_ShouldHandle_that_throws_reports_a_failure_and_the_call_goes_on()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("throwing-predicate",
            new CircuitBreakerOptions { ShouldHandle = _ => throw new InvalidOperationException() });
        Assert.Equal(1, breaker.Execute(() => 1));
        Assert.Equal(1UL, breaker.Statistics.Failures);
    }

    [Fact]
    public void A_ShouldHandle_answer_outside_Verdict_reports_a_failure_and_the_result_is_returned()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("bad-verdict", new CircuitBreakerOptions { ShouldHandle = _ => (Verdict)7 });
        Assert.Equal(2, breaker.Execute(() => 2));
        Assert.Equal((1UL, 0UL), (breaker.Statistics.Failures, breaker.Statistics.Successes));
    }
}

public class OptionsTests
{
    [Fact]
    public void The_default_policy_trips_after_the_librarys_5_failures_in_a_row()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("five");
        for (int i = 0; i < 4; i++) Assert.Throws<Exception>(() => breaker.Execute(() => throw new Exception()));
        Assert.Equal(CircuitState.Closed, breaker.State);
        Assert.Throws<Exception>(() => breaker.Execute(() => throw new Exception()));
        Assert.Equal(CircuitState.Open, breaker.State);
    }

    [Theory]
    [InlineData(nameof(CircuitBreakerOptions.FailureThreshold), "FailureThreshold must be 1..65535, got 0")]
    [InlineData(nameof(CircuitBreakerOptions.HalfOpenMaxCalls), "HalfOpenMaxCalls must be 1..32, got 1000")]
    [InlineData(nameof(CircuitBreakerOptions.FailureRatio), "FailureRatio must be in (0, 1], got 1.5")]
    [InlineData(nameof(CircuitBreakerOptions.BreakDuration), "BreakDuration must be at least 1 µs, got 00:00:00")]
    [InlineData(nameof(CircuitBreakerOptions.SamplingBuckets), "SamplingBuckets must be 1..32, got 0")]
    public void An_out_of_range_option_throws_ArgumentOutOfRangeException_in_the_options_words(string option, string message)
    {
        var o = new CircuitBreakerOptions();
        switch (option)
        {
            case nameof(CircuitBreakerOptions.FailureThreshold): o.FailureThreshold = 0; break;
            case nameof(CircuitBreakerOptions.HalfOpenMaxCalls): o.HalfOpenMaxCalls = 1000; break;
            case nameof(CircuitBreakerOptions.FailureRatio): o.FailureRatio = 1.5; break;
            case nameof(CircuitBreakerOptions.BreakDuration): o.BreakDuration = TimeSpan.Zero; break;
            default: o.SamplingBuckets = 0; break;
        }
        using var registry = Registry.WithManualClock();
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => registry.Create("bad", o));
        Assert.Equal(option, e.ParamName);
        Assert.Equal($"{message} (Parameter '{option}')", e.Message);
        Assert.False(registry.TryGet("bad", out _)); // nothing was created
    }

    [Fact]
    public void Polly_style_options_make_a_time_window_breaker()
    {
        var o = new CircuitBreakerOptions { FailureRatio = 0.5, SamplingDuration = TimeSpan.FromSeconds(10), MinimumThroughput = 4 };
        Assert.Equal(TripPolicy.TimeWindow, o.EffectivePolicy);
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("polly", o);
        for (int i = 0; i < 2; i++) breaker.Execute(() => 0);
        Assert.Throws<Exception>(() => breaker.Execute(() => throw new Exception()));
        Assert.Equal(CircuitState.Closed, breaker.State);
        Assert.Throws<Exception>(() => breaker.Execute(() => throw new Exception()));
        Assert.Equal(CircuitState.Open, breaker.State); // 2 of 4 reach 0.5
    }

    [Fact]
    public void A_negative_duration_is_refused_where_it_is_set()
    {
        var o = new CircuitBreakerOptions();
        Assert.Throws<ArgumentOutOfRangeException>(() => o.BreakDuration = TimeSpan.FromSeconds(-1));
        o.FailureThreshold = -1;
        using var registry = Registry.WithManualClock();
        Assert.Throws<ArgumentOutOfRangeException>(() => registry.Create("negative", o));
    }
}
