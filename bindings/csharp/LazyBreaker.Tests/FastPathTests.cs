using System;
using System.Runtime.InteropServices;
using System.Threading;
using LazyBreaker.Native;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// The published quiet path (Native/FastPath.cs): counts made without
/// calling the library are the library's counts, exact after a fold and
/// from two threads at once; a handle whose registry is closed is refused
/// as through the library.
/// </summary>
public class FastPathTests
{
    // Past fold_at (0x8000) on one thread, so each counter folds at least
    // once; the rejections past 2^16 too, where a 16-bit counter that was
    // not folded would wrap.
    private const int Calls = 40_000;
    private const int Rejections = 70_000;

    /// <summary>Whether the loaded library publishes the quiet path (1.3 and later).</summary>
    internal static bool Published()
    {
        NativeLibrary.TryLoad(NativeMethods.Library, typeof(CircuitBreaker).Assembly, null, out nint lib);
        return lib != 0 && NativeLibrary.TryGetExport(lib, "cb_fastpath_describe", out _);
    }

    [Fact]
    public void The_quiet_path_is_on_when_the_library_publishes_it()
    {
        if (Environment.GetEnvironmentVariable("LB_CSHARP_FASTPATH") == "0") return;
        // The library these tests run against is this tree's, which publishes it.
        Assert.True(Published(), "the library exports no cb_fastpath_describe");
        Assert.True(FastPath.Enabled, "the library publishes the quiet path but the binding does not take it");
        Assert.True(FastPath.ClockIsMonotonicNs, "OPEN rejections cross: CLOCK_MONOTONIC_COARSE is not readable");
        Assert.Equal(FastPath.RejectClock.LinuxCoarse, FastPath.Clock);
    }

    [Fact]
    public void OPEN_rejections_read_the_coarse_clock_on_Linux_the_performance_counter_on_Windows_else_none()
    {
        Func<bool> works = () => true, fails = () => false;
        Func<bool> notAsked = () => throw new InvalidOperationException("libc's clock_gettime asked off Linux");
        Assert.Equal(FastPath.RejectClock.LinuxCoarse, FastPath.ChooseClock(true, false, works, true));
        Assert.Equal(FastPath.RejectClock.None, FastPath.ChooseClock(true, false, fails, true));
        Assert.Equal(FastPath.RejectClock.PerformanceCounter, FastPath.ChooseClock(false, true, notAsked, true));
        // Stopwatch on DateTime ticks is not the library's clock.
        Assert.Equal(FastPath.RejectClock.None, FastPath.ChooseClock(false, true, notAsked, false));
        Assert.Equal(FastPath.RejectClock.None, FastPath.ChooseClock(false, false, notAsked, true));
    }

    [Theory]
    // Windows' usual 10 MHz counter, 100 years up: 100 ns a tick, no overflow.
    [InlineData(31_536_000_000_000_000UL, 10_000_000UL, 3_153_600_000_000_000_000UL)]
    // The ACPI timer's 3.579545 MHz: 5 s and a tick, the tick truncated to 279 ns.
    [InlineData(17_897_726UL, 3_579_545UL, 5_000_000_279UL)]
    // A counter at 1 GHz is ns already.
    [InlineData(123_456_789_012UL, 1_000_000_000UL, 123_456_789_012UL)]
    public void Performance_counter_ticks_are_in_ns_as_the_library_computes_them(ulong ticks, ulong frequency,
                                                                                   ulong ns)
    {
        Assert.Equal(ns, FastPath.PerformanceCounterNs(ticks, frequency));
    }

    public static TheoryData<string> Policies => new() { "consecutive", "count", "time" };

    private static CircuitBreakerOptions Options(string policy) => policy switch
    {
        "count" => new CircuitBreakerOptions { Policy = TripPolicy.CountWindow, WindowSize = 100 },
        "time" => new CircuitBreakerOptions { Policy = TripPolicy.TimeWindow },
        _ => new CircuitBreakerOptions(),
    };

