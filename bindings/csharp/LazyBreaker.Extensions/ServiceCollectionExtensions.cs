using System;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace LazyBreaker.Extensions;

/// <summary>Registers lazybreaker in an application's services.</summary>
public static class ServiceCollectionExtensions
{
    /// <summary>
    /// The registry (a <see cref="Registry"/> already registered, else the
    /// file of <c>Path</c>, else a private one), the named breakers of
    /// <paramref name="section"/> (<c>Breakers:&lt;name&gt;:&lt;option&gt;</c>,
    /// validated at start with the option's key in the message, each also a
    /// keyed <see cref="CircuitBreaker"/>), <see cref="ILazyBreakerProvider"/>,
    /// the <see cref="LazyBreakerMetrics"/> meter and the hosted service that
    /// logs transitions.
    /// </summary>
    public static IServiceCollection AddLazyBreaker(this IServiceCollection services, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(section);
        AddLazyBreaker(services);
        string path = section is IConfigurationSection s ? s.Path : "";
        // An unknown key (a misspelt option) is an error, not a default.
        services.AddOptions<LazyBreakerSettings>().Bind(section, binder => binder.ErrorOnUnknownConfiguration = true);
        services.AddSingleton<IValidateOptions<LazyBreakerSettings>>(new LazyBreakerSettingsValidator(path));
        foreach (IConfigurationSection breaker in section.GetSection(nameof(LazyBreakerSettings.Breakers)).GetChildren())
        {
            services.AddKeyedSingleton(breaker.Key, static (provider, key) =>
                provider.GetRequiredService<ILazyBreakerProvider>().Get((string)key!));
        }
        return services;
    }

    /// <summary>As <see cref="AddLazyBreaker(IServiceCollection, IConfiguration)"/> without configuration: no named breakers, a private registry unless one is registered. Idempotent.</summary>
    public static IServiceCollection AddLazyBreaker(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<LazyBreakerSettings>().ValidateOnStart();
        services.TryAddSingleton(provider =>
        {
            string? path = provider.GetRequiredService<IOptions<LazyBreakerSettings>>().Value.Path;
            return path is null ? Registry.Open() : Registry.OpenShared(path);
        });
        services.TryAddSingleton<ILazyBreakerProvider, LazyBreakerProvider>();
        services.TryAddSingleton<LazyBreakerMetrics>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<Microsoft.Extensions.Hosting.IHostedService, LazyBreakerEventDrain>());
        return services;
    }
}
