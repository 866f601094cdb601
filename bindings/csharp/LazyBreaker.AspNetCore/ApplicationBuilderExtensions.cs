using System;
using LazyBreaker.Extensions;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;

namespace LazyBreaker.AspNetCore;

/// <summary>Puts a breaker in front of the rest of an ASP.NET Core pipeline.</summary>
public static class ApplicationBuilderExtensions
{
    /// <summary>Adds <see cref="LazyBreakerMiddleware"/> over <paramref name="breaker"/>.</summary>
    public static IApplicationBuilder UseLazyBreaker(this IApplicationBuilder app, CircuitBreaker breaker)
    {
        ArgumentNullException.ThrowIfNull(breaker);
        return app.UseMiddleware<LazyBreakerMiddleware>(breaker);
    }

    /// <summary>Adds <see cref="LazyBreakerMiddleware"/> over the breaker named <paramref name="name"/> of <see cref="ILazyBreakerProvider"/> (configured, or created with default options).</summary>
    public static IApplicationBuilder UseLazyBreaker(this IApplicationBuilder app, string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return app.UseLazyBreaker(app.ApplicationServices.GetRequiredService<ILazyBreakerProvider>().GetOrCreate(name));
    }
}
