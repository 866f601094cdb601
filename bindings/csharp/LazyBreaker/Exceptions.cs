using System;
using System.IO;

namespace LazyBreaker;

/// <summary>
/// Thrown by <see cref="CircuitBreaker.Execute{T}(Func{T})"/> and its
/// siblings when the breaker rejects the call (OPEN, HALF_OPEN with every
/// probe slot taken, or isolated). As Polly v8's exception of the same name,
/// it says when to come back.
/// </summary>
public class BrokenCircuitException : Exception
{
    /// <summary>Creates the exception for a rejection by <paramref name="breakerName"/>.</summary>
    public BrokenCircuitException(string breakerName, TimeSpan? retryAfter)
        : this(breakerName, retryAfter, Describe(breakerName, retryAfter)) { }

    /// <summary>Creates the exception with a message of the caller's.</summary>
    public BrokenCircuitException(string breakerName, TimeSpan? retryAfter, string message)
        : base(message)
    {
        BreakerName = breakerName;
        RetryAfter = retryAfter;
    }

    /// <summary>
    /// How long until the breaker could admit a call, read when it rejected
    /// this one; <c>null</c> when no time is known (an isolated breaker admits
    /// nothing until it is reset).
    /// </summary>
    public TimeSpan? RetryAfter { get; }

    /// <summary>The name of the breaker that rejected the call ("" when anonymous).</summary>
    public string BreakerName { get; }

    private static string Describe(string name, TimeSpan? retryAfter) =>
        retryAfter is TimeSpan wait
            ? $"The circuit '{name}' is open: retry after {wait}."
            : $"The circuit '{name}' is isolated: no call is admitted until it is reset.";
}

/// <summary>
/// The rejection of an isolated breaker (<see cref="CircuitBreaker.Isolate"/>,
/// FORCED_OPEN), as Polly's <c>IsolatedCircuitException</c>:
/// <see cref="BrokenCircuitException.RetryAfter"/> is <c>null</c>.
/// </summary>
public sealed class IsolatedCircuitException : BrokenCircuitException
{
    /// <summary>Creates the exception for <paramref name="breakerName"/>.</summary>
    public IsolatedCircuitException(string breakerName) : base(breakerName, null) { }
}

/// <summary>
/// An error the library reported that no more specific .NET exception
/// describes (see the table in docs/csharp.md). <see cref="Status"/> is the C
/// ABI's status code.
/// </summary>
public class LazyBreakerException : Exception
{
    /// <summary>Creates the exception for a library status and message.</summary>
    public LazyBreakerException(int status, string message) : base(message) { Status = status; }

    /// <summary>The C ABI's status code (negative; the CB_E* constants of lazybreaker.h), e.g. CB_EFULL's.</summary>
    public int Status { get; }
}

/// <summary>
/// The name is already taken by another breaker of the registry (CB_EEXIST);
/// from <see cref="Registry.GetOrCreate"/>, by a breaker with another
/// configuration, and <see cref="Option"/> says which option differs.
/// </summary>
public sealed class BreakerExistsException : LazyBreakerException
{
    /// <summary>Creates the exception.</summary>
    public BreakerExistsException(int status, string message) : base(status, message) { }

    /// <summary>Creates the exception for a breaker whose <paramref name="option"/> differs.</summary>
    public BreakerExistsException(int status, string message, string? option) : base(status, message) { Option = option; }

    /// <summary>
    /// The first <see cref="CircuitBreakerOptions"/> property (in the order of the C
    /// struct) whose value differs from the existing breaker's, e.g.
    /// <c>"BreakDuration"</c>; <c>null</c> when the name is merely taken, or
    /// the breaker was destroyed meanwhile.
    /// </summary>
    public string? Option { get; }

    // cb_last_error_field(), for the API to name the option.
    internal string? Field { get; init; }
}

/// <summary>The registry holds as many breakers as its capacity (CB_EFULL).</summary>
public sealed class RegistryFullException : LazyBreakerException
{
    /// <summary>Creates the exception.</summary>
    public RegistryFullException(int status, string message) : base(status, message) { }
}

/// <summary>
/// Another process has held the registry file's lock for 5 s, and the open
/// gave up rather than wait on (CB_EBUSY); it may be retried. An
/// <see cref="IOException"/>, as a file another process keeps locked is in .NET.
/// </summary>
public sealed class RegistryBusyException : IOException
{
    /// <summary>Creates the exception.</summary>
    public RegistryBusyException(int status, string message) : base(message) { Status = status; }

    /// <summary>The C ABI's status code: CB_EBUSY's.</summary>
    public int Status { get; }
}
