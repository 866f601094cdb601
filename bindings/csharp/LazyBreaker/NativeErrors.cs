using System;
using System.Collections.Generic;
using System.IO;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// The one table from a negative status of the C ABI to a .NET exception
/// (docs/csharp.md, "Errors"). SWIG's wrappers raise through it (csharp.i's
/// %lb_raise); the hand-written request path calls it too.
/// </summary>
internal static class NativeErrors
{
    internal static Exception ToException(int status, string message) => status switch
    {
        Status.EInval => new ArgumentException(message),
        Status.EHandle => new ObjectDisposedException(nameof(CircuitBreaker), message),
        Status.ENoMem => new InsufficientMemoryException(message),
        Status.EExist => new BreakerExistsException(status, message),
        Status.ENoEnt => new KeyNotFoundException(message),
        Status.EFull => new RegistryFullException(status, message),
        Status.ECorrupt or Status.EVersion or Status.EIo => new IOException(message),
        Status.EPerm => new UnauthorizedAccessException(message),
        Status.EState => new InvalidOperationException(message),
        Status.EBusy => new RegistryBusyException(status, message),
        _ => new LazyBreakerException(status, message.Length > 0 ? message : $"lazybreaker status {status}"),
    };

    /// <summary>The exception for a status from a hand-written import, with this thread's message.</summary>
    internal static Exception FromLastError(int status) => ToException(status, NativeMethods.LastErrorMessage());
}
