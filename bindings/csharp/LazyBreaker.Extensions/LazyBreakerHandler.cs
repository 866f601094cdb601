using System;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace LazyBreaker.Extensions;

/// <summary>
/// A <see cref="DelegatingHandler"/> that puts a breaker in front of each
/// request by the HTTP convention (docs/http.md): while the breaker rejects,
/// nothing is sent and <see cref="BrokenCircuitException"/> is thrown (with
/// <see cref="BrokenCircuitException.RetryAfter"/>); a status of 500 or more,
/// no answer or a timeout is a failure, any other answer a success, a request
/// the caller cancelled neither; a 429 or 503 with <c>Retry-After</c> then
/// trips the breaker for exactly that long. Added by
/// <see cref="HttpClientBuilderExtensions.AddLazyBreakerHandler"/>.
/// </summary>
public sealed class LazyBreakerHandler : DelegatingHandler
{
    private readonly ILazyBreakerProvider _provider;
    private readonly LazyBreakerHandlerOptions _options;
    private readonly UpstreamNames _names;

    internal LazyBreakerHandler(ILazyBreakerProvider provider, LazyBreakerHandlerOptions options, UpstreamNames names)
    {
        _provider = provider;
        _options = options;
        _names = names;
    }

    /// <inheritdoc />
    protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        CircuitBreaker breaker = BreakerOf(request);
        if (!breaker.TryAcquire(out Permit permit)) throw breaker.CreateRejection();
        Task<HttpResponseMessage> sending;
        try
        {
            sending = base.SendAsync(request, cancellationToken);
        }
        catch (Exception e)
        {
            ReportError(permit, e, cancellationToken);
            throw;
        }
        // An answer already there (a cache, a stub) is reported here and its
        // own task returned: no state machine, nothing allocated.
        if (sending.IsCompletedSuccessfully)
        {
            ReportAnswer(breaker, permit, sending.Result);
            return sending;
        }
        return AwaitAnswer(breaker, permit, sending, cancellationToken);
    }

    private static async Task<HttpResponseMessage> AwaitAnswer(CircuitBreaker breaker, Permit permit,
                                                               Task<HttpResponseMessage> sending, CancellationToken cancellationToken)
    {
        HttpResponseMessage response;
        try
        {
            response = await sending.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            ReportError(permit, e, cancellationToken);
            throw;
        }
        ReportAnswer(breaker, permit, response);
        return response;
    }

    private CircuitBreaker BreakerOf(HttpRequestMessage request)
    {
        string name = _options.BreakerName ?? NameOf(request);
        return _provider.GetOrCreate(name, _options.BreakerOptions);
    }

    private string NameOf(HttpRequestMessage request)
    {
        Uri uri = request.RequestUri
                  ?? throw new InvalidOperationException("the request has no RequestUri, so it has no upstream's breaker (set BaseAddress or LazyBreakerHandlerOptions.BreakerName)");
        return _options.NameFor is { } nameFor ? nameFor(uri) : _names.NameFor(uri);
    }

    private static void ReportAnswer(CircuitBreaker breaker, Permit permit, HttpResponseMessage response)
    {
        if ((int)response.StatusCode >= 500) permit.Failure();
        else permit.Success();
        if (RetryAfterHeader.WaitOf(response) is TimeSpan wait) breaker.Trip(wait);
    }

    // The caller's cancellation says nothing of the upstream; every other
    // error (no connection, a reset, a timeout inside the pipeline) is one
    // the upstream caused.
    private static void ReportError(Permit permit, Exception error, CancellationToken cancellationToken)
    {
        if (error is OperationCanceledException && cancellationToken.IsCancellationRequested) permit.Ignore();
        else permit.Failure();
    }
}
