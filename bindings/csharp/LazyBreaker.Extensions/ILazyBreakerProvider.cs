using System.Collections.Generic;

namespace LazyBreaker.Extensions;

/// <summary>The breakers of the application's registry, by name (<c>[FromKeyedServices("name")] CircuitBreaker</c> resolves the configured ones too).</summary>
public interface ILazyBreakerProvider
{
    /// <summary>The registry every breaker here lives in.</summary>
    Registry Registry { get; }

    /// <summary>A configured breaker, or one created here before.</summary>
    /// <exception cref="KeyNotFoundException">No breaker has that name; the message lists the configured ones.</exception>
    CircuitBreaker Get(string name);

    /// <summary>The breaker of that name, created on first use with its configured options, else <paramref name="options"/>.</summary>
    CircuitBreaker GetOrCreate(string name, CircuitBreakerOptions? options = null);

    /// <summary>Every breaker this provider holds (what the meter reports).</summary>
    IReadOnlyCollection<CircuitBreaker> Breakers { get; }
}