    [Theory]
    [MemberData(nameof(Policies))]
    public void Statistics_are_exact_after_a_fold_on_one_thread(string policy)
    {
        using var registry = Registry.Open();
        using var breaker = registry.Create("folded", Options(policy));
        int seen = 0;
        for (int i = 0; i < Calls; i++)
        {
            Assert.True(breaker.TryAcquire(out var permit));
            permit.Success();
            seen += breaker.Execute(() => 1);
        }
        BreakerStatistics s = breaker.Statistics;
        Assert.Equal(Calls, seen);
        Assert.Equal((ulong)(2 * Calls), s.Admitted);
        Assert.Equal((ulong)(2 * Calls), s.Successes);
        Assert.Equal(0ul, s.Failures);
        Assert.Equal(0ul, s.Rejected);
        Assert.Contains($"breaker=\"folded\"", registry.Prometheus());
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Rejections_are_exact_after_a_fold_on_one_thread(bool isolated)
    {
        using var registry = Registry.Open();
        using var breaker = registry.Create("rejecting");
        if (isolated) breaker.Isolate();
        else breaker.Trip(TimeSpan.FromHours(1)); // far from its deadline
        for (int i = 0; i < Rejections; i++) Assert.False(breaker.TryAcquire(out _));
        Assert.Equal((ulong)Rejections, breaker.Statistics.Rejected);
        Assert.Equal(0ul, breaker.Statistics.Admitted);
        Assert.Equal(isolated ? CircuitState.Isolated : CircuitState.Open, breaker.State);
    }

    [Theory]
    [MemberData(nameof(Policies))]
    public void Two_threads_on_one_breaker_count_exactly(string policy)
    {
        using var registry = Registry.Open();
        using var breaker = registry.Create("shared", Options(policy));
        using var start = new Barrier(2);
        void Work()
        {
            start.SignalAndWait();
            for (int i = 0; i < Calls; i++)
            {
                if (breaker.TryAcquire(out var permit)) permit.Success();
                breaker.Execute(() => { });
            }
        }
        var other = new Thread(Work);
        other.Start();
        Work();
        other.Join();
        BreakerStatistics s = breaker.Statistics;
        Assert.Equal((ulong)(4 * Calls), s.Admitted);
        Assert.Equal((ulong)(4 * Calls), s.Successes);
        Assert.Equal(0ul, s.Rejected);
    }

    [Fact]
    public void A_failure_still_trips_through_the_library_after_quiet_calls()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("trips", new CircuitBreakerOptions { FailureThreshold = 2 });
        for (int i = 0; i < 1000; i++) breaker.Execute(() => { });
        for (int i = 0; i < 2; i++) Assert.Throws<TimeoutException>(() => breaker.Execute(() => throw new TimeoutException()));
        Assert.Equal(CircuitState.Open, breaker.State);
        Assert.Throws<BrokenCircuitException>(() => breaker.Execute(() => { }));
        BreakerStatistics s = breaker.Statistics;
        Assert.Equal(1002ul, s.Admitted);
        Assert.Equal(1000ul, s.Successes);
        Assert.Equal(2ul, s.Failures);
        Assert.Equal(1ul, s.Rejected);
        Assert.Equal(1ul, s.Trips);
    }

    [Fact]
    public void A_closed_registrys_handles_are_refused()
    {
        var registry = Registry.Open();
        CircuitBreaker created = registry.Create("created");
        CircuitBreaker found = registry.GetOrCreate("found"); // a wrapper that does not own its breaker
        CircuitBreaker open = registry.GetOrCreate("open");
        open.Trip(TimeSpan.FromHours(1));
        foreach (CircuitBreaker b in new[] { created, found })
        {
            for (int i = 0; i < 100; i++) b.Execute(() => { }); // warm: the quiet path is taken
        }
        Assert.False(open.TryAcquire(out _));
        registry.Dispose();
        foreach (CircuitBreaker b in new[] { created, found, open })
        {
            Assert.Throws<ObjectDisposedException>(() => b.TryAcquire(out _));
            Assert.Throws<ObjectDisposedException>(() => b.Execute(() => { }));
        }
    }
}
