using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace LazyBreaker.Extensions;

/// <summary>
/// The <see cref="Meter"/> named <c>LazyBreaker</c>. Every instrument but
/// the transitions counter is observable, read from the breakers' statistics
/// at collection time, so nothing is added to the request path. Names and
/// units are chosen so that OpenTelemetry's Prometheus exporter (dots to
/// underscores, <c>_total</c> on counters, <c>_seconds</c> for unit "s",
/// units in braces dropped) writes the names of the library's own
/// Prometheus text (docs/observability.md).
/// </summary>
public sealed class LazyBreakerMetrics : IDisposable
{
    /// <summary>The meter's name.</summary>
    public const string MeterName = "LazyBreaker";

    private readonly ILazyBreakerProvider _provider;
    private readonly Counter<long> _transitions;

    /// <summary>Creates the meter and its instruments over <paramref name="provider"/>'s breakers.</summary>
    public LazyBreakerMetrics(ILazyBreakerProvider provider)
    {
        _provider = provider;
        Meter = new Meter(MeterName, typeof(LazyBreakerMetrics).Assembly.GetName().Version?.ToString());
        Meter.CreateObservableGauge("lazybreaker.breakers", () => (long)_provider.Breakers.Count, "{breaker}",
                                    "Breakers in the registry");
        Meter.CreateObservableGauge("lazybreaker.state", ObserveState, "{state}",
                                    "1 for the breaker's current state, 0 for the others");
        Meter.CreateObservableGauge("lazybreaker.state.seconds",
                                    () => Each(b => b.Statistics.TimeInState.TotalSeconds), "s", "Time in the current state");
        Meter.CreateObservableCounter("lazybreaker.calls.admitted", () => Each(b => (long)b.Statistics.Admitted), "{call}",
                                      "Calls admitted");
        Meter.CreateObservableCounter("lazybreaker.calls.rejected", () => Each(b => (long)b.Statistics.Rejected), "{call}",
                                      "Calls rejected");
        Meter.CreateObservableCounter("lazybreaker.slow_calls", () => Each(b => (long)b.Statistics.Slow), "{call}",
                                      "Outcomes slower than the slow-call duration");
        Meter.CreateObservableCounter("lazybreaker.outcomes", ObserveOutcomes, "{outcome}", "Outcomes reported");
        Meter.CreateObservableCounter("lazybreaker.trips", () => Each(b => (long)b.Statistics.Trips), "{trip}",
                                      "Transitions into open");
        // No unit: OpenTelemetry would append _ratio to a unit of "1".
        Meter.CreateObservableGauge("lazybreaker.failure_rate", () => Each(b => b.Statistics.FailureRate), null,
                                    "Failures over calls in the window (ratio policies)");
        Meter.CreateObservableGauge("lazybreaker.slow_call_rate", () => Each(b => b.Statistics.SlowRate), null,
                                    "Slow calls over calls in the window");
        Meter.CreateObservableGauge("lazybreaker.consecutive_failures",
                                    () => Each(b => (long)b.Statistics.ConsecutiveFailures), "{failure}",
                                    "The current failure run");
        Meter.CreateObservableCounter("lazybreaker.events_dropped", () => (long)_provider.Registry.EventsDropped, "{event}",
                                      "Events the registry's queue dropped");
        _transitions = Meter.CreateCounter<long>("lazybreaker.transitions", "{transition}",
                                                 "State transitions, as the event queue reports them");
    }

    /// <summary>The meter (for a MeterListener or OpenTelemetry's AddMeter(LazyBreakerMetrics.MeterName)).</summary>
    public Meter Meter { get; }

    internal void CountTransition(StateTransition transition) =>
        _transitions.Add(1, new KeyValuePair<string, object?>("breaker", transition.BreakerName),
                         new KeyValuePair<string, object?>("from", StateLabel.Of(transition.From)),
                         new KeyValuePair<string, object?>("to", StateLabel.Of(transition.To)),
                         new KeyValuePair<string, object?>("reason", transition.Reason.ToString()));

    private IEnumerable<Measurement<T>> Each<T>(Func<CircuitBreaker, T> read) where T : struct
    {
        foreach (CircuitBreaker breaker in _provider.Breakers) yield return new Measurement<T>(read(breaker), Tag(breaker));
    }

    private IEnumerable<Measurement<long>> ObserveState()
    {
        foreach (CircuitBreaker breaker in _provider.Breakers)
        {
            CircuitState now = breaker.State;
            foreach (CircuitState state in StateLabel.All)
            {
                yield return new Measurement<long>(state == now ? 1 : 0, Tag(breaker),
                                                   new KeyValuePair<string, object?>("state", StateLabel.Of(state)));
            }
        }
    }

    private IEnumerable<Measurement<long>> ObserveOutcomes()
    {
        foreach (CircuitBreaker breaker in _provider.Breakers)
        {
            BreakerStatistics statistics = breaker.Statistics;
            yield return Outcome(breaker, "success", statistics.Successes);
            yield return Outcome(breaker, "failure", statistics.Failures);
            yield return Outcome(breaker, "ignored", statistics.Ignored);
        }
    }

    private static Measurement<long> Outcome(CircuitBreaker breaker, string outcome, ulong count) =>
        new((long)count, Tag(breaker), new KeyValuePair<string, object?>("outcome", outcome));

    private static KeyValuePair<string, object?> Tag(CircuitBreaker breaker) => new("breaker", breaker.Name);

    /// <summary>Disposes the meter.</summary>
    public void Dispose() => Meter.Dispose();
}
