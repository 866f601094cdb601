using System;
using System.Globalization;

namespace LazyBreaker.Extensions;

/// <summary>The name of an upstream's breaker by the HTTP convention (docs/http.md): <c>http/&lt;host&gt;:&lt;port&gt;</c>.</summary>
public static class HttpBreakerName
{
    /// <summary>
    /// <c>http/&lt;host&gt;:&lt;port&gt;</c>: the host lowercased, in its ASCII
    /// (punycode) form, an IPv6 address in brackets in its shortest form; the
    /// port always written (80 for http, 443 for https when the URL has none).
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="uri"/> is not absolute.</exception>
    public static string For(Uri uri)
    {
        ArgumentNullException.ThrowIfNull(uri);
        if (!uri.IsAbsoluteUri) throw new ArgumentException($"an upstream's breaker is named from an absolute URL, got '{uri}'", nameof(uri));
        // IdnHost is the punycode form and keeps an IPv6 address's brackets;
        // Uri has already compressed and lowercased the address.
        string host = uri.IdnHost.ToLowerInvariant();
        if (uri.HostNameType == UriHostNameType.IPv6 && !host.StartsWith('[')) host = "[" + host + "]";
        int port = uri.Port >= 0 ? uri.Port : string.Equals(uri.Scheme, "https", StringComparison.OrdinalIgnoreCase) ? 443 : 80;
        return string.Create(CultureInfo.InvariantCulture, $"http/{host}:{port}");
    }
}
