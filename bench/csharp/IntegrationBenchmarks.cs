using System;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using LazyBreaker.Extensions;
using LazyBreaker.Polly;
using Microsoft.Extensions.DependencyInjection;
using Polly;
using Polly.CircuitBreaker;

namespace LazyBreaker.Bench;

/// <summary>
/// The integrations' cost: a request through AddLazyBreakerHandler against
/// the same request without it (over a stub upstream that answers at once,
/// so the difference is the handler's; and a real loopback round trip, the
/// figure it is compared with), and our breaker as a Polly strategy against
/// Polly's own circuit breaker strategy in the same pipeline.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class IntegrationBenchmarks
{
    internal const int Ops = 10_000;
    internal const int LoopbackOps = 200;

    private Registry _registry = null!;
    private ServiceProvider _services = null!;
    private HttpMessageInvoker _bare = null!, _guarded = null!;
    private HttpRequestMessage _request = null!;
    private HttpClient _loopback = null!;
    private HttpListener _listener = null!;
    private string _loopbackUrl = null!;
    private ResiliencePipeline _pollyBreaker = null!, _ourBreaker = null!;
    private int _sink;

    /// <summary>Answers every request 200 at once, with the same completed task.</summary>
    private sealed class InstantUpstream : HttpMessageHandler
    {
        private readonly Task<HttpResponseMessage> _answer = Task.FromResult(new HttpResponseMessage(HttpStatusCode.OK));

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken) => _answer;
    }

    [GlobalSetup]
    public void Setup()
    {
        _registry = Registry.Open();
        _services = new ServiceCollection().AddLogging().AddSingleton(_registry).AddLazyBreaker().BuildServiceProvider();
        var upstream = new InstantUpstream();
        _bare = new HttpMessageInvoker(upstream, disposeHandler: false);
        _guarded = new HttpMessageInvoker(new LazyBreakerHandler(_services.GetRequiredService<ILazyBreakerProvider>(),
                                                                 new LazyBreakerHandlerOptions(), new UpstreamNames())
                                          { InnerHandler = upstream });
        _request = new HttpRequestMessage(HttpMethod.Get, "http://127.0.0.1:8080/items");

        int port = FreePort();
        _loopbackUrl = $"http://127.0.0.1:{port}/";
        _listener = new HttpListener();
        _listener.Prefixes.Add(_loopbackUrl);
        _listener.Start();
        _ = Task.Run(Serve);
        _loopback = new HttpClient();

        _pollyBreaker = new ResiliencePipelineBuilder()
            .AddCircuitBreaker(new CircuitBreakerStrategyOptions { FailureRatio = 0.5, MinimumThroughput = 2 }).Build();
        _ourBreaker = new ResiliencePipelineBuilder()
            .AddLazyBreaker(_registry.Create("polly-strategy", new CircuitBreakerOptions
            {
                Policy = TripPolicy.CountWindow, WindowSize = 100, MinimumThroughput = 2,
            })).Build();
    }

    private async Task Serve()
    {
        byte[] body = "ok"u8.ToArray();
        while (_listener.IsListening)
        {
            HttpListenerContext context;
            try { context = await _listener.GetContextAsync(); }
            catch (Exception) { return; }
            context.Response.StatusCode = 200;
            context.Response.ContentLength64 = body.Length;
            await context.Response.OutputStream.WriteAsync(body);
            context.Response.Close();
        }
    }

    private static int FreePort()
    {
        using var socket = new TcpListener(IPAddress.Loopback, 0);
        socket.Start();
        return ((IPEndPoint)socket.LocalEndpoint).Port;
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _listener.Close();
        _loopback.Dispose();
        _services.Dispose();
        _registry.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops), BenchmarkCategory("handler")]
    public void Stub_upstream_bare()
    {
        for (int i = 0; i < Ops; i++) _sink += (int)_bare.SendAsync(_request, CancellationToken.None).Result.StatusCode;
    }

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("handler")]
    public void Stub_upstream_through_AddLazyBreakerHandler()
    {
        for (int i = 0; i < Ops; i++) _sink += (int)_guarded.SendAsync(_request, CancellationToken.None).Result.StatusCode;
    }

    [Benchmark(OperationsPerInvoke = LoopbackOps), BenchmarkCategory("loopback")]
    public async Task Loopback_round_trip_bare_HttpClient()
    {
        for (int i = 0; i < LoopbackOps; i++)
        {
            using HttpResponseMessage answer = await _loopback.GetAsync(_loopbackUrl);
            _sink += (int)answer.StatusCode;
        }
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops), BenchmarkCategory("polly")]
    public void Polly_pipeline_with_Pollys_breaker()
    {
        for (int i = 0; i < Ops; i++) _sink += _pollyBreaker.Execute(static () => 1);
    }

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("polly")]
    public void Polly_pipeline_with_AddLazyBreaker()
    {
        for (int i = 0; i < Ops; i++) _sink += _ourBreaker.Execute(static () => 1);
    }
}
