using System;
using Microsoft.Extensions.Options;

namespace LazyBreaker.Extensions;

/// <summary>
/// Validates the configured breakers at start (ValidateOnStart): each is
/// created in a scratch registry, so the library judges its options and the
/// failure names the configuration key of the option it refused.
/// </summary>
internal sealed class LazyBreakerSettingsValidator : IValidateOptions<LazyBreakerSettings>
{
    private readonly string _sectionPath;

    public LazyBreakerSettingsValidator(string sectionPath) => _sectionPath = sectionPath;

    public ValidateOptionsResult Validate(string? name, LazyBreakerSettings settings)
    {
        if (settings.EventPollInterval <= TimeSpan.Zero)
            return ValidateOptionsResult.Fail($"{_sectionPath}:{nameof(LazyBreakerSettings.EventPollInterval)} must be positive, got {settings.EventPollInterval}");
        using Registry scratch = Registry.WithManualClock();
        foreach (var (breaker, options) in settings.Breakers)
        {
            try
            {
                scratch.Create(breaker, options).Dispose();
            }
            catch (ArgumentException e)
            {
                return ValidateOptionsResult.Fail($"{_sectionPath}:Breakers:{breaker}:{e.ParamName}: {e.Message}");
            }
        }
        return ValidateOptionsResult.Success;
    }
}
