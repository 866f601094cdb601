using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace LazyBreaker.Native;

/// <summary>
/// The C functions declared by hand, as blittable P/Invoke (value types
/// only, no marshalling stub): the request path and the release functions
/// that SafeHandles call. Everything else goes through SWIG's generated
/// LbNative (see docs/csharp.md, "What is SWIG and what is hand-written").
/// </summary>
/// <remarks>
/// The library name is SWIG's wrapper, liblazybreaker_csharp.so: it links
/// liblazybreaker.so.1 (found next to it through its RUNPATH $ORIGIN), and
/// the dynamic linker resolves cb_* in the wrapper's dependencies, so one
/// native library is loaded, from one place, for both layers.
///
/// <see cref="SuppressGCTransitionAttribute"/> is safe on cb_allow, cb_done,
/// cb_state and cb_retry_after: each returns within a bounded number of
/// atomic operations, never blocks, never calls back into managed code, and
/// makes no system call but a vDSO clock read (docs/semantics.md: "any
/// thread, lock-free"). It is not used on anything that may allocate or
/// close.
/// </remarks>
internal static unsafe class NativeMethods
{
    internal const string Library = "lazybreaker_csharp";

    [DllImport(Library, EntryPoint = "cb_allow", ExactSpelling = true)]
    [SuppressGCTransition]
    internal static extern int cb_allow(ulong handle, ulong* ticket);

    [DllImport(Library, EntryPoint = "cb_done", ExactSpelling = true)]
    [SuppressGCTransition]
    internal static extern int cb_done(ulong handle, ulong ticket, int outcome);

    [DllImport(Library, EntryPoint = "cb_state", ExactSpelling = true)]
    [SuppressGCTransition]
    internal static extern int cb_state(ulong handle);

    [DllImport(Library, EntryPoint = "cb_retry_after", ExactSpelling = true)]
    [SuppressGCTransition]
    internal static extern int cb_retry_after(ulong handle, ulong* outNs);

    // A create in one crossing: the configuration as one blittable struct
    // (NativeConfig), the name as NUL-terminated UTF-8, the registry as its
    // raw pointer under a reference the caller holds.
    [DllImport(Library, EntryPoint = "cb_config_init_size", ExactSpelling = true)]
    internal static extern int cb_config_init_size(NativeConfig* cfg, nuint size);

    [DllImport(Library, EntryPoint = "cb_create", ExactSpelling = true)]
    internal static extern int cb_create(IntPtr registry, byte* name, NativeConfig* cfg, ulong* outHandle);

    [DllImport(Library, EntryPoint = "cb_get_or_create", ExactSpelling = true)]
    internal static extern int cb_get_or_create(IntPtr registry, byte* name, NativeConfig* cfg, ulong* outHandle);

    // Called from SafeHandle.ReleaseHandle (which must not throw): plain
    // status-returning imports, no SWIG pending-exception machinery.
    [DllImport(Library, EntryPoint = "cb_destroy", ExactSpelling = true)]
    internal static extern int cb_destroy(ulong handle);

    [DllImport(Library, EntryPoint = "cb_registry_close", ExactSpelling = true)]
    internal static extern int cb_registry_close(IntPtr registry);

    /// <summary>The calling thread's last error message (never NULL).</summary>
    [DllImport(Library, EntryPoint = "cb_last_error_message", ExactSpelling = true)]
    internal static extern IntPtr cb_last_error_message();

    internal static string LastErrorMessage() => Marshal.PtrToStringUTF8(cb_last_error_message()) ?? "";

    /// <summary>The field at fault in the calling thread's last failing call (NULL when none).</summary>
    [DllImport(Library, EntryPoint = "cb_last_error_field", ExactSpelling = true)]
    internal static extern IntPtr cb_last_error_field();

    internal static string? LastErrorField() => Marshal.PtrToStringUTF8(cb_last_error_field());
}

/// <summary>
/// cb_config (include/lazybreaker/lazybreaker.h, 1.3: 112 bytes on x86-64),
/// field for field; struct_size tells the library how much of it this
/// binding knows, so a later library with a longer struct reads this one.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
internal struct NativeConfig
{
    internal nuint struct_size;
    internal uint failure_threshold;
    internal ulong open_duration_ns;
    internal uint half_open_max_calls;
    internal uint half_open_success_threshold;
    internal ulong half_open_timeout_ns;
    internal int policy;
    internal uint window_size;
    internal ulong window_duration_ns;
    internal uint window_buckets;
    internal uint minimum_calls;
    internal double failure_rate_threshold;
    internal ulong slow_call_ns;
    internal double slow_call_rate_threshold;
    internal double open_backoff_multiplier;
    internal ulong open_duration_max_ns;
    internal double open_jitter;

    /// <summary>The library's defaults (cb_config_init), read once per process.</summary>
    internal static readonly NativeConfig Defaults = ReadDefaults();

    private static unsafe NativeConfig ReadDefaults()
    {
        NativeConfig c;
        int status = NativeMethods.cb_config_init_size(&c, (nuint)sizeof(NativeConfig));
        if (status != Status.Ok) throw NativeErrors.FromLastError(status);
        return c;
    }
}
