using System;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using LazyBreaker.HealthChecks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

/// <summary>The health check through a real endpoint: MapHealthChecks answers 200 Healthy or Degraded, 503 Unhealthy.</summary>
public sealed class HealthCheckTests : IDisposable
{
    private readonly Registry _registry = Registry.WithManualClock();

    private async Task<(IHost Host, CircuitBreaker Breaker)> Start(Action<LazyBreakerHealthCheckOptions>? configure = null)
    {
        IHost host = await TestServers.StartAsync(services =>
        {
            services.AddSingleton(_registry).AddRouting();
            services.AddHealthChecks().AddLazyBreaker(configure: configure);
        }, app => app.UseRouting().UseEndpoints(endpoints => endpoints.MapHealthChecks("/health")));
        var breaker = host.Services.GetRequiredService<Extensions.ILazyBreakerProvider>()
                          .GetOrCreate("inventory", new CircuitBreakerOptions { BreakDuration = TimeSpan.FromSeconds(5) });
        return (host, breaker);
    }

    private static async Task<(HttpStatusCode, string)> Health(IHost host)
    {
        HttpResponseMessage answer = await host.GetTestClient().GetAsync("/health");
        return (answer.StatusCode, await answer.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Closed_is_healthy_open_and_half_open_degraded_forced_open_unhealthy()
    {
        var (host, breaker) = await Start();
        using (host)
        {
            Assert.Equal((HttpStatusCode.OK, "Healthy"), await Health(host));
            breaker.Trip(TimeSpan.FromSeconds(5));
            Assert.Equal((HttpStatusCode.OK, "Degraded"), await Health(host));
            _registry.Advance(TimeSpan.FromSeconds(5));
            Assert.True(breaker.TryAcquire(out Permit probe));
            Assert.Equal(CircuitState.HalfOpen, breaker.State);
            Assert.Equal((HttpStatusCode.OK, "Degraded"), await Health(host));
            probe.Success();
            Assert.Equal((HttpStatusCode.OK, "Healthy"), await Health(host));
            breaker.Isolate();
            Assert.Equal((HttpStatusCode.ServiceUnavailable, "Unhealthy"), await Health(host));
        }
    }

    [Fact]
    public async Task What_each_state_reports_is_configurable()
    {
        var (host, breaker) = await Start(o => o.Open = HealthStatus.Unhealthy);
        using (host)
        {
            breaker.Trip(TimeSpan.FromSeconds(5));
            Assert.Equal((HttpStatusCode.ServiceUnavailable, "Unhealthy"), await Health(host));
        }
    }

    public void Dispose() => _registry.Dispose();
}
