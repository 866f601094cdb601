using System.Collections.Generic;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace LazyBreaker.HealthChecks;

/// <summary>Which breakers the check reads and what each state reports.</summary>
public sealed class LazyBreakerHealthCheckOptions
{
    /// <summary>The breakers to read, by name; empty (the default): every breaker of the <see cref="Extensions.ILazyBreakerProvider"/>.</summary>
    public IList<string> Breakers { get; } = new List<string>();

    /// <summary>What an open breaker reports (default Degraded: the upstream is failing, this service still answers).</summary>
    public HealthStatus Open { get; set; } = HealthStatus.Degraded;

    /// <summary>What a half-open breaker reports (default Degraded).</summary>
    public HealthStatus HalfOpen { get; set; } = HealthStatus.Degraded;

    /// <summary>What a forced-open breaker reports (default Unhealthy: only an operator closes it).</summary>
    public HealthStatus ForcedOpen { get; set; } = HealthStatus.Unhealthy;
}
