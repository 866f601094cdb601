using System;
using Microsoft.Extensions.DependencyInjection;

namespace LazyBreaker.Extensions;

/// <summary>Puts a breaker on an <see cref="IHttpClientBuilder"/>'s client.</summary>
public static class HttpClientBuilderExtensions
{
    /// <summary>
    /// Adds a <see cref="LazyBreakerHandler"/>: a breaker per upstream
    /// (<c>http/&lt;host&gt;:&lt;port&gt;</c>) or the one of
    /// <see cref="LazyBreakerHandlerOptions.BreakerName"/>, from the
    /// <see cref="ILazyBreakerProvider"/> (registered here with no
    /// configuration unless <see cref="ServiceCollectionExtensions.AddLazyBreaker(IServiceCollection, Microsoft.Extensions.Configuration.IConfiguration)"/> was called).
    /// </summary>
    public static IHttpClientBuilder AddLazyBreakerHandler(this IHttpClientBuilder builder,
                                                           Action<LazyBreakerHandlerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var options = new LazyBreakerHandlerOptions();
        configure?.Invoke(options);
        builder.Services.AddLazyBreaker();
        // One name cache per client, kept across the factory's handler
        // rotations (a handler lives two minutes by default).
        var names = new UpstreamNames();
        return builder.AddHttpMessageHandler(services =>
            new LazyBreakerHandler(services.GetRequiredService<ILazyBreakerProvider>(), options, names));
    }
}
