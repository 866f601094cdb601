using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace LazyBreaker.Extensions;

/// <summary>
/// The <see cref="ILazyBreakerProvider"/> of <see cref="ServiceCollectionExtensions.AddLazyBreaker(Microsoft.Extensions.DependencyInjection.IServiceCollection)"/>:
/// creates the configured breakers at start and follows configuration
/// reloads. The library cannot reconfigure a breaker, so a reload that
/// changes a live breaker's options is refused with a logged error and the
/// breaker keeps its options and state; a reload that adds a breaker creates it.
/// </summary>
internal sealed partial class LazyBreakerProvider : ILazyBreakerProvider, IDisposable
{
    private readonly ConcurrentDictionary<string, CircuitBreaker> _breakers = new(StringComparer.Ordinal);
    private readonly IOptionsMonitor<LazyBreakerSettings> _settings;
    private readonly ILogger<LazyBreakerProvider> _logger;
    private readonly IDisposable? _reloads;
    private readonly object _reloadLock = new();
    // The refusal last logged per breaker: one change often raises several
    // reloads (a file written twice, chained configuration), logged once.
    private readonly Dictionary<string, string> _refusals = new(StringComparer.Ordinal);

    public LazyBreakerProvider(Registry registry, IOptionsMonitor<LazyBreakerSettings> settings, ILogger<LazyBreakerProvider> logger)
    {
        Registry = registry;
        _settings = settings;
        _logger = logger;
        foreach (var (name, options) in settings.CurrentValue.Breakers) _breakers[name] = registry.GetOrCreate(name, options);
        _reloads = settings.OnChange(Reload);
    }

    public Registry Registry { get; }

    public IReadOnlyCollection<CircuitBreaker> Breakers => (IReadOnlyCollection<CircuitBreaker>)_breakers.Values;

    public CircuitBreaker Get(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (_breakers.TryGetValue(name, out CircuitBreaker? breaker)) return breaker;
        throw new KeyNotFoundException(
            $"no breaker named '{name}' (configured: {string.Join(", ", _settings.CurrentValue.Breakers.Keys.Select(k => $"'{k}'"))})");
    }

    public CircuitBreaker GetOrCreate(string name, CircuitBreakerOptions? options = null)
    {
        // The request path: a lookup by a string the caller already holds.
        if (_breakers.TryGetValue(name, out CircuitBreaker? breaker)) return breaker;
        return Create(name, options);
    }

    // Apart, so that the closure is allocated only when a breaker is made.
    private CircuitBreaker Create(string name, CircuitBreakerOptions? options) =>
        _breakers.GetOrAdd(name, n => Registry.GetOrCreate(n, Configured(n) ?? options));

    private CircuitBreakerOptions? Configured(string name) =>
        _settings.CurrentValue.Breakers.TryGetValue(name, out CircuitBreakerOptions? options) ? options : null;

    private void Reload(LazyBreakerSettings settings)
    {
        lock (_reloadLock)
        {
            foreach (var (name, options) in settings.Breakers)
            {
                try
                {
                    if (!_breakers.TryGetValue(name, out CircuitBreaker? live))
                    {
                        _breakers.GetOrAdd(name, Registry.GetOrCreate(name, options));
                        continue;
                    }
                    // The library compares: the same configuration finds the
                    // live breaker, another is refused naming the option.
                    Registry.GetOrCreate(name, options).Dispose();
                    _refusals.Remove(name);
                }
                catch (BreakerExistsException e)
                {
                    if (IsNewRefusal(name, e)) LogReloadRefused(_logger, name, e.Option ?? "an option", e);
                }
                catch (ArgumentException e)
                {
                    if (IsNewRefusal(name, e)) LogReloadInvalid(_logger, name, e.ParamName ?? "an option", e);
                }
            }
        }
    }

    private bool IsNewRefusal(string name, Exception refusal)
    {
        if (_refusals.TryGetValue(name, out string? last) && last == refusal.Message) return false;
        _refusals[name] = refusal.Message;
        return true;
    }

    [LoggerMessage(EventId = 1, Level = LogLevel.Error,
                   Message = "Configuration reload refused for breaker '{Breaker}': its {Option} changed, and a live breaker cannot be reconfigured; it keeps its options and state until the process restarts")]
    private static partial void LogReloadRefused(ILogger logger, string breaker, string option, Exception error);

    [LoggerMessage(EventId = 2, Level = LogLevel.Error,
                   Message = "Configuration reload refused for breaker '{Breaker}': {Option} is invalid")]
    private static partial void LogReloadInvalid(ILogger logger, string breaker, string option, Exception error);

    public void Dispose()
    {
        _reloads?.Dispose();
        // The breakers stay in the registry (GetOrCreate's objects only let go).
        foreach (CircuitBreaker breaker in _breakers.Values) breaker.Dispose();
    }
}
