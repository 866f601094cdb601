using System;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Threading.Tasks;
using LazyBreaker.Extensions;
using Microsoft.AspNetCore.Http;

namespace LazyBreaker.AspNetCore;

/// <summary>
/// The server side of the HTTP convention (docs/http.md): while the breaker
/// rejects, the request is answered 503 at once, without running the
/// application, with <c>Retry-After</c> (whole seconds rounded up, at least
/// 1; none while forced open) and an RFC 9457 problem; otherwise the
/// application's answer is the outcome (500 or more, or an exception, is a
/// failure; a request the client aborted is neither).
/// </summary>
public sealed class LazyBreakerMiddleware
{
    private static readonly JsonSerializerOptions s_json = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };
    private readonly RequestDelegate _next;
    private readonly CircuitBreaker _breaker;

    /// <summary>Created by <see cref="ApplicationBuilderExtensions.UseLazyBreaker(Microsoft.AspNetCore.Builder.IApplicationBuilder, CircuitBreaker)"/>.</summary>
    public LazyBreakerMiddleware(RequestDelegate next, CircuitBreaker breaker)
    {
        _next = next;
        _breaker = breaker;
    }

    /// <summary>Runs the request behind the breaker.</summary>
    public async Task InvokeAsync(HttpContext context)
    {
        if (!_breaker.TryAcquire(out Permit permit))
        {
            await Unavailable(context).ConfigureAwait(false);
            return;
        }
        try
        {
            await _next(context).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
        {
            permit.Ignore();
            throw;
        }
        catch
        {
            permit.Failure();
            throw;
        }
        if (context.Response.StatusCode >= 500) permit.Failure();
        else permit.Success();
    }

    private Task Unavailable(HttpContext context)
    {
        TimeSpan? wait = _breaker.RetryAfter;
        string state = StateLabel.Of(_breaker.State);
        long? seconds = wait is TimeSpan w ? Math.Max(1, (long)Math.Ceiling(w.TotalSeconds)) : null;
        var problem = new
        {
            type = "about:blank",
            title = "Service Unavailable",
            status = 503,
            detail = seconds is null
                ? $"The circuit '{_breaker.Name}' is forced open until an operator resets it."
                : $"The circuit '{_breaker.Name}' is {state}: retry after {seconds} s.",
            instance = (context.Request.PathBase + context.Request.Path).ToString(),
            circuit = _breaker.Name,
            state,
            retryAfter = seconds,
        };
        HttpResponse response = context.Response;
        response.StatusCode = StatusCodes.Status503ServiceUnavailable;
        response.ContentType = "application/problem+json";
        response.Headers.CacheControl = "no-store";
        if (seconds is long s) response.Headers.RetryAfter = s.ToString(System.Globalization.CultureInfo.InvariantCulture);
        return response.WriteAsync(JsonSerializer.Serialize(problem, s_json));
    }
}
