using System;
using System.ComponentModel.DataAnnotations;
using System.Net.Http;
using System.Threading.Tasks;
using Polly;
using Polly.CircuitBreaker;

namespace LazyBreaker.Polly;

/// <summary>The breaker a <c>AddLazyBreaker</c> strategy (<see cref="ResiliencePipelineBuilderExtensions"/>) stands on, and which outcomes are its failures.</summary>
public sealed class LazyBreakerStrategyOptions : ResilienceStrategyOptions
{
    /// <summary>Names the strategy "LazyBreaker" in Polly's telemetry.</summary>
    public LazyBreakerStrategyOptions() => Name = "LazyBreaker";

    /// <summary>The breaker (required): it decides every transition; its own ShouldHandle is not used here.</summary>
    [Required]
    public CircuitBreaker? Breaker { get; set; }

    /// <summary>
    /// Which outcomes are failures, with the predicate type of Polly's own
    /// CircuitBreakerStrategyOptions (a PredicateBuilder converts to it).
    /// Default: any exception but a cancellation of the call's token, and an
    /// <see cref="HttpResponseMessage"/> of 500 or more. A cancellation of the
    /// call's token is never a failure nor a success.
    /// </summary>
    [Required]
    public Func<CircuitBreakerPredicateArguments<object>, ValueTask<bool>> ShouldHandle { get; set; } = args =>
        new ValueTask<bool>(args.Outcome.Exception is not null and not OperationCanceledException
                            || args.Outcome.Result is HttpResponseMessage { StatusCode: >= (System.Net.HttpStatusCode)500 });
}
