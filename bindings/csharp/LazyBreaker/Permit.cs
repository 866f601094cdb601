using System;
using System.Runtime.CompilerServices;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// An admitted call, from <see cref="CircuitBreaker.TryAcquire"/>: make the
/// call, then report how it went with <see cref="Success"/>,
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
/// <para>A struct cannot remember its verdict in itself (<c>using</c> works
/// on a read-only copy), so the calling thread remembers the last 8 verdicts
/// it reported: <see cref="Dispose"/> finds the permit's there and reports
/// nothing more. Report and leave the <c>using</c> block on the same thread
/// (no <c>await</c> between the verdict and the end of the block), or
/// <see cref="Dispose"/> reports a failure after the verdict; the
/// <c>Execute*</c> methods have no such rule.</para>
/// <para>A permit dropped with neither a verdict nor Dispose reports
/// nothing. The breaker stays safe: a probe that never reports counts as
/// failed once its lease (<see cref="CircuitBreakerOptions.HalfOpenTimeout"/>)
/// runs out, and in CLOSED an unreported call simply does not count.</para>
/// <para>Report a permit once; a second verdict is counted again by the
/// statistics (the state machine counts a probe once).</para>
/// </remarks>
public readonly struct Permit : IDisposable
{
    private readonly ulong _handle;
    private readonly ulong _ticket;
    private readonly ulong _id;

    internal Permit(ulong handle, ulong ticket, ulong id)
    {
        _handle = handle;
        _ticket = ticket;
        _id = id;
    }

    /// <summary>Whether this permit came from an admitted call (<c>default(Permit)</c> did not).</summary>
    public bool IsAdmitted => _id != 0;

    /// <summary>Reports that the call succeeded.</summary>
    /// <exception cref="InvalidOperationException">The permit is <c>default</c>, not from an admitted call.</exception>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed since.</exception>
    public void Success() => Report(Verdict.Success);

    /// <summary>Reports that the call failed.</summary>
    /// <exception cref="InvalidOperationException">The permit is <c>default</c>, not from an admitted call.</exception>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed since.</exception>
    public void Failure() => Report(Verdict.Failure);

    /// <summary>Reports that the call counts neither way (cancelled, a client error).</summary>
    /// <exception cref="InvalidOperationException">The permit is <c>default</c>, not from an admitted call.</exception>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed since.</exception>
    public void Ignore() => Report(Verdict.Ignored);

    /// <summary>
    /// Reports a failure unless this thread has reported a verdict for the
    /// permit; does nothing for <c>default(Permit)</c> or when the breaker
    /// has been disposed (Dispose never throws).
    /// </summary>
    public void Dispose()
    {
        if (_id == 0 || VerdictLedger.Forget(_id)) return;
        NativeMethods.cb_done(_handle, _ticket, (int)Verdict.Failure);
    }

    private void Report(Verdict verdict)
    {
        if (_id == 0) ThrowNotAdmitted();
        int status = NativeMethods.cb_done(_handle, _ticket, (int)verdict);
        if (status != Status.Ok) ThrowReport(status);
        VerdictLedger.Remember(_id);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowNotAdmitted() =>
        throw new InvalidOperationException("this Permit was not issued by an admitted TryAcquire");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowReport(int status) => throw NativeErrors.FromLastError(status);
}

/// <summary>
/// Per thread: permit ids (unique in the process) and the last verdicts
/// reported, so that <see cref="Permit.Dispose"/> knows whether its permit
/// has one. One thread-static object (one TLS read per call, and nothing
/// shared between threads: the request path writes no shared cache line).
/// </summary>
internal sealed class VerdictLedger
{
    private const int Size = 8; // a power of two
    private static long s_nextThreadBase;

    [ThreadStatic] private static VerdictLedger? t_ledger;

    private ulong _next, _limit;
    private int _position;
    private readonly ulong[] _reported = new ulong[Size];

    private VerdictLedger() => Refill();

    /// <summary>A permit id never given out before in this process (never 0).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NextId()
    {
        VerdictLedger ledger = t_ledger ?? Create();
        ulong id = ledger._next;
        if (id == ledger._limit) id = ledger.Refill();
        ledger._next = id + 1;
        return id;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static VerdictLedger Create() => t_ledger = new VerdictLedger();

    // Each thread takes ids 2^32 at a time from a process-wide counter.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private ulong Refill()
    {
        ulong first = (ulong)System.Threading.Interlocked.Increment(ref s_nextThreadBase) << 32;
        _next = first;
        _limit = first + uint.MaxValue;
        return first;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Remember(ulong id)
    {
        VerdictLedger ledger = t_ledger ?? Create();
        int position = ledger._position;
        ledger._reported[position] = id;
        ledger._position = (position + 1) & (Size - 1);
    }

    /// <summary>True when this thread reported a verdict for <paramref name="id"/> (which is then forgotten).</summary>
    internal static bool Forget(ulong id)
    {
        ulong[]? reported = t_ledger?._reported;
        if (reported == null) return false;
        for (int i = 0; i < reported.Length; i++)
        {
            if (reported[i] == id)
            {
                reported[i] = 0;
                return true;
            }
        }
        return false;
    }
}
