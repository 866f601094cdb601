using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Linq;
using System.Text.RegularExpressions;
using Microsoft.Extensions.DependencyInjection;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

public sealed class MetricsTests : IDisposable
{
    private readonly Registry _registry = Registry.WithManualClock();
    private readonly ServiceProvider _services;
    private readonly LazyBreakerMetrics _metrics;
    private readonly ILazyBreakerProvider _provider;

    public MetricsTests()
    {
        _services = new ServiceCollection().AddLogging().AddSingleton(_registry).AddLazyBreaker().BuildServiceProvider();
        _metrics = _services.GetRequiredService<LazyBreakerMetrics>();
        _provider = _services.GetRequiredService<ILazyBreakerProvider>();
    }

    private sealed record Reading(Instrument Instrument, double Value, Dictionary<string, object?> Tags);

    private List<Reading> Collect()
    {
        var readings = new List<Reading>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter == _metrics.Meter) l.EnableMeasurementEvents(instrument);
        };
        void Record<T>(Instrument instrument, T value, ReadOnlySpan<KeyValuePair<string, object?>> tags, object? state) =>
            readings.Add(new Reading(instrument, Convert.ToDouble(value), tags.ToArray().ToDictionary(t => t.Key, t => t.Value)));
        listener.SetMeasurementEventCallback<long>(Record);
        listener.SetMeasurementEventCallback<double>(Record);
        listener.Start();
        listener.RecordObservableInstruments();
        return readings;
    }

    [Fact]
    public void The_observable_instruments_read_the_breakers_statistics_at_collection_time()
    {
        CircuitBreaker breaker = _provider.GetOrCreate("orders", new CircuitBreakerOptions { FailureThreshold = 2 });
        for (int i = 0; i < 2; i++)
        {
            Assert.True(breaker.TryAcquire(out Permit permit));
            permit.Failure();
        }
        Assert.False(breaker.TryAcquire(out _));
        _registry.Advance(TimeSpan.FromSeconds(3));

        List<Reading> readings = Collect();
        double Read(string name, string? tag = null, string? value = null) =>
            readings.Single(r => r.Instrument.Name == name && (string?)r.Tags["breaker"] == "orders"
                                 && (tag == null || (string?)r.Tags[tag] == value)).Value;
        Assert.Equal(2, Read("lazybreaker.calls.admitted"));
        Assert.Equal(1, Read("lazybreaker.calls.rejected"));
        Assert.Equal(2, Read("lazybreaker.outcomes", "outcome", "failure"));
        Assert.Equal(0, Read("lazybreaker.outcomes", "outcome", "success"));
        Assert.Equal(1, Read("lazybreaker.trips"));
        Assert.Equal(1, Read("lazybreaker.state", "state", "open"));
        Assert.Equal(0, Read("lazybreaker.state", "state", "closed"));
        Assert.Equal(3, Read("lazybreaker.state.seconds"));
        Assert.Equal(1, readings.Single(r => r.Instrument.Name == "lazybreaker.breakers").Value);
    }

    // What OpenTelemetry's Prometheus exporter writes for an instrument:
    // dots to underscores, the unit's suffix unless in braces or already
    // there, _total on a counter.
    private static string PrometheusName(Instrument instrument)
    {
        string name = instrument.Name.Replace('.', '_');
        if (instrument.Unit == "s" && !name.EndsWith("_seconds", StringComparison.Ordinal)) name += "_seconds";
        bool counter = instrument.GetType().Name.StartsWith("ObservableCounter", StringComparison.Ordinal)
                       || instrument.GetType().Name.StartsWith("Counter", StringComparison.Ordinal);
        return counter ? name + "_total" : name;
    }

    [Fact]
    public void Their_prometheus_names_are_the_names_of_the_librarys_own_prometheus_text()
    {
        CircuitBreaker breaker = _provider.GetOrCreate("orders");
        Assert.True(breaker.TryAcquire(out Permit permit));
        permit.Success();
        var fromMeter = new SortedSet<string>();
        using (var listener = new MeterListener())
        {
            listener.InstrumentPublished = (instrument, _) =>
            {
                if (instrument.Meter == _metrics.Meter && instrument.Name != "lazybreaker.transitions")
                    fromMeter.Add(PrometheusName(instrument));
            };
            listener.Start();
        }
        var fromLibrary = new SortedSet<string>(
            Regex.Matches(_registry.Prometheus(), @"^# TYPE (\S+)", RegexOptions.Multiline).Select(m => m.Groups[1].Value));
        Assert.Equal(fromLibrary, fromMeter);
    }

    public void Dispose()
    {
        _services.Dispose();
        _registry.Dispose();
    }
}
