using System;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.DependencyInjection;
using Xunit;
using Xunit.Abstractions;

namespace LazyBreaker.Extensions.Tests;

public class HandlerAllocationTests
{
    private const int Requests = 10_000;
    private readonly ITestOutputHelper _output;

    public HandlerAllocationTests(ITestOutputHelper output) => _output = output;

    [Fact]
    public void The_breaker_part_of_a_request_allocates_nothing_once_warm()
    {
        using var registry = Registry.WithManualClock();
        var services = new ServiceCollection().AddLogging().AddSingleton(registry).AddLazyBreaker();
        using ServiceProvider provider = services.BuildServiceProvider();
        // One answer for every request: what the stub allocates is not counted.
        var answer = Task.FromResult(new HttpResponseMessage(System.Net.HttpStatusCode.OK));
        var upstream = new StubUpstream { Answer = (_, _) => answer };
        var handler = new LazyBreakerHandler(provider.GetRequiredService<ILazyBreakerProvider>(), new LazyBreakerHandlerOptions(),
                                             new UpstreamNames()) { InnerHandler = upstream };
        using var bare = new HttpMessageInvoker(upstream, disposeHandler: false);
        using var guarded = new HttpMessageInvoker(handler, disposeHandler: false);

        long bareBytes = AllocatedBySending(bare);
        long guardedBytes = AllocatedBySending(guarded);
        _output.WriteLine($"{Requests} requests: {bareBytes} B bare, {guardedBytes} B through the breaker handler");
        Assert.Equal(bareBytes, guardedBytes);
        // Every guarded request went through the breaker (the bare ones did not).
        Assert.Equal((ulong)(Requests + 100), provider.GetRequiredService<ILazyBreakerProvider>()
                                                      .Get("http/api.example.com:443").Statistics.Successes);
    }

    // New requests made before counting (the caller's allocation), a warm-up
    // (the thread's permit slots, the name cache, JIT), then the count.
    private static long AllocatedBySending(HttpMessageInvoker invoker)
    {
        var requests = new HttpRequestMessage[Requests + 100];
        for (int i = 0; i < requests.Length; i++) requests[i] = new HttpRequestMessage(HttpMethod.Get, $"https://api.example.com/items/{i}");
        for (int i = 0; i < 100; i++) invoker.SendAsync(requests[i], CancellationToken.None).GetAwaiter().GetResult();
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 100; i < requests.Length; i++) invoker.SendAsync(requests[i], CancellationToken.None).GetAwaiter().GetResult();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }
}
