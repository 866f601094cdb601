using System;
using System.Net.Http;
using Microsoft.Extensions.DependencyInjection;

namespace LazyBreaker.Extensions.Tests;

/// <summary>An HttpClient from IHttpClientFactory with the breaker handler over a <see cref="StubUpstream"/>, its breakers in a manual-clock registry.</summary>
internal sealed class ClientRig : IDisposable
{
    public ClientRig(Action<LazyBreakerHandlerOptions>? configure = null)
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddSingleton(Registry);
        services.AddHttpClient("upstream")
                .AddLazyBreakerHandler(configure ?? (o => o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 2 }))
                .ConfigurePrimaryHttpMessageHandler(() => Upstream);
        Services = services.BuildServiceProvider();
        Client = Services.GetRequiredService<IHttpClientFactory>().CreateClient("upstream");
    }

    public Registry Registry { get; } = Registry.WithManualClock();
    public StubUpstream Upstream { get; } = new();
    public ServiceProvider Services { get; }
    public HttpClient Client { get; }
    public ILazyBreakerProvider Breakers => Services.GetRequiredService<ILazyBreakerProvider>();

    public void Dispose()
    {
        Client.Dispose();
        Services.Dispose();
        Registry.Dispose();
    }
}
