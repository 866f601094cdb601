using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using LazyBreaker.Extensions;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace LazyBreaker.HealthChecks;

/// <summary>
/// Reports the worst state of the breakers it reads: Healthy while all are
/// closed or disabled, else the status <see cref="LazyBreakerHealthCheckOptions"/>
/// gives the state; the data holds each breaker's state.
/// </summary>
public sealed class LazyBreakerHealthCheck : IHealthCheck
{
    private readonly ILazyBreakerProvider _provider;
    private readonly LazyBreakerHealthCheckOptions _options;

    /// <summary>Created by <see cref="HealthChecksBuilderExtensions.AddLazyBreaker"/>.</summary>
    public LazyBreakerHealthCheck(ILazyBreakerProvider provider, LazyBreakerHealthCheckOptions options)
    {
        _provider = provider;
        _options = options;
    }

    /// <inheritdoc />
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        IEnumerable<CircuitBreaker> breakers = _options.Breakers.Count == 0
            ? _provider.Breakers
            : _options.Breakers.Select(_provider.Get);
        HealthStatus worst = HealthStatus.Healthy;
        var data = new Dictionary<string, object>();
        var unwell = new List<string>();
        foreach (CircuitBreaker breaker in breakers)
        {
            CircuitState state = breaker.State;
            data[breaker.Name] = StateLabel.Of(state);
            HealthStatus status = StatusOf(state);
            if (status == HealthStatus.Healthy) continue;
            unwell.Add($"'{breaker.Name}' is {StateLabel.Of(state)}");
            if (status < worst) worst = status;
        }
        string description = unwell.Count == 0 ? "every circuit is closed" : string.Join(", ", unwell);
        return Task.FromResult(new HealthCheckResult(worst, description, data: data));
    }

    private HealthStatus StatusOf(CircuitState state) => state switch
    {
        CircuitState.Open => _options.Open,
        CircuitState.HalfOpen => _options.HalfOpen,
        CircuitState.Isolated => _options.ForcedOpen,
        _ => HealthStatus.Healthy,
    };
}
