using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace LazyBreaker.Extensions;

/// <summary>
/// The hosted service that drains the registry's event queue every
/// <see cref="LazyBreakerSettings.EventPollInterval"/> (the library has no
/// thread of its own): each transition is logged and counted in
/// <c>lazybreaker.transitions</c>. An opening is a warning, the rest information.
/// </summary>
public sealed partial class LazyBreakerEventDrain : BackgroundService
{
    private readonly ILazyBreakerProvider _provider;
    private readonly LazyBreakerMetrics _metrics;
    private readonly ILogger<LazyBreakerEventDrain> _logger;
    private readonly TimeSpan _interval;
    private ulong _dropped;

    /// <summary>Created by the host (<see cref="ServiceCollectionExtensions.AddLazyBreaker(Microsoft.Extensions.DependencyInjection.IServiceCollection)"/>).</summary>
    public LazyBreakerEventDrain(ILazyBreakerProvider provider, LazyBreakerMetrics metrics, ILogger<LazyBreakerEventDrain> logger,
                                 IOptions<LazyBreakerSettings> settings)
    {
        _provider = provider;
        _metrics = metrics;
        _logger = logger;
        _interval = settings.Value.EventPollInterval;
    }

    /// <summary>Logs and counts every event queued now; returns how many.</summary>
    public int DrainEvents()
    {
        int drained = 0;
        while (true)
        {
            var events = _provider.Registry.PollEvents();
            foreach (StateTransition e in events)
            {
                if (e.Reason == TransitionReason.Rejected) continue;
                _metrics.CountTransition(e);
                if (e.To is CircuitState.Open or CircuitState.Isolated)
                    LogOpened(_logger, e.BreakerName, StateLabel.Of(e.From), StateLabel.Of(e.To), e.Reason);
                else
                    LogTransition(_logger, e.BreakerName, StateLabel.Of(e.From), StateLabel.Of(e.To), e.Reason);
            }
            drained += events.Count;
            if (events.Count == 0) break;
        }
        ulong dropped = _provider.Registry.EventsDropped;
        if (dropped != _dropped)
        {
            LogDropped(_logger, dropped - _dropped);
            _dropped = dropped;
        }
        return drained;
    }

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(_interval);
        try
        {
            do DrainEvents();
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false));
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // The host is stopping.
        }
        DrainEvents();
    }

    [LoggerMessage(EventId = 10, Level = LogLevel.Warning, Message = "Circuit '{Breaker}' {From} -> {To} ({Reason})")]
    private static partial void LogOpened(ILogger logger, string breaker, string from, string to, TransitionReason reason);

    [LoggerMessage(EventId = 11, Level = LogLevel.Information, Message = "Circuit '{Breaker}' {From} -> {To} ({Reason})")]
    private static partial void LogTransition(ILogger logger, string breaker, string from, string to, TransitionReason reason);

    [LoggerMessage(EventId = 12, Level = LogLevel.Warning, Message = "The registry's event queue dropped {Count} events (it drops the oldest when full)")]
    private static partial void LogDropped(ILogger logger, ulong count);
}
