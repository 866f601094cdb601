using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using LazyBreaker.Extensions;
using LazyBreaker.Polly;
using Microsoft.Extensions.DependencyInjection;
using Polly;
using Xunit;

namespace LazyBreaker.PackageTests;

// The integration packages as a user installs them from the feed.
[Trait("Category", "package")]
public class IntegrationPackageTests
{
    private sealed class FailingUpstream : HttpMessageHandler
    {
        public int Received;

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            Received++;
            return Task.FromResult(new HttpResponseMessage(HttpStatusCode.InternalServerError));
        }
    }

    [Theory]
    [InlineData("LazyBreaker.Extensions")]
    [InlineData("LazyBreaker.AspNetCore")]
    [InlineData("LazyBreaker.HealthChecks")]
    [InlineData("LazyBreaker.Polly")]
    public void Each_integration_resolves_as_a_package(string id)
    {
        string deps = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "LazyBreaker.PackageTests.deps.json"));
        using var json = JsonDocument.Parse(deps);
        var library = json.RootElement.GetProperty("libraries").EnumerateObject()
                          .Single(p => p.Name.StartsWith(id + "/", StringComparison.Ordinal));
        Assert.Equal("package", library.Value.GetProperty("type").GetString());
    }

    [Fact]
    public async Task The_handler_from_the_package_opens_the_upstreams_breaker_and_stops_sending()
    {
        using var registry = Registry.WithManualClock();
        var upstream = new FailingUpstream();
        var services = new ServiceCollection().AddLogging().AddSingleton(registry);
        services.AddHttpClient("up").AddLazyBreakerHandler(o => o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 1 })
                .ConfigurePrimaryHttpMessageHandler(() => upstream);
        using ServiceProvider provider = services.BuildServiceProvider();
        HttpClient client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("up");
        await client.GetAsync("http://127.0.0.1:9/");
        await Assert.ThrowsAsync<BrokenCircuitException>(() => client.GetAsync("http://127.0.0.1:9/"));
        Assert.Equal(1, upstream.Received);
    }

    [Fact]
    public void The_polly_strategy_from_the_package_rejects_with_pollys_exception()
    {
        using var registry = Registry.WithManualClock();
        CircuitBreaker breaker = registry.Create("polly-package");
        breaker.Trip(TimeSpan.FromSeconds(5));
        ResiliencePipeline pipeline = new ResiliencePipelineBuilder().AddLazyBreaker(breaker).Build();
        var rejected = Assert.Throws<global::Polly.CircuitBreaker.BrokenCircuitException>(() => pipeline.Execute(() => 1));
        Assert.Equal(TimeSpan.FromSeconds(5), rejected.RetryAfter);
    }
}
