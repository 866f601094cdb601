using System;
using System.Runtime.InteropServices;

namespace LazyBreaker.Native;

/// <summary>
/// A <c>cb_registry *</c>. The marshaller adds a reference for the length of
/// every SWIG call that takes it, so <see cref="Registry.Dispose"/> racing
/// with such a call closes the registry only once the call has returned.
/// Releasing closes the registry (<c>cb_registry_close</c>); the default
/// registry's handle does not own it and never closes it.
/// </summary>
internal sealed class RegistryHandle : SafeHandle
{
    // The marshaller creates the handle that lb_registry_open returns.
    public RegistryHandle() : base(IntPtr.Zero, ownsHandle: true) { }

    internal RegistryHandle(IntPtr existing, bool ownsHandle) : base(IntPtr.Zero, ownsHandle)
    {
        SetHandle(existing);
    }

    public override bool IsInvalid => handle == IntPtr.Zero;

    protected override bool ReleaseHandle() => NativeMethods.cb_registry_close(handle) == 0;
}
