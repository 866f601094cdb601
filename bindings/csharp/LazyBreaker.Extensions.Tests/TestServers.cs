using System;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace LazyBreaker.Extensions.Tests;

/// <summary>A real ASP.NET Core pipeline in memory (TestHost).</summary>
internal static class TestServers
{
    public static async Task<IHost> StartAsync(Action<IServiceCollection> services, Action<IApplicationBuilder> app)
    {
        IHost host = new HostBuilder()
            .ConfigureWebHost(web => web.UseTestServer().ConfigureServices(services).Configure(app))
            .Build();
        await host.StartAsync();
        return host;
    }
}
