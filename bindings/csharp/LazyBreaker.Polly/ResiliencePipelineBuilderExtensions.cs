using System;
using Polly;

namespace LazyBreaker.Polly;

/// <summary>Adds our breaker to a Polly v8 pipeline.</summary>
public static class ResiliencePipelineBuilderExtensions
{
    /// <summary>
    /// Adds a strategy that runs each call through <see cref="LazyBreakerStrategyOptions.Breaker"/>
    /// (where Polly's AddCircuitBreaker would go; in AddResilienceHandler's
    /// builder too).
    /// </summary>
    /// <exception cref="System.ComponentModel.DataAnnotations.ValidationException">No breaker is given (Polly's validation names the option).</exception>
    public static TBuilder AddLazyBreaker<TBuilder>(this TBuilder builder, LazyBreakerStrategyOptions options)
        where TBuilder : ResiliencePipelineBuilderBase
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(options);
        return builder.AddStrategy(_ => new LazyBreakerResilienceStrategy(options), options);
    }

    /// <summary>As <see cref="AddLazyBreaker{TBuilder}(TBuilder, LazyBreakerStrategyOptions)"/> over <paramref name="breaker"/> with the default ShouldHandle.</summary>
    public static TBuilder AddLazyBreaker<TBuilder>(this TBuilder builder, CircuitBreaker breaker)
        where TBuilder : ResiliencePipelineBuilderBase =>
        builder.AddLazyBreaker(new LazyBreakerStrategyOptions { Breaker = breaker });
}
