using System;
using System.Collections.Generic;
using System.IO;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// The one table from a negative status of the C ABI to a .NET exception
/// (docs/csharp.md, "Errors"). SWIG's wrappers raise through it (csharp.i's
/// %lb_raise, which passes cb_last_error_field too); the hand-written
/// request path calls it too.
/// </summary>
internal static class NativeErrors
{
    internal static Exception ToException(int status, string message, string? field) => status switch
    {
        // The API turns this one into its own words wherever it knows the
        // option behind the field (ConfigErrors, Registry, CircuitBreaker).
        Status.EInval => new NativeArgumentException(message, field),
        Status.EHandle => new ObjectDisposedException(nameof(CircuitBreaker), message),
        Status.ENoMem => new InsufficientMemoryException(message),
        Status.EExist => new BreakerExistsException(status, message) { Field = field },
        Status.ENoEnt => new KeyNotFoundException(message),
        Status.EFull => new RegistryFullException(status, message),
        Status.ECorrupt or Status.EVersion or Status.EIo => new IOException(message),
        Status.EPerm => new UnauthorizedAccessException(message),
        Status.EState => new InvalidOperationException(message),
        Status.EBusy => new RegistryBusyException(status, message),
        _ => new LazyBreakerException(status, message.Length > 0 ? message : StatusName(status)),
    };

    /// <summary>The exception for a status from a hand-written import, with this thread's message and field.</summary>
    internal static Exception FromLastError(int status) =>
        ToException(status, NativeMethods.LastErrorMessage(), NativeMethods.LastErrorField());

    /// <summary>The status's C name (CB_EINTERNAL), from the library.</summary>
    internal static string StatusName(int status) => LbNative.cb_status_name(status) ?? $"lazybreaker status {status}";
}

/// <summary>
/// CB_EINVAL as the library reported it: its message (for people) and the
/// C name of the field or parameter at fault (for the API, which renders
/// the error with its own option names). An <see cref="ArgumentException"/>
/// where the API has nothing better to say.
/// </summary>
internal sealed class NativeArgumentException : ArgumentException
{
    internal NativeArgumentException(string message, string? field) : base(message) { Field = field; }

    /// <summary>cb_last_error_field(): "open_duration_ns", "capacity", "name", ...; null when none.</summary>
    internal string? Field { get; }
}
