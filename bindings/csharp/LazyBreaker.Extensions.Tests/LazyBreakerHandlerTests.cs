using System;
using System.Net;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

public class LazyBreakerHandlerTests
{
    private const string Url = "http://127.0.0.1:8080/orders";
    private const string Breaker = "http/127.0.0.1:8080";

    [Fact]
    public async Task Answers_of_500_or_more_are_failures_that_open_the_upstreams_breaker_and_then_nothing_is_sent()
    {
        using var rig = new ClientRig();
        rig.Upstream.AnswerStatus(HttpStatusCode.BadGateway);
        for (int i = 0; i < 2; i++) Assert.Equal(HttpStatusCode.BadGateway, (await rig.Client.GetAsync(Url)).StatusCode);
        CircuitBreaker breaker = rig.Breakers.Get(Breaker);
        Assert.Equal(CircuitState.Open, breaker.State);

        var rejected = await Assert.ThrowsAsync<BrokenCircuitException>(() => rig.Client.GetAsync(Url));
        Assert.Equal(2, rig.Upstream.Received);
        Assert.Equal(Breaker, rejected.BreakerName);
        Assert.Equal(breaker.RetryAfter, rejected.RetryAfter);
        Assert.NotNull(rejected.RetryAfter);
    }

    [Fact]
    public async Task A_4xx_answer_is_the_callers_fault_and_a_success()
    {
        using var rig = new ClientRig();
        rig.Upstream.AnswerStatus(HttpStatusCode.NotFound);
        for (int i = 0; i < 3; i++) await rig.Client.GetAsync(Url);
        BreakerStatistics statistics = rig.Breakers.Get(Breaker).Statistics;
        Assert.Equal(3ul, statistics.Successes);
        Assert.Equal(0ul, statistics.Failures);
    }

    [Fact]
    public async Task No_answer_and_a_timeout_inside_the_pipeline_are_failures()
    {
        using var rig = new ClientRig();
        rig.Upstream.Answer = (_, _) => throw new HttpRequestException("connection refused");
        await Assert.ThrowsAsync<HttpRequestException>(() => rig.Client.GetAsync(Url));
        // A timeout the caller did not ask for: a cancellation of another token.
        rig.Upstream.Answer = (_, _) => Task.FromException<HttpResponseMessage>(new TaskCanceledException("timed out"));
        await Assert.ThrowsAsync<TaskCanceledException>(() => rig.Client.GetAsync(Url));
        Assert.Equal(2ul, rig.Breakers.Get(Breaker).Statistics.Failures);
        Assert.Equal(CircuitState.Open, rig.Breakers.Get(Breaker).State);
    }

