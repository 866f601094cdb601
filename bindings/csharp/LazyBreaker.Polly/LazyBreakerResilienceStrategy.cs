using System;
using System.Threading.Tasks;
using Polly;
using PollyBrokenCircuitException = Polly.CircuitBreaker.BrokenCircuitException;
using PollyIsolatedCircuitException = Polly.CircuitBreaker.IsolatedCircuitException;
using PollyCircuitBreakerPredicateArguments = Polly.CircuitBreaker.CircuitBreakerPredicateArguments<object>;

namespace LazyBreaker.Polly;

/// <summary>
/// Our breaker as a Polly strategy: a rejected call fails with Polly's
/// <see cref="PollyBrokenCircuitException"/> (with RetryAfter) or, while
/// isolated, <see cref="PollyIsolatedCircuitException"/>, so a Polly retry or
/// fallback around it handles it as it handles Polly's own breaker.
/// </summary>
internal sealed class LazyBreakerResilienceStrategy : ResilienceStrategy
{
    private readonly CircuitBreaker _breaker;
    private readonly Func<PollyCircuitBreakerPredicateArguments, ValueTask<bool>> _shouldHandle;

    public LazyBreakerResilienceStrategy(LazyBreakerStrategyOptions options)
    {
        _breaker = options.Breaker!;
        _shouldHandle = options.ShouldHandle;
    }

    protected override async ValueTask<Outcome<TResult>> ExecuteCore<TResult, TState>(
        Func<ResilienceContext, TState, ValueTask<Outcome<TResult>>> callback, ResilienceContext context, TState state)
    {
        if (!_breaker.TryAcquire(out Permit permit)) return Outcome.FromException<TResult>(Rejection());
        Outcome<TResult> outcome;
        try
        {
            outcome = await callback(context, state).ConfigureAwait(context.ContinueOnCapturedContext);
        }
        catch (Exception e)
        {
            // Polly's callbacks return exceptions as outcomes; a throw here is a bug upstream, still the call's failure.
            permit.Failure();
            return Outcome.FromException<TResult>(e);
        }
        if (outcome.Exception is OperationCanceledException && context.CancellationToken.IsCancellationRequested)
        {
            permit.Ignore();
            return outcome;
        }
        Outcome<object> asObject = outcome.Exception is { } error ? Outcome.FromException<object>(error) : Outcome.FromResult<object>(outcome.Result);
        if (await _shouldHandle(new PollyCircuitBreakerPredicateArguments(context, asObject)).ConfigureAwait(context.ContinueOnCapturedContext))
            permit.Failure();
        else
            permit.Success();
        return outcome;
    }

    private Exception Rejection()
    {
        BrokenCircuitException ours = _breaker.CreateRejection();
        return ours.RetryAfter is TimeSpan wait
            ? new PollyBrokenCircuitException(ours.Message, wait, ours)
            : new PollyIsolatedCircuitException(ours.Message);
    }
}
