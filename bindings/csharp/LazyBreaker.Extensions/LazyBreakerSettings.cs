using System;
using System.Collections.Generic;

namespace LazyBreaker.Extensions;

/// <summary>The configuration section <see cref="ServiceCollectionExtensions.AddLazyBreaker(Microsoft.Extensions.DependencyInjection.IServiceCollection, Microsoft.Extensions.Configuration.IConfiguration)"/> binds (e.g. "LazyBreaker" of appsettings.json).</summary>
public sealed class LazyBreakerSettings
{
    /// <summary>A registry file shared with other processes (docs/shared-registries.md), created if missing; null: a registry private to this process. Read at start only.</summary>
    public string? Path { get; set; }

    /// <summary>Named breakers, created at start: <c>Breakers:&lt;name&gt;:&lt;option&gt;</c> with the names of <see cref="CircuitBreakerOptions"/>.</summary>
    public Dictionary<string, CircuitBreakerOptions> Breakers { get; } = new(StringComparer.Ordinal);

    /// <summary>How often the hosted service drains the registry's event queue into the log and the transitions counter (the library has no timer of its own).</summary>
    public TimeSpan EventPollInterval { get; set; } = TimeSpan.FromSeconds(1);
}
