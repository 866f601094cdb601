// The C# client of one_upstream.py: for each "call" line on stdin, one GET
// of the URL through AddLazyBreakerHandler over the registry file, with the
// settings every client shares (one failure trips, open for 2 s).
//
//     dotnet CrossLanguageHttpClient.dll REGISTRY_FILE URL
using System;
using System.Net.Http;
using LazyBreaker;
using LazyBreaker.Extensions;
using Microsoft.Extensions.DependencyInjection;

string file = args[^2];
string url = args[^1];
using Registry registry = Registry.OpenShared(file);
var services = new ServiceCollection();
services.AddLogging();
services.AddSingleton(registry);
services.AddHttpClient("upstream")
        .AddLazyBreakerHandler(o => o.BreakerOptions = new CircuitBreakerOptions
        {
            FailureThreshold = 1,
            BreakDuration = TimeSpan.FromSeconds(2),
        });
using ServiceProvider provider = services.BuildServiceProvider();
HttpClient client = provider.GetRequiredService<IHttpClientFactory>().CreateClient("upstream");
Console.WriteLine("ready");
while (Console.ReadLine() != null)
{
    try
    {
        using HttpResponseMessage answer = await client.GetAsync(url);
        Console.WriteLine($"sent {(int)answer.StatusCode}");
    }
    catch (BrokenCircuitException)
    {
        Console.WriteLine("rejected");
    }
}
