using System;
using System.IO;
using System.Linq;
using System.Text.Json;
using LazyBreaker;
using Xunit;

namespace LazyBreaker.PackageTests;

// Runs through the installed package: the assembly and the natives come
// from the .nupkg (runtimes/linux-x64/native/), not from the build tree.
[Trait("Category", "package")]
public class PackageTests
{
    [Fact]
    public void A_call_through_the_package_is_admitted_and_a_trip_rejects_the_next()
    {
        using var registry = Registry.WithManualClock();
        using var breaker = registry.Create("from-the-package", new CircuitBreakerOptions { FailureThreshold = 1 });
        Assert.Equal(42, breaker.Execute(() => 42));
        Assert.Throws<InvalidOperationException>(() => breaker.Execute<int>(() => throw new InvalidOperationException()));
        var rejected = Assert.Throws<BrokenCircuitException>(() => breaker.Execute(() => 0));
        Assert.Equal("from-the-package", rejected.BreakerName);
        Assert.Equal(TimeSpan.FromSeconds(30), rejected.RetryAfter);
    }

    [Fact]
    public void LazyBreaker_resolves_as_a_package_and_its_natives_from_runtimes_linux_x64_native()
    {
        using (var registry = Registry.WithManualClock())
        {
            registry.Create("load-the-natives").Dispose();
        }
        string deps = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "LazyBreaker.PackageTests.deps.json"));
        using var json = JsonDocument.Parse(deps);
        var library = json.RootElement.GetProperty("libraries").EnumerateObject()
                          .Single(p => p.Name.StartsWith("LazyBreaker/", StringComparison.Ordinal));
        Assert.Equal("package", library.Value.GetProperty("type").GetString());

        string[] mapped = File.ReadAllLines("/proc/self/maps");
        string native = Path.Combine("runtimes", "linux-x64", "native");
        Assert.Contains(mapped, line => line.EndsWith(Path.Combine(native, "liblazybreaker_csharp.so"), StringComparison.Ordinal));
        Assert.Contains(mapped, line => line.EndsWith(Path.Combine(native, "liblazybreaker.so.1"), StringComparison.Ordinal));
    }
}
