using System;
using System.Collections.Generic;
using LazyBreaker.Extensions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace LazyBreaker.HealthChecks;

/// <summary>Adds the breakers' health to <c>AddHealthChecks()</c>.</summary>
public static class HealthChecksBuilderExtensions
{
    /// <summary>
    /// Adds a <see cref="LazyBreakerHealthCheck"/> named <paramref name="name"/>
    /// over the <see cref="ILazyBreakerProvider"/>'s breakers (registered
    /// here without configuration unless AddLazyBreaker was called).
    /// </summary>
    public static IHealthChecksBuilder AddLazyBreaker(this IHealthChecksBuilder builder, string name = "lazybreaker",
                                                      Action<LazyBreakerHealthCheckOptions>? configure = null,
                                                      IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var options = new LazyBreakerHealthCheckOptions();
        configure?.Invoke(options);
        builder.Services.AddLazyBreaker();
        return builder.Add(new HealthCheckRegistration(name,
            services => new LazyBreakerHealthCheck(services.GetRequiredService<ILazyBreakerProvider>(), options),
            failureStatus: null, tags));
    }
}
