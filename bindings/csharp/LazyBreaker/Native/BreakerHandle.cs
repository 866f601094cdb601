using System;
using System.Runtime.InteropServices;

namespace LazyBreaker.Native;

/// <summary>
/// A breaker's <c>cb_handle</c> (64 bits, kept in the IntPtr's bits: the
/// package is linux-x64 only). Releasing destroys the breaker
/// (<c>cb_destroy</c>), so a <see cref="CircuitBreaker"/> dropped without
/// <see cref="CircuitBreaker.Dispose"/> frees its slot and its name when the
/// GC finalises it. A handle made stale meanwhile (its registry closed) is
/// already gone: releasing it is not a failure.
/// </summary>
/// <remarks>
/// The request path does not go through this SafeHandle's reference count
/// (two interlocked operations per call would cost more than the breaker):
/// <see cref="CircuitBreaker"/> keeps the raw handle beside it, and the
/// library's generation check turns a call racing with the destroy into
/// CB_EHANDLE, never into a use of freed memory.
/// </remarks>
internal sealed class BreakerHandle : SafeHandle
{
    internal BreakerHandle(ulong handle, bool ownsHandle) : base(IntPtr.Zero, ownsHandle)
    {
        SetHandle(unchecked((IntPtr)(long)handle));
    }

    public override bool IsInvalid => handle == IntPtr.Zero;

    internal ulong Value => unchecked((ulong)(long)handle);

    protected override bool ReleaseHandle()
    {
        int status = NativeMethods.cb_destroy(Value);
        return status == 0 || status == Status.EHandle;
    }
}