    [Fact]
    public async Task A_request_the_caller_cancelled_is_neither_success_nor_failure()
    {
        using var rig = new ClientRig();
        using var cancel = new CancellationTokenSource();
        var answered = new TaskCompletionSource<HttpResponseMessage>();
        rig.Upstream.Answer = (_, token) =>
        {
            token.Register(() => answered.TrySetCanceled(token));
            return answered.Task;
        };
        Task<HttpResponseMessage> call = rig.Client.GetAsync(Url, cancel.Token);
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call);
        BreakerStatistics statistics = rig.Breakers.Get(Breaker).Statistics;
        Assert.Equal(1ul, statistics.Ignored);
        Assert.Equal(0ul, statistics.Failures + statistics.Successes);
    }

    [Theory]
    [InlineData(HttpStatusCode.TooManyRequests)]
    [InlineData(HttpStatusCode.ServiceUnavailable)]
    public async Task A_retry_after_in_seconds_trips_the_breaker_for_exactly_that_long(HttpStatusCode status)
    {
        using var rig = new ClientRig(o => o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 100 });
        rig.Upstream.Answer = (_, _) => Task.FromResult(WithRetryAfter(status, "120"));
        await rig.Client.GetAsync(Url);
        CircuitBreaker breaker = rig.Breakers.Get(Breaker);
        Assert.Equal(CircuitState.Open, breaker.State);
        Assert.Equal(TimeSpan.FromSeconds(120), breaker.RetryAfter);
        rig.Registry.Advance(TimeSpan.FromSeconds(120) - TimeSpan.FromTicks(1));
        await Assert.ThrowsAsync<BrokenCircuitException>(() => rig.Client.GetAsync(Url));
        rig.Registry.Advance(TimeSpan.FromTicks(1));
        rig.Upstream.AnswerStatus(HttpStatusCode.OK);
        Assert.Equal(HttpStatusCode.OK, (await rig.Client.GetAsync(Url)).StatusCode);
        Assert.Equal(2, rig.Upstream.Received);
    }

    [Fact]
    public async Task A_retry_after_date_trips_until_that_date_counted_from_the_wall_clock()
    {
        using var rig = new ClientRig(o => o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 100 });
        DateTimeOffset at = DateTimeOffset.UtcNow.AddHours(1);
        rig.Upstream.Answer = (_, _) => Task.FromResult(WithRetryAfter(HttpStatusCode.ServiceUnavailable, at.ToString("R")));
        await rig.Client.GetAsync(Url);
        TimeSpan? wait = rig.Breakers.Get(Breaker).RetryAfter;
        // The date has whole seconds: the wait is the hour less what the
        // request took and the rounding down, never more.
        Assert.InRange(wait!.Value, TimeSpan.FromMinutes(58), TimeSpan.FromHours(1));
    }

    [Fact]
    public async Task A_longer_retry_after_than_the_librarys_longest_trip_trips_for_that_longest()
    {
        using var rig = new ClientRig(o => o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 100 });
        rig.Upstream.Answer = (_, _) => Task.FromResult(WithRetryAfter(HttpStatusCode.TooManyRequests, "999999999"));
        await rig.Client.GetAsync(Url);
        Assert.Equal(CircuitBreaker.MaxTripDuration, rig.Breakers.Get(Breaker).RetryAfter);
    }

    [Theory]
    [InlineData(HttpStatusCode.TooManyRequests, "0")]
    [InlineData(HttpStatusCode.TooManyRequests, "Wed, 21 Oct 2015 07:28:00 GMT")]
    [InlineData(HttpStatusCode.TooManyRequests, "soon")]
    [InlineData(HttpStatusCode.InternalServerError, "120")]
    [InlineData(HttpStatusCode.OK, "120")]
    public async Task A_retry_after_that_is_zero_past_unreadable_or_on_another_status_trips_nothing(HttpStatusCode status, string retryAfter)
    {
        using var rig = new ClientRig(o => o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 100 });
        rig.Upstream.Answer = (_, _) => Task.FromResult(WithRetryAfter(status, retryAfter));
        await rig.Client.GetAsync(Url);
        CircuitBreaker breaker = rig.Breakers.Get(Breaker);
        Assert.Equal(CircuitState.Closed, breaker.State);
        Assert.Equal(0ul, breaker.Statistics.Trips);
    }

    [Fact]
    public async Task Each_upstream_has_its_own_breaker()
    {
        using var rig = new ClientRig();
        rig.Upstream.AnswerStatus(HttpStatusCode.InternalServerError);
        for (int i = 0; i < 2; i++) await rig.Client.GetAsync("https://a.example/");
        rig.Upstream.AnswerStatus(HttpStatusCode.OK);
        await Assert.ThrowsAsync<BrokenCircuitException>(() => rig.Client.GetAsync("https://A.example:443/other"));
        Assert.Equal(HttpStatusCode.OK, (await rig.Client.GetAsync("https://b.example/")).StatusCode);
        Assert.Equal(CircuitState.Closed, rig.Breakers.Get("http/b.example:443").State);
    }

    [Fact]
    public async Task One_named_breaker_stands_in_front_of_every_upstream_of_the_client()
    {
        using var rig = new ClientRig(o =>
        {
            o.BreakerName = "catalogue";
            o.BreakerOptions = new CircuitBreakerOptions { FailureThreshold = 2 };
        });
        rig.Upstream.AnswerStatus(HttpStatusCode.InternalServerError);
        await rig.Client.GetAsync("https://a.example/");
        await rig.Client.GetAsync("https://b.example/");
        Assert.Equal(CircuitState.Open, rig.Breakers.Get("catalogue").State);
        Assert.Throws<System.Collections.Generic.KeyNotFoundException>(() => rig.Breakers.Get("http/a.example:443"));
    }

    [Fact]
    public async Task A_naming_function_chooses_the_breaker()
    {
        using var rig = new ClientRig(o => o.NameFor = uri => "api" + uri.AbsolutePath.Split('/')[1]);
        await rig.Client.GetAsync("https://a.example/v2/users");
        Assert.Equal(1ul, rig.Breakers.Get("apiv2").Statistics.Successes);
    }

    [Fact]
    public async Task An_isolated_breaker_rejects_with_no_retry_after()
    {
        using var rig = new ClientRig();
        await rig.Client.GetAsync(Url);
        rig.Breakers.Get(Breaker).Isolate();
        var rejected = await Assert.ThrowsAsync<IsolatedCircuitException>(() => rig.Client.GetAsync(Url));
        Assert.Null(rejected.RetryAfter);
        Assert.Equal(1, rig.Upstream.Received);
    }

    private static HttpResponseMessage WithRetryAfter(HttpStatusCode status, string retryAfter)
    {
        var response = new HttpResponseMessage(status);
        response.Headers.TryAddWithoutValidation("Retry-After", retryAfter);
        return response;
    }
}
