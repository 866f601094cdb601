using System;
using System.Runtime.InteropServices;

namespace LazyBreaker.Native;

/// <summary>
/// A breaker's <c>cb_handle</c> (64 bits, kept in the IntPtr's bits: the
/// package is linux-x64 only). Releasing destroys the breaker
/// (<c>cb_destroy</c>), so a <see cref="CircuitBreaker"/> dropped without
/// <see cref="CircuitBreaker.Dispose"/> frees its slot and its name when the
/// GC finalises it. A handle made stale meanwhile is already gone:
/// releasing it is not a failure.
/// </summary>
/// <remarks>
/// <para>An owning handle holds a reference on its registry's
/// <see cref="RegistryHandle"/> until it has destroyed the breaker, so
/// <c>cb_registry_close</c> never runs while a <c>cb_destroy</c> of one of
/// its breakers does (a finaliser and <see cref="Registry.Dispose"/> on two
/// threads): the C ABI does not allow the two at once.</para>
/// <para>The request path does not go through this SafeHandle's reference
/// count (two interlocked operations per call would cost more than the
/// breaker): <see cref="CircuitBreaker"/> keeps the raw handle beside it,
/// and the library's generation check turns a call racing with the destroy
/// into CB_EHANDLE, never into a use of freed memory.</para>
/// </remarks>
internal sealed class BreakerHandle : SafeHandle
{
    private readonly RegistryHandle? _registry;
    private readonly Registry? _owner;

    /// <summary>
    /// Wraps <paramref name="handle"/>; an owning handle takes a reference on
    /// <paramref name="registry"/>'s native handle (ObjectDisposedException
    /// if it is closed), and frees the registry's entry for it when released.
    /// A handle that does not own its breaker has no finaliser.
    /// </summary>
    internal BreakerHandle(ulong handle, Registry registry, bool ownsHandle) : base(IntPtr.Zero, ownsHandle)
    {
        if (ownsHandle)
        {
            bool added = false;
            registry.NativeHandle.DangerousAddRef(ref added);
            _registry = registry.NativeHandle;
            _owner = registry;
        }
        SetHandle(unchecked((IntPtr)(long)handle));
    }

    public override bool IsInvalid => handle == IntPtr.Zero;

    internal ulong Value => unchecked((ulong)(long)handle);

    protected override bool ReleaseHandle()
    {
        int status = NativeMethods.cb_destroy(Value);
        _owner?.Forget(Value); // dropped without Dispose: its weak entry goes too
        _registry?.DangerousRelease(); // the registry may close now
        return status == 0 || status == Status.EHandle;
    }
}
