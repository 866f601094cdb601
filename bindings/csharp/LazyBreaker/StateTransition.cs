using System;

namespace LazyBreaker;

/// <summary>One event from a registry's queue, in the order it happened.</summary>
/// <param name="Sequence">Position in the registry's queue; increasing.</param>
/// <param name="BreakerName">The breaker's name ("" when anonymous).</param>
/// <param name="From">The state before.</param>
/// <param name="To">The state after (== From for <see cref="TransitionReason.Rejected"/>).</param>
/// <param name="Reason">Why.</param>
/// <param name="AtNanoseconds">When, on the registry's clock.</param>
public readonly record struct StateTransition(ulong Sequence, string BreakerName, CircuitState From, CircuitState To,
                                              TransitionReason Reason, ulong AtNanoseconds)
{
    /// <summary>When, on the registry's clock.</summary>
    public TimeSpan At => CircuitBreakerOptions.ToTimeSpan(AtNanoseconds);
}
