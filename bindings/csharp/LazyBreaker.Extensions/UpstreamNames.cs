using System;
using System.Threading;

namespace LazyBreaker.Extensions;

/// <summary>
/// The breaker names of the upstreams one client calls, remembered by the
/// raw <c>scheme://authority</c> of the request URL so that a request to a
/// known upstream finds its name without allocating (HttpBreakerName.For
/// builds a new string each time).
/// </summary>
internal sealed class UpstreamNames
{
    // Few upstreams per client: a copy-on-write array read without a lock.
    // Past Capacity (a client calling many hosts) names are computed each time.
    private const int Capacity = 64;
    private Entry[] _entries = Array.Empty<Entry>();
    private readonly object _writeLock = new();

    private sealed record Entry(string RawAuthority, string Name);

    public string NameFor(Uri uri)
    {
        ReadOnlySpan<char> raw = RawAuthority(uri);
        if (!raw.IsEmpty)
        {
            foreach (Entry entry in Volatile.Read(ref _entries))
            {
                if (raw.Equals(entry.RawAuthority, StringComparison.OrdinalIgnoreCase)) return entry.Name;
            }
        }
        string name = HttpBreakerName.For(uri);
        if (!raw.IsEmpty) Remember(raw.ToString(), name);
        return name;
    }

    private void Remember(string raw, string name)
    {
        lock (_writeLock)
        {
            Entry[] entries = _entries;
            if (entries.Length >= Capacity) return;
            var grown = new Entry[entries.Length + 1];
            entries.CopyTo(grown, 0);
            grown[^1] = new Entry(raw, name);
            Volatile.Write(ref _entries, grown);
        }
    }

    // "scheme://userinfo@host:port" of the URL as written, or empty when it
    // is not ASCII: two ASCII spellings equal but for case name one upstream
    // (the scheme, the host and an IPv6 address are case-insensitive), which
    // is not sure once IDNA maps the host.
    private static ReadOnlySpan<char> RawAuthority(Uri uri)
    {
        ReadOnlySpan<char> url = uri.OriginalString.AsSpan().Trim();
        int separator = url.IndexOf("://", StringComparison.Ordinal);
        if (separator <= 0) return default;
        int start = separator + 3;
        int length = url[start..].IndexOfAny('/', '?', '#');
        ReadOnlySpan<char> raw = length < 0 ? url : url[..(start + length)];
        foreach (char c in raw)
        {
            if (c > 0x7f || c == '%') return default;
        }
        return raw;
    }
}
