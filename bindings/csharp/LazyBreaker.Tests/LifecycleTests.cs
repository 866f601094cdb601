using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text.RegularExpressions;
using Xunit;

namespace LazyBreaker.Tests;

public class DisposalTests
{
    [Fact]
    public void Disposing_a_breaker_destroys_it_frees_its_name_and_later_calls_throw_ObjectDisposedException()
    {
        using var registry = Registry.WithManualClock();
        var breaker = registry.Create("gone");
        breaker.Dispose();
        breaker.Dispose(); // idempotent
        Assert.False(registry.TryGet("gone", out _));
        Assert.Throws<ObjectDisposedException>(() => breaker.TryAcquire(out _));
        Assert.Throws<ObjectDisposedException>(() => breaker.Execute(() => 1));
        Assert.Throws<ObjectDisposedException>(() => breaker.State);
        Assert.Throws<ObjectDisposedException>(() => breaker.RetryAfter);
        Assert.Throws<ObjectDisposedException>(() => breaker.Statistics);
        Assert.Throws<ObjectDisposedException>(() => breaker.Isolate());
        Assert.Throws<ObjectDisposedException>(() => breaker.Reset());
        using var again = registry.Create("gone"); // the name is free
    }

    [Fact]
    public void A_permit_reported_after_its_breaker_was_disposed_throws_ObjectDisposedException_and_its_Dispose_is_quiet()
    {
        using var registry = Registry.WithManualClock();
        var breaker = registry.Create("late-permit");
        Assert.True(breaker.TryAcquire(out var permit));
        breaker.Dispose();
        Assert.Throws<ObjectDisposedException>(() => permit.Success());
        permit.Dispose();
    }

    [Fact]
    public void Disposing_the_registry_makes_its_breakers_and_itself_throw_ObjectDisposedException()
    {
        var registry = Registry.WithManualClock();
        var breaker = registry.Create("orphan");
        registry.Dispose();
        registry.Dispose();
        Assert.Throws<ObjectDisposedException>(() => breaker.TryAcquire(out _));
        Assert.Throws<ObjectDisposedException>(() => breaker.State);
        Assert.Throws<ObjectDisposedException>(() => registry.Create("x"));
        Assert.Throws<ObjectDisposedException>(() => registry.Prometheus());
        Assert.Throws<ObjectDisposedException>(() => registry.PollEvents());
        breaker.Dispose(); // destroying a breaker of a closed registry is not an error
    }

    [Fact]
    public void A_breaker_dropped_without_Dispose_is_destroyed_by_its_SafeHandle_when_collected()
    {
        using var registry = Registry.WithManualClock();
        CreateAndDrop(registry, "dropped");
        for (int i = 0; i < 10 && Names(registry).Contains("dropped"); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.DoesNotContain("dropped", Names(registry));
        using var reborn = registry.Create("dropped"); // its name was freed
    }

    [Fact]
    public void A_dropped_breaker_finalised_after_its_registry_was_disposed_releases_it_then()
    {
        var registry = Registry.WithManualClock();
        CreateAndDrop(registry, "dropped-then-closed");
        registry.Dispose(); // the native close waits for the dropped breaker's SafeHandle
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        using var next = Registry.WithManualClock();
        using var breaker = next.Create("dropped-then-closed");
        Assert.Equal(1, breaker.Execute(() => 1));
    }

    [Fact]
    public void The_default_registry_is_one_instance_and_Dispose_leaves_it_open()
    {
        Assert.Same(Registry.Default, Registry.Default);
        Registry.Default.Dispose();
        using var breaker = Registry.Default.Create("default-registry-" + Guid.NewGuid().ToString("N"));
        Assert.Equal(1, breaker.Execute(() => 1));
        Assert.Throws<InvalidOperationException>(() => Registry.Default.Advance(TimeSpan.FromSeconds(1)));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void CreateAndDrop(Registry registry, string name) => registry.Create(name);

    // Names only, from the native list: holding no CircuitBreaker.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static List<string> Names(Registry registry)
    {
        string text = registry.Prometheus();
        return Regex.Matches(text, "breaker=\"([^\"]*)\"").Select(m => m.Groups[1].Value).Distinct().ToList();
    }
}

public class BadInputTests
{
    [Fact]
    public void Bad_names_are_refused_with_a_clear_exception_and_change_nothing()
    {
        using var registry = Registry.WithManualClock();
        Assert.Throws<ArgumentNullException>(() => registry.Create(null!));
        Assert.Throws<ArgumentException>(() => registry.Create(""));
        Assert.Throws<ArgumentException>(() => registry.Create(new string('x', 256)));
        Assert.Throws<ArgumentException>(() => registry.Create("nul\0inside"));
        Assert.Throws<ArgumentException>(() => registry.Create("lone\uD800surrogate"));
        Assert.Throws<ArgumentNullException>(() => registry.TryGet(null!, out _));
        Assert.Empty(registry.Breakers);
        using var ok = registry.Create(new string('é', 127)); // 254 bytes of UTF-8
        Assert.Equal(new string('é', 127), ok.Name);
    }

    [Fact]
    public void A_taken_name_throws_BreakerExistsException_and_a_full_registry_RegistryFullException()
    {
        using var registry = Registry.Open(new RegistryOptions { Clock = RegistryClock.Manual, Capacity = 2 });
        using var first = registry.Create("only");
        var taken = Assert.Throws<BreakerExistsException>(() => registry.Create("only"));
        Assert.Equal(-4, taken.Status);
        using var second = registry.Create("second");
        Assert.Throws<RegistryFullException>(() => registry.Create("third"));
    }

    [Fact]
    public void Bad_registry_options_and_arguments_throw_and_never_crash()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions { Capacity = int.MaxValue }));
        Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions { Capacity = -1 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => Registry.Open(new RegistryOptions { Clock = (RegistryClock)7 }));
        using var monotonic = Registry.Open();
        Assert.Throws<InvalidOperationException>(() => monotonic.Advance(TimeSpan.FromSeconds(1)));
        using var manual = Registry.WithManualClock();
        Assert.Throws<ArgumentOutOfRangeException>(() => manual.Advance(TimeSpan.FromSeconds(-1)));
        Assert.Throws<ArgumentOutOfRangeException>(() => manual.PollEvents(0));
        Assert.Throws<ArgumentNullException>(() => manual.Create("n").Execute((Func<int>)null!));
    }

    [Fact]
    public void Breakers_and_TryGet_hand_out_the_instance_Create_returned()
    {
        using var registry = Registry.WithManualClock();
        using var a = registry.Create("a");
        using var b = registry.Create("b");
        Assert.True(registry.TryGet("a", out var found));
        Assert.Same(a, found);
        Assert.False(registry.TryGet("c", out _));
        Assert.Equal(new[] { "a", "b" }, registry.Breakers.Select(x => x.Name).OrderBy(n => n));
        Assert.Contains(b, registry.Breakers);
    }
}

