using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Linq;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

public class EventDrainTests
{
    [Fact]
    public void Each_transition_is_logged_and_counted_once()
    {
        using var registry = Registry.WithManualClock();
        var log = new CapturedLog();
        using ServiceProvider services = new ServiceCollection()
            .AddLogging(l => l.AddProvider(log)).AddSingleton(registry).AddLazyBreaker().BuildServiceProvider();
        var drain = services.GetServices<IHostedService>().OfType<LazyBreakerEventDrain>().Single();
        var metrics = services.GetRequiredService<LazyBreakerMetrics>();
        CircuitBreaker breaker = services.GetRequiredService<ILazyBreakerProvider>().GetOrCreate("orders");

        var counted = new List<(long Value, Dictionary<string, object?> Tags)>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter == metrics.Meter && instrument.Name == "lazybreaker.transitions") l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
            counted.Add((value, tags.ToArray().ToDictionary(t => t.Key, t => t.Value))));
        listener.Start();

        breaker.Trip(TimeSpan.FromSeconds(5));
        breaker.Reset();
        Assert.Equal(2, drain.DrainEvents());
        Assert.Equal(0, drain.DrainEvents());

        var entries = log.Entries.Where(e => e.Message.StartsWith("Circuit", StringComparison.Ordinal)).ToList();
        Assert.Equal(2, entries.Count);
        Assert.Equal((LogLevel.Warning, "Circuit 'orders' closed -> open (Tripped)"), (entries[0].Level, entries[0].Message));
        Assert.Equal((LogLevel.Information, "Circuit 'orders' open -> closed (Manual)"), (entries[1].Level, entries[1].Message));
        Assert.Equal(2, counted.Count);
        Assert.Equal("open", counted[0].Tags["to"]);
        Assert.Equal("Tripped", counted[0].Tags["reason"]);
    }
}
