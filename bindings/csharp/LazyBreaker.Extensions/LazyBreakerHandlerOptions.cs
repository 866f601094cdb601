using System;

namespace LazyBreaker.Extensions;

/// <summary>Which breaker a <see cref="LazyBreakerHandler"/> puts in front of a request.</summary>
public sealed class LazyBreakerHandlerOptions
{
    /// <summary>One breaker for every request of the client, by this name; null (the default): a breaker per upstream, named by <see cref="NameFor"/>.</summary>
    public string? BreakerName { get; set; }

    /// <summary>Names the breaker of a request's URL; null (the default): <see cref="HttpBreakerName.For"/>, <c>http/&lt;host&gt;:&lt;port&gt;</c>.</summary>
    public Func<Uri, string>? NameFor { get; set; }

    /// <summary>The options of a breaker the handler creates, unless configuration (<c>Breakers:&lt;name&gt;</c>) gives that name its own; null: the library's defaults.</summary>
    public CircuitBreakerOptions? BreakerOptions { get; set; }
}
