using System;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

public class HttpBreakerNameTests
{
    // The table of docs/http.md.
    [Theory]
    [InlineData("https://API.Example.com/v1/users?page=2", "http/api.example.com:443")]
    [InlineData("http://api.example.com/", "http/api.example.com:80")]
    [InlineData("http://127.0.0.1:8080/health", "http/127.0.0.1:8080")]
    [InlineData("https://bücher.example/", "http/xn--bcher-kva.example:443")]
    [InlineData("http://[2001:DB8:0:0::1]:8443/", "http/[2001:db8::1]:8443")]
    [InlineData("https://user:pw@api.example.com:80/v2", "http/api.example.com:80")]
    public void A_url_names_its_upstreams_breaker_by_the_convention(string url, string name)
    {
        Assert.Equal(name, HttpBreakerName.For(new Uri(url)));
    }

    [Fact]
    public void A_relative_url_has_no_upstream()
    {
        var e = Assert.Throws<ArgumentException>(() => HttpBreakerName.For(new Uri("/v1", UriKind.Relative)));
        Assert.Equal("uri", e.ParamName);
    }

    [Theory]
    [InlineData("https://API.Example.com/a", "https://api.example.com/b")]
    [InlineData("http://[2001:DB8::1]:8443/", "http://[2001:db8::1]:8443/x")]
    public void Spellings_that_differ_in_case_share_the_remembered_name(string first, string second)
    {
        var names = new UpstreamNames();
        string a = names.NameFor(new Uri(first));
        Assert.Same(a, names.NameFor(new Uri(second)));
    }

    [Fact]
    public void An_internationalized_host_is_named_each_time_rather_than_remembered_by_its_spelling()
    {
        var names = new UpstreamNames();
        Assert.Equal("http/xn--bcher-kva.example:443", names.NameFor(new Uri("https://BÜCHER.example/")));
        Assert.Equal("http/xn--bcher-kva.example:443", names.NameFor(new Uri("https://bücher.example/")));
    }
}
