using System;
using System.Net.Http;

namespace LazyBreaker.Extensions;

/// <summary>How long an answer's <c>Retry-After</c> asks to wait, by the HTTP convention.</summary>
internal static class RetryAfterHeader
{
    /// <summary>
    /// The wait of a 429 or 503's <c>Retry-After</c> (delta-seconds or an HTTP
    /// date counted from the wall clock, read only then), capped by the library's
    /// longest trip; null when there is none to honour (another status, no
    /// header, unreadable, zero or past).
    /// </summary>
    public static TimeSpan? WaitOf(HttpResponseMessage response)
    {
        int status = (int)response.StatusCode;
        if (status != 429 && status != 503) return null;
        var header = response.Headers.RetryAfter;
        if (header == null) return null;
        TimeSpan wait = header.Delta ?? (header.Date is DateTimeOffset date ? date - DateTimeOffset.UtcNow : TimeSpan.Zero);
        if (wait < CircuitBreaker.MinTripDuration) return null;
        return wait > CircuitBreaker.MaxTripDuration ? CircuitBreaker.MaxTripDuration : wait;
    }
}
