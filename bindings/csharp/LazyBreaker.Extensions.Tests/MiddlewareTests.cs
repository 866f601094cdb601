using System;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;
using LazyBreaker.AspNetCore;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.Hosting;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

public sealed class MiddlewareTests : IDisposable
{
    private readonly Registry _registry = Registry.WithManualClock();
    private readonly CircuitBreaker _breaker;
    private int _ran;
    private int _status = 200;

    public MiddlewareTests() =>
        _breaker = _registry.Create("checkout", new CircuitBreakerOptions { FailureThreshold = 2, BreakDuration = TimeSpan.FromSeconds(30) });

    private Task<IHost> Start() => TestServers.StartAsync(_ => { }, app =>
    {
        app.UseLazyBreaker(_breaker);
        app.Run(context =>
        {
            _ran++;
            if (_status < 0) throw new InvalidOperationException("the application failed");
            context.Response.StatusCode = _status;
            return Task.CompletedTask;
        });
    });

    [Fact]
    public async Task While_open_the_request_is_answered_503_with_retry_after_rounded_up_and_a_problem_without_running_the_application()
    {
        using IHost host = await Start();
        HttpClient client = host.GetTestClient();
        _status = 500;
        for (int i = 0; i < 2; i++) Assert.Equal(HttpStatusCode.InternalServerError, (await client.GetAsync("/checkout")).StatusCode);
        _registry.Advance(TimeSpan.FromMilliseconds(800)); // 29.2 s left: 30 whole seconds

        HttpResponseMessage answer = await client.GetAsync("/checkout?cart=7");
        Assert.Equal(2, _ran);
        Assert.Equal(HttpStatusCode.ServiceUnavailable, answer.StatusCode);
        Assert.Equal("30", answer.Headers.GetValues("Retry-After").Single());
        Assert.Equal("no-store", answer.Headers.CacheControl!.ToString());
        Assert.Equal("application/problem+json", answer.Content.Headers.ContentType!.MediaType);
        Assert.Equal("""{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"The circuit 'checkout' is open: retry after 30 s.","instance":"/checkout","circuit":"checkout","state":"open","retryAfter":30}""",
                     await answer.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task A_wait_under_a_second_is_announced_as_one()
    {
        using IHost host = await Start();
        _breaker.Trip(TimeSpan.FromMilliseconds(10));
        HttpResponseMessage answer = await host.GetTestClient().GetAsync("/");
        Assert.Equal("1", answer.Headers.GetValues("Retry-After").Single());
    }

    [Fact]
    public async Task While_forced_open_there_is_no_retry_after_and_the_detail_calls_an_operator()
    {
        using IHost host = await Start();
        _breaker.Isolate();
        HttpResponseMessage answer = await host.GetTestClient().GetAsync("/checkout");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, answer.StatusCode);
        Assert.False(answer.Headers.Contains("Retry-After"));
        Assert.Equal("""{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"The circuit 'checkout' is forced open until an operator resets it.","instance":"/checkout","circuit":"checkout","state":"forced_open","retryAfter":null}""",
                     await answer.Content.ReadAsStringAsync());
        Assert.Equal(0, _ran);
    }

    [Fact]
    public async Task An_answer_below_500_is_a_success_and_an_exception_a_failure()
    {
        using IHost host = await Start();
        HttpClient client = host.GetTestClient();
        _status = 404;
        await client.GetAsync("/");
        _status = -1;
        await Assert.ThrowsAsync<InvalidOperationException>(() => client.GetAsync("/"));
        Assert.Equal(1ul, _breaker.Statistics.Successes);
        Assert.Equal(1ul, _breaker.Statistics.Failures);
    }

    public void Dispose() => _registry.Dispose();
}
