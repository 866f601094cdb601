using System;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Xunit;

namespace LazyBreaker.Extensions.Tests;

/// <summary>Breakers from a real appsettings.json in a real host.</summary>
public sealed class ConfigurationTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("lazybreaker-config-").FullName;
    private readonly Registry _registry = Registry.WithManualClock();
    private readonly CapturedLog _log = new();

    private string Settings => Path.Combine(_directory, "appsettings.json");

    private const string TwoBreakers = """
        {
          "LazyBreaker": {
            "Breakers": {
              "payments": { "FailureThreshold": 3, "BreakDuration": "00:00:30" },
              "search": { "Policy": "CountWindow", "WindowSize": 20, "MinimumThroughput": 10, "FailureRatio": 0.5 }
            }
          }
        }
        """;

    private IHost Build(string json)
    {
        File.WriteAllText(Settings, json);
        return new HostBuilder()
            .ConfigureAppConfiguration(c => c.AddJsonFile(Settings, optional: false, reloadOnChange: false))
            .ConfigureLogging(l => l.AddProvider(_log))
            .ConfigureServices((context, services) =>
            {
                services.AddSingleton(_registry);
                services.AddLazyBreaker(context.Configuration.GetSection("LazyBreaker"));
            })
            .Build();
    }

    [Fact]
    public async Task The_configured_breakers_exist_at_start_with_their_options()
    {
        using IHost host = Build(TwoBreakers);
        await host.StartAsync();
        Assert.True(_registry.TryGet("payments", out CircuitBreaker payments));
        Assert.Equal(3, payments.Options.FailureThreshold);
        Assert.Equal(TimeSpan.FromSeconds(30), payments.Options.BreakDuration);
        var provider = host.Services.GetRequiredService<ILazyBreakerProvider>();
        Assert.Equal(TripPolicy.CountWindow, provider.Get("search").Options.Policy);
        Assert.Equal(0.5, provider.Get("search").Options.FailureRatio);
        Assert.Same(provider.Get("payments"), host.Services.GetRequiredKeyedService<CircuitBreaker>("payments"));
        await host.StopAsync();
    }

    [Fact]
    public void An_unknown_name_is_an_error_that_lists_the_configured_ones()
    {
        using IHost host = Build(TwoBreakers);
        var e = Assert.Throws<System.Collections.Generic.KeyNotFoundException>(
            () => host.Services.GetRequiredService<ILazyBreakerProvider>().Get("paymnets"));
        Assert.Contains("'payments', 'search'", e.Message);
    }

    [Fact]
    public async Task An_option_out_of_range_stops_the_start_naming_its_key()
    {
        using IHost host = Build(TwoBreakers.Replace("\"FailureThreshold\": 3", "\"FailureThreshold\": 0"));
        var e = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Contains("LazyBreaker:Breakers:payments:FailureThreshold", e.Message);
        Assert.False(_registry.TryGet("payments", out _));
    }

    [Fact]
    public async Task A_misspelt_option_stops_the_start_naming_it()
    {
        using IHost host = Build(TwoBreakers.Replace("FailureThreshold", "FailureTreshold"));
        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        // The binder names the key in its inner exception, which the host logs whole.
        Assert.Contains("FailureTreshold", e.InnerException!.Message);
    }

    [Fact]
    public async Task A_reload_that_changes_a_live_breaker_is_refused_with_an_error_and_the_breaker_kept()
    {
        using IHost host = Build(TwoBreakers);
        await host.StartAsync();
        var provider = host.Services.GetRequiredService<ILazyBreakerProvider>();
        CircuitBreaker payments = provider.Get("payments");
        payments.Isolate();

        File.WriteAllText(Settings, TwoBreakers.Replace("\"FailureThreshold\": 3", "\"FailureThreshold\": 7"));
        ((IConfigurationRoot)host.Services.GetRequiredService<IConfiguration>()).Reload();

        Assert.Same(payments, provider.Get("payments"));
        Assert.Equal(3, payments.Options.FailureThreshold);
        Assert.Equal(CircuitState.Isolated, payments.State);
        var refused = _log.Entries.Single(e => e.Level == LogLevel.Error);
        Assert.Contains("'payments'", refused.Message);
        Assert.Contains("FailureThreshold", refused.Message);

        // Reloaded again unchanged: refused again, not logged again.
        ((IConfigurationRoot)host.Services.GetRequiredService<IConfiguration>()).Reload();
        Assert.Single(_log.Entries, e => e.Level == LogLevel.Error);
        await host.StopAsync();
    }

    [Fact]
    public async Task A_reload_that_adds_a_breaker_creates_it_and_leaves_the_others_alone()
    {
        using IHost host = Build(TwoBreakers);
        await host.StartAsync();
        var provider = host.Services.GetRequiredService<ILazyBreakerProvider>();
        File.WriteAllText(Settings, TwoBreakers.Replace("\"search\"", "\"ledger\": { \"FailureThreshold\": 9 }, \"search\""));
        ((IConfigurationRoot)host.Services.GetRequiredService<IConfiguration>()).Reload();

        Assert.Equal(9, provider.Get("ledger").Options.FailureThreshold);
        Assert.DoesNotContain(_log.Entries, e => e.Level == LogLevel.Error);
        await host.StopAsync();
    }

    public void Dispose()
    {
        _registry.Dispose();
        Directory.Delete(_directory, recursive: true);
    }
}