public class EventTests
{
    [Fact]
    public void Transitions_arrive_in_the_order_they_happened_with_their_reasons_and_times()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("events", new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(5) });
        Assert.Throws<Exception>(() => breaker.Execute(() => throw new Exception()));
        registry.Advance(TimeSpan.FromSeconds(5));
        breaker.Execute(() => 0);
        breaker.Isolate();
        breaker.Reset();
        var events = registry.PollEvents(100);
        Assert.Equal(new[]
        {
            (CircuitState.Closed, CircuitState.Open, TransitionReason.ConsecutiveFailures),
            (CircuitState.Open, CircuitState.HalfOpen, TransitionReason.OpenElapsed),
            (CircuitState.HalfOpen, CircuitState.Closed, TransitionReason.ProbesSucceeded),
            (CircuitState.Closed, CircuitState.Isolated, TransitionReason.Manual),
            (CircuitState.Isolated, CircuitState.Closed, TransitionReason.Manual),
        }, events.Select(e => (e.From, e.To, e.Reason)));
        Assert.All(events, e => Assert.Equal("events", e.BreakerName));
        Assert.Equal(events.Select(e => e.Sequence).OrderBy(s => s), events.Select(e => e.Sequence));
        Assert.Equal(TimeSpan.Zero, events[0].At);
        Assert.Equal(TimeSpan.FromSeconds(5), events[1].At);
        Assert.Empty(registry.PollEvents());
        Assert.Equal(0UL, registry.EventsDropped);
    }

    [Fact]
    public void Rejections_are_events_only_when_selected()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("rejections");
        breaker.Isolate();
        registry.PollEvents();
        Assert.False(breaker.TryAcquire(out _));
        Assert.Empty(registry.PollEvents());
        registry.SelectEvents(EventKinds.Transitions | EventKinds.Rejections);
        Assert.False(breaker.TryAcquire(out _));
        var e = Assert.Single(registry.PollEvents());
        Assert.Equal(TransitionReason.Rejected, e.Reason);
    }
}

public class PrometheusTests
{
    // The text exposition format 0.0.4: # HELP / # TYPE lines, then samples
    // "name{labels} value" with a float value.
    private static readonly Regex Sample = new(
        "^(?<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(?<labels>[a-zA-Z_][a-zA-Z0-9_]*=\"(\\\\.|[^\"\\\\])*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"(\\\\.|[^\"\\\\])*\")*)?\\})? (?<value>\\S+)$");

    [Fact]
    public void The_Prometheus_text_parses_and_names_every_breaker()
    {
        using var registry = Registry.WithManualClock();
        using var a = registry.Create("checkout");
        using var b = registry.Create("say \"hi\"");
        a.Execute(() => 1);
        string text = registry.Prometheus();
        var names = new HashSet<string>();
        var typed = new HashSet<string>();
        foreach (string line in text.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            if (line.StartsWith("# TYPE ", StringComparison.Ordinal)) { typed.Add(line.Split(' ')[2]); continue; }
            if (line.StartsWith('#')) continue;
            var m = Sample.Match(line);
            Assert.True(m.Success, $"not a sample: {line}");
            Assert.True(double.TryParse(m.Groups["value"].Value, NumberStyles.Float, CultureInfo.InvariantCulture, out _), line);
            Assert.StartsWith("lazybreaker_", m.Groups["name"].Value);
            names.Add(m.Groups["labels"].Value);
        }
        Assert.NotEmpty(typed);
        Assert.Contains(names, l => l.Contains("breaker=\"checkout\""));
        Assert.Contains(names, l => l.Contains("breaker=\"say \\\"hi\\\"\""));
    }
}
