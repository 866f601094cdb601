using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// An admitted call, from <see cref="CircuitBreaker.TryAcquire"/>: make the
/// call, then report how it went, once, with <see cref="Success"/>,
/// <see cref="Failure"/> or <see cref="Ignore"/>. A value type: acquiring and
/// reporting allocate nothing.
/// </summary>
/// <remarks>
/// <para>Disposing a permit that has no verdict reports a failure, so
/// <c>using</c> around a call that throws is correct:</para>
/// <code>
/// if (breaker.TryAcquire(out var permit))
/// {
///     using (permit) { Call(); permit.Success(); }
/// }
/// </code>
/// <para>A permit is reported once. A second verdict throws
/// <see cref="InvalidOperationException"/> and counts nothing, and
/// <see cref="Dispose"/> after a verdict reports nothing, on whatever thread
/// each happens and however many permits are in flight. A struct cannot
/// remember its verdict in itself (<c>using</c> disposes a read-only copy),
/// so the permit and its copies share a pooled slot that the first verdict
/// claims; the slot goes back to a per-thread pool for a later permit, and
/// an older copy of this one can no longer claim it.</para>
/// <para>A permit dropped with neither a verdict nor Dispose reports
/// nothing. The breaker stays safe: a probe that never reports counts as
/// failed once its lease (<see cref="CircuitBreakerOptions.HalfOpenTimeout"/>)
/// runs out, and in CLOSED an unreported call simply does not count.</para>
/// </remarks>
public readonly struct Permit : IDisposable
{
    private readonly ulong _handle;
    private readonly ulong _ticket;
    private readonly PermitSlot? _slot;
    private readonly ulong _generation;

    internal Permit(ulong handle, ulong ticket, PermitSlot slot)
    {
        _handle = handle;
        _ticket = ticket;
        _slot = slot;
        _generation = slot.Generation;
    }

    /// <summary>Whether this permit came from an admitted call (<c>default(Permit)</c> did not).</summary>
    public bool IsAdmitted => _slot != null;

    /// <summary>The library's ticket, for the conformance runner (which reports one twice on purpose).</summary>
    internal ulong Ticket => _ticket;

    /// <summary>Whether a verdict has been reported (or the permit disposed).</summary>
    internal bool IsReported => _slot != null && Volatile.Read(ref _slot.Generation) != _generation;

    /// <summary>Reports that the call succeeded.</summary>
    /// <exception cref="InvalidOperationException">The permit is <c>default</c>, not from an admitted call, or has been reported.</exception>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed since.</exception>
    public void Success() => Report(Verdict.Success);

    /// <summary>Reports that the call failed.</summary>
    /// <exception cref="InvalidOperationException">The permit is <c>default</c>, not from an admitted call, or has been reported.</exception>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed since.</exception>
    public void Failure() => Report(Verdict.Failure);

    /// <summary>Reports that the call counts neither way (cancelled, a client error).</summary>
    /// <exception cref="InvalidOperationException">The permit is <c>default</c>, not from an admitted call, or has been reported.</exception>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed since.</exception>
    public void Ignore() => Report(Verdict.Ignored);

    /// <summary>
    /// Reports a failure unless the permit has a verdict; does nothing for
    /// <c>default(Permit)</c> or when the breaker has been disposed (Dispose
    /// never throws).
    /// </summary>
    public void Dispose()
    {
        PermitSlot? slot = _slot;
        if (slot == null || !slot.TryClaim(_generation)) return;
        PermitSlots.Return(slot);
        NativeMethods.cb_done(_handle, _ticket, (int)Verdict.Failure);
    }

    private void Report(Verdict verdict)
    {
        PermitSlot? slot = _slot;
        if (slot == null) ThrowNotAdmitted();
        if (!slot.TryClaim(_generation)) ThrowReported();
        PermitSlots.Return(slot);
        if (FastPath.TryDone(_handle, _ticket, verdict)) return;
        int status = NativeMethods.cb_done(_handle, _ticket, (int)verdict);
        if (status != Status.Ok) ThrowReport(status);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    [DoesNotReturn]
    private static void ThrowNotAdmitted() =>
        throw new InvalidOperationException("this Permit was not issued by an admitted TryAcquire");

    [MethodImpl(MethodImplOptions.NoInlining)]
    [DoesNotReturn]
    private static void ThrowReported() =>
        throw new InvalidOperationException("this Permit has already been reported");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowReport(int status) => throw NativeErrors.FromLastError(status);
}

/// <summary>
/// What a permit and its copies share: a generation that the first verdict
/// (or Dispose) moves on, once, by compare-and-swap. A permit holds the
/// generation it was issued at, so it can claim the slot only before that.
/// The generation is 64 bits and never wraps.
/// </summary>
internal sealed class PermitSlot
{
    internal ulong Generation;

    /// <summary>True for the one caller that moves <paramref name="generation"/> on.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryClaim(ulong generation) =>
        Interlocked.CompareExchange(ref Generation, generation + 1, generation) == generation;
}

/// <summary>
/// The pool of <see cref="PermitSlot"/>s: a stack per thread (one TLS read
/// per call, nothing shared between threads on the request path), which
/// spills half to a process-wide stack when full and refills from it when
/// empty, so a thread that acquires permits that other threads report
/// allocates only until the pools are warm. A slot claimed by its permit's
/// verdict goes back to the reporting thread's stack; a slot whose permit
/// was dropped unreported is the garbage collector's.
/// </summary>
internal static class PermitSlots
{
    private const int LocalSize = 64, Batch = LocalSize / 2, SharedSize = 4096;

    [ThreadStatic] private static Local? t_local;

    private static readonly object s_lock = new();
    private static readonly PermitSlot[] s_shared = new PermitSlot[SharedSize];
    private static int s_sharedCount;

    private sealed class Local
    {
        internal readonly PermitSlot[] Slots = new PermitSlot[LocalSize];
        internal int Count;
    }

    /// <summary>A free slot (its permit takes its current generation).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static PermitSlot Rent()
    {
        Local? local = t_local;
        if (local != null && local.Count > 0) return local.Slots[--local.Count];
        return RentSlow();
    }

    /// <summary>A claimed slot, free for the next permit.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Return(PermitSlot slot)
    {
        Local? local = t_local;
        if (local != null && local.Count < LocalSize) local.Slots[local.Count++] = slot;
        else ReturnSlow(slot);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static PermitSlot RentSlow()
    {
        Local local = t_local ??= new Local();
        lock (s_lock)
        {
            int n = Math.Min(Batch, s_sharedCount);
            s_sharedCount -= n;
            Array.Copy(s_shared, s_sharedCount, local.Slots, local.Count, n);
            Array.Clear(s_shared, s_sharedCount, n);
            local.Count += n;
        }
        return local.Count > 0 ? local.Slots[--local.Count] : new PermitSlot();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReturnSlow(PermitSlot slot)
    {
        Local local = t_local ??= new Local();
        if (local.Count == LocalSize)
        {
            lock (s_lock)
            {
                // Beyond the shared stack's room, slots are the GC's.
                int n = Math.Min(Batch, SharedSize - s_sharedCount);
                local.Count -= Batch;
                Array.Copy(local.Slots, local.Count, s_shared, s_sharedCount, n);
                s_sharedCount += n;
            }
            Array.Clear(local.Slots, local.Count, Batch);
        }
        local.Slots[local.Count++] = slot;
    }
}
