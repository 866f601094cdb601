using System;
using System.ComponentModel.DataAnnotations;
using System.Net;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using LazyBreaker.Polly;
using Microsoft.Extensions.DependencyInjection;
using Polly;
using Polly.Retry;
using Xunit;
using PollyBrokenCircuitException = Polly.CircuitBreaker.BrokenCircuitException;
using PollyIsolatedCircuitException = Polly.CircuitBreaker.IsolatedCircuitException;

namespace LazyBreaker.Extensions.Tests;

public sealed class PollyStrategyTests : IDisposable
{
    private readonly Registry _registry = Registry.WithManualClock();
    private readonly CircuitBreaker _breaker;
    private int _calls;

    public PollyStrategyTests() =>
        _breaker = _registry.Create("ledger", new CircuitBreakerOptions { FailureThreshold = 2, BreakDuration = TimeSpan.FromSeconds(30) });

    private static RetryStrategyOptions RetryingRejections(int attempts) => new()
    {
        ShouldHandle = new PredicateBuilder().Handle<InvalidOperationException>().Handle<PollyBrokenCircuitException>(),
        MaxRetryAttempts = attempts,
        Delay = TimeSpan.Zero,
    };

    [Fact]
    public void Inside_a_pipeline_with_pollys_retry_around_it_the_breaker_opens_and_rejects_with_pollys_exception()
    {
        ResiliencePipeline pipeline = new ResiliencePipelineBuilder().AddRetry(RetryingRejections(4)).AddLazyBreaker(_breaker).Build();
        var rejected = Assert.Throws<PollyBrokenCircuitException>(() => pipeline.Execute(() =>
        {
            _calls++;
            throw new InvalidOperationException("the ledger is down");
        }));
        Assert.Equal(2, _calls); // the third and later attempts were rejected without running
        Assert.Equal(CircuitState.Open, _breaker.State);
        Assert.Equal(TimeSpan.FromSeconds(30), rejected.RetryAfter);
        Assert.Equal(3ul, _breaker.Statistics.Rejected);
    }

    [Fact]
    public void An_isolated_breaker_rejects_with_pollys_isolated_exception()
    {
        _breaker.Isolate();
        ResiliencePipeline pipeline = new ResiliencePipelineBuilder().AddLazyBreaker(_breaker).Build();
        Assert.Throws<PollyIsolatedCircuitException>(() => pipeline.Execute(() => _calls++));
        Assert.Equal(0, _calls);
    }

    [Fact]
    public async Task A_call_cancelled_by_its_token_is_neither_success_nor_failure()
    {
        ResiliencePipeline pipeline = new ResiliencePipelineBuilder().AddLazyBreaker(_breaker).Build();
        using var cancel = new CancellationTokenSource();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
            await pipeline.ExecuteAsync(token =>
            {
                cancel.Cancel(); // the caller gives up while the call runs
                token.ThrowIfCancellationRequested();
                return ValueTask.CompletedTask;
            }, cancel.Token));
        Assert.Equal(1ul, _breaker.Statistics.Ignored);
    }

    [Fact]
    public void A_strategy_without_a_breaker_is_refused_naming_the_option()
    {
        var e = Assert.Throws<ValidationException>(() =>
            new ResiliencePipelineBuilder().AddLazyBreaker(new LazyBreakerStrategyOptions()).Build());
        Assert.Contains("Breaker", e.Message);
    }

    [Fact]
    public async Task In_AddResilienceHandler_answers_of_500_open_the_breaker_and_the_next_request_fails_with_pollys_exception()
    {
        var upstream = new StubUpstream();
        upstream.AnswerStatus(HttpStatusCode.InternalServerError);
        var services = new ServiceCollection();
        IHttpClientBuilder ledger = services.AddHttpClient("ledger").ConfigurePrimaryHttpMessageHandler(() => upstream);
        ledger.AddResilienceHandler("lazybreaker", pipeline => pipeline.AddLazyBreaker(_breaker));
        using ServiceProvider provider = services.BuildServiceProvider();
        HttpClient client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("ledger");
        for (int i = 0; i < 2; i++) await client.GetAsync("http://ledger.internal/");
        var rejected = await Assert.ThrowsAsync<PollyBrokenCircuitException>(() => client.GetAsync("http://ledger.internal/"));
        Assert.Equal(TimeSpan.FromSeconds(30), rejected.RetryAfter);
        Assert.Equal(2, upstream.Received);
    }

    [Fact]
    public async Task With_AddStandardResilienceHandler_its_retry_runs_around_the_breaker_handler_and_its_own_breaker_is_off()
    {
        var upstream = new StubUpstream();
        upstream.AnswerStatus(HttpStatusCode.InternalServerError);
        var services = new ServiceCollection();
        services.AddSingleton(_registry);
        IHttpClientBuilder ledger = services.AddHttpClient("ledger").ConfigurePrimaryHttpMessageHandler(() => upstream);
        // Handlers run in the order added: the standard one's retry and
        // timeouts outside, the breaker per attempt inside.
        ledger.AddStandardResilienceHandler(o =>
        {
            o.Retry.MaxRetryAttempts = 1;
            o.Retry.Delay = TimeSpan.Zero;
            o.CircuitBreaker.ShouldHandle = _ => PredicateResult.False();
        });
        ledger.AddLazyBreakerHandler(o =>
        {
            o.BreakerName = "ledger";
            o.BreakerOptions = _breaker.Options; // the breaker the fixture made: GetOrCreate finds it
        });
        using ServiceProvider provider = services.BuildServiceProvider();
        HttpClient client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("ledger");
        Assert.Equal(HttpStatusCode.InternalServerError, (await client.GetAsync("http://ledger.internal/")).StatusCode);
        Assert.Equal(2, upstream.Received); // the first attempt and its retry, both failures: open
        Assert.Equal(CircuitState.Open, _breaker.State);
        await Assert.ThrowsAsync<BrokenCircuitException>(() => client.GetAsync("http://ledger.internal/"));
        Assert.Equal(2, upstream.Received);
    }

    public void Dispose() => _registry.Dispose();
}
