using System;
using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace LazyBreaker.Native;

/// <summary>cb_fastpath (lazybreaker/fastpath.h), as the library fills it on x86-64.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct cb_fastpath
{
    internal nuint struct_size;
    internal uint layout;
    internal uint index_bits;
    internal ulong* lines;
    internal uint line_words;
    internal uint open_period_word;
    internal byte* lean_rejections;
    internal uint chunk_bits;
    internal uint fold_at;
}

/// <summary>cb_fastpath_cells (lazybreaker/fastpath.h).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct cb_fastpath_cells
{
    internal nuint struct_size;
    internal ulong* cells;
    internal uint stripe;
    internal uint claimed;
}

/// <summary>
/// The published quiet path (include/lazybreaker/fastpath.h, layout 1):
/// admitting a CLOSED call, reporting a quiet success and rejecting an OPEN
/// call far from its deadline by reading the library's own words, without
/// calling into it. Every transition is still the library's: anything these
/// rules do not call quiet answers <see cref="Library"/>, and the caller
/// makes the P/Invoke it made before (cb_allow, cb_done), which decides,
/// counts and transitions. Each rule is a function of values
/// (<see cref="DecideAllow"/>, <see cref="DecideDone"/>,
/// <see cref="CountCell"/>) that the hot path calls on the live words and
/// the test of the quiet-path vectors on the vectors' values.
/// </summary>
/// <remarks>
/// <para>Counts go to the calling OS thread's own stripe of counter cells
/// (cb_fastpath_thread_cells, taken once per thread and kept in a
/// [ThreadStatic]): CoreCLR's managed threads are OS threads, and the
/// synchronous code that counts here does not change thread between reading
/// the stripe and writing it. A counter that reaches fold_at is folded
/// (cb_fastpath_fold) on the same thread before it counts again, so
/// cb_stats, Prometheus and other processes see every count.</para>
/// <para>The library's functions are looked up by name
/// (NativeLibrary.TryGetExport): a library without them (before 1.3), a
/// layout other than 1, or LB_CSHARP_FASTPATH=0 in the environment turns the
/// quiet path off and every call crosses, as it always may.</para>
/// </remarks>
internal static unsafe class FastPath
{
    /// <summary>What the rules decide (fastpath.h's CB_FASTPATH_LIBRARY, _ADMIT, _REJECT, _SUCCESS).</summary>
    internal const int Library = 0, Admit = 1, Reject = 2, Success = 3;

    private const int CounterAdmitted = 0, CounterRejected = 1, CounterSuccesses = 2;
    private const int OutcomeSuccess = (int)cb_outcome_t.CB_SUCCESS;
    private const ulong ModeOpen = 1, ModeRun = 3, ModeForcedOpen = 4, ModeWindow = 7;
    private const int ModeShift = 60;
    private const ulong CallTicket = 0xcUL << ModeShift;
    private const int IndexBits = 24;
    private const ulong IndexMask = (1UL << IndexBits) - 1;
    private const int LifeShift = 24, LifeBits = 20;
    private const ulong LifeTag = 0xb0000, LifeMask = (1UL << LifeBits) - 1;
    private const ulong PeriodMask = 0xffffff;
    private const int DeadlineShift = 24, DeadlineUnitShift = 20;
    private const int CounterBits = 16;

    /// <summary>Whether the library publishes layout 1 and the quiet path is on.</summary>
    internal static readonly bool Enabled;
    /// <summary>
    /// The clock OPEN rejections compare the cached deadline with
    /// (fastpath.h: the library's monotonic clock, or one that never runs
    /// ahead of it), or None: every OPEN call then crosses into cb_allow,
    /// which is always correct. On Linux CLOCK_MONOTONIC_COARSE (through
    /// the vDSO, a few ns), which never runs ahead of CLOCK_MONOTONIC;
    /// Stopwatch.GetTimestamp() is CLOCK_MONOTONIC itself, but the precise
    /// read costs 30-40 ns on these VMs, three times the whole crossing it
    /// would save. On Windows the library's clock is QueryPerformanceCounter
    /// in ns, which Stopwatch reads when it is high-resolution.
    /// </summary>
    internal enum RejectClock { None, LinuxCoarse, PerformanceCounter }

    internal static readonly RejectClock Clock;
    internal static bool ClockIsMonotonicNs => Clock != RejectClock.None;
    private static readonly ulong s_counterFrequency = (ulong)Stopwatch.Frequency;

    internal static RejectClock ChooseClock(bool isLinux, bool isWindows, Func<bool> linuxCoarseWorks,
                                            bool counterIsHighResolution)
    {
        if (isLinux) return linuxCoarseWorks() ? RejectClock.LinuxCoarse : RejectClock.None;
        // Without QueryPerformanceCounter underneath, Stopwatch counts
        // DateTime ticks: another time base, which may run ahead.
        if (isWindows && counterIsHighResolution) return RejectClock.PerformanceCounter;
        return RejectClock.None;
    }

    /// <summary>
    /// QueryPerformanceCounter ticks in ns exactly as lazybreaker.dll computes
    /// them (src/platform/windows.cpp), so a deadline it cached is compared
    /// with the same number it would read.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong PerformanceCounterNs(ulong ticks, ulong frequency) =>
        ticks / frequency * 1_000_000_000UL + ticks % frequency * 1_000_000_000UL / frequency;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong RejectClockNow() =>
        Clock == RejectClock.LinuxCoarse
            ? CoarseNow()
            : PerformanceCounterNs((ulong)Stopwatch.GetTimestamp(), s_counterFrequency);

    private const int ClockMonotonicCoarse = 6; // <linux/time.h>

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        internal long Seconds;
        internal long Nanoseconds;
    }

    [DllImport("libc", EntryPoint = "clock_gettime", ExactSpelling = true)]
    [SuppressGCTransition]
    private static extern int clock_gettime(int clock, Timespec* now);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong CoarseNow()
    {
        Timespec t;
        clock_gettime(ClockMonotonicCoarse, &t);
        return (ulong)t.Seconds * 1_000_000_000UL + (ulong)t.Nanoseconds;
    }

    private static bool CoarseClockWorks()
    {
        try
        {
            Timespec t;
            return clock_gettime(ClockMonotonicCoarse, &t) == 0 && t.Seconds > 0;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    // Static readonly: constants to the tiered JIT.
    private static readonly nint s_lines;
    private static readonly nint s_lean;
    private static readonly int s_lineShift;
    private static readonly int s_openPeriodWord;
    private static readonly int s_chunkBits;
    private static readonly ulong s_foldAt;
    private static readonly delegate* unmanaged[Cdecl]<cb_fastpath_cells*, int> s_threadCells;
    private static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<uint, ulong, int, int> s_fold;

    // The calling thread's stripe: null until its first quiet call (or
    // for good, with t_noCells, when every stripe is taken).
    [ThreadStatic] private static ulong* t_cells;
    [ThreadStatic] private static uint t_stripe;
    [ThreadStatic] private static bool t_noCells;

    static FastPath()
    {
        Clock = ChooseClock(OperatingSystem.IsLinux(), OperatingSystem.IsWindows(), CoarseClockWorks,
                            Stopwatch.IsHighResolution);
        if (Environment.GetEnvironmentVariable("LB_CSHARP_FASTPATH") == "0") return;
        if (!NativeLibrary.TryLoad(NativeMethods.Library, typeof(FastPath).Assembly, null, out nint lib)) return;
        if (!NativeLibrary.TryGetExport(lib, "cb_fastpath_describe", out nint describe)
            || !NativeLibrary.TryGetExport(lib, "cb_fastpath_thread_cells", out nint threadCells)
            || !NativeLibrary.TryGetExport(lib, "cb_fastpath_fold", out nint fold))
            return;
        cb_fastpath fp = default;
        fp.struct_size = (nuint)sizeof(cb_fastpath);
        if (((delegate* unmanaged[Cdecl]<cb_fastpath*, int>)describe)(&fp) != Status.Ok) return;
        // Layout 1 with the numbers its rules were written for; any other
        // and every call crosses.
        if (fp.layout != 1 || fp.index_bits != IndexBits || fp.lines == null || fp.lean_rejections == null
            || fp.line_words == 0 || (fp.line_words & (fp.line_words - 1)) != 0 || fp.open_period_word >= fp.line_words
            || fp.chunk_bits >= IndexBits || fp.fold_at == 0 || fp.fold_at > 0x8000 || (fp.fold_at & (fp.fold_at - 1)) != 0)
            return;
        s_lines = (nint)fp.lines;
        s_lean = (nint)fp.lean_rejections;
        s_lineShift = BitOperations.Log2(fp.line_words);
        s_openPeriodWord = (int)fp.open_period_word;
        s_chunkBits = (int)fp.chunk_bits;
        s_foldAt = fp.fold_at;
        s_threadCells = (delegate* unmanaged[Cdecl]<cb_fastpath_cells*, int>)threadCells;
        s_fold = (delegate* unmanaged[Cdecl, SuppressGCTransition]<uint, ulong, int, int>)fold;
        Enabled = true;
    }

    /// <summary>
    /// Admits (<see cref="Admit"/>, ticket set), rejects (<see cref="Reject"/>),
    /// or answers <see cref="Library"/>: then cb_allow must decide.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int TryAllow(ulong h, out ulong ticket)
    {
        ticket = 0;
        if (!Enabled) return Library;
        ulong i = h & IndexMask;
        ulong* line = (ulong*)s_lines + (i << s_lineShift);
        ulong w = Volatile.Read(ref *line);
        int decision = DecideAllow(h, w, new LineLoads(line, i), out ticket);
        if (decision == Library) return Library;
        ulong* cells = t_cells;
        if (cells == null && (cells = ThreadCells()) == null)
        {
            ticket = 0;
            return Library;
        }
        Count(cells, i, h, decision == Admit ? CounterAdmitted : CounterRejected);
        return decision;
    }

    /// <summary>True when the report of <paramref name="ticket"/> is a quiet success and counted; false: cb_done must take it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryDone(ulong h, ulong ticket, Verdict outcome)
    {
        if (!Enabled) return false;
        ulong i = h & IndexMask;
        ulong w = Volatile.Read(ref *((ulong*)s_lines + (i << s_lineShift)));
        if (DecideDone(h, w, ticket, (int)outcome) != Success) return false;
        ulong* cells = t_cells;
        if (cells == null && (cells = ThreadCells()) == null) return false;
        Count(cells, i, h, CounterSuccesses);
        return true;
    }

    /// <summary>
    /// The words the allow rule reads after the state word, when it needs
    /// them: the chunk's lean_rejections byte, the line's OPEN period word,
    /// and the clock. The rule asks in that order and only as far as it
    /// must, so a CLOSED call reads none of them.
    /// </summary>
    internal interface IRejectLoads
    {
        uint Lean();

        ulong Period();

        /// <summary>The monotonic clock in ns, read after the state word; ulong.MaxValue when there is none to read (the OPEN rule then sends the call to the library).</summary>
        ulong Now();
    }

    /// <summary>The hot path's loads: from the slot's line and chunk, and the reject clock.</summary>
    private readonly struct LineLoads : IRejectLoads
    {
        private readonly ulong* _line;
        private readonly ulong _slot;

        internal LineLoads(ulong* line, ulong slot)
        {
            _line = line;
            _slot = slot;
        }

        public uint Lean() => ((byte*)s_lean)[_slot >> s_chunkBits];

        public ulong Period() => Volatile.Read(ref _line[s_openPeriodWord]);

        public ulong Now() => ClockIsMonotonicNs ? RejectClockNow() : ulong.MaxValue;
    }

    /// <summary>
    /// The allow rule of layout 1 (fastpath.h; cb_fastpath_decide_allow),
    /// a function of the handle, the state word and what
    /// <paramref name="loads"/> gives: <see cref="Admit"/> with the ticket,
    /// <see cref="Reject"/>, or <see cref="Library"/> (ticket 0 for both).
    /// The hot path passes the live words; the quiet-path vectors, values.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int DecideAllow<TLoads>(ulong h, ulong w, TLoads loads, out ulong ticket)
        where TLoads : struct, IRejectLoads
    {
        if (IsQuiet(h, w))
        {
            ticket = h + w;
            return Admit;
        }
        ticket = 0;
        if (!OfLife(h, w)) return Library;
        ulong mode = w >> ModeShift;
        if (mode == ModeWindow || mode == ModeRun)
        {
            // CLOSED, a window or a failure run: admitted here, the outcome
            // goes to cb_done.
            ticket = h + (CallTicket | (w & PeriodMask));
            return Admit;
        }
        if (mode != ModeOpen && mode != ModeForcedOpen) return Library;
        if (loads.Lean() == 0) return Library;
        if (mode == ModeForcedOpen) return Reject;
        ulong deadline = Deadline(w, loads.Period());
        return deadline != 0 && loads.Now() < deadline ? Reject : Library;
    }

    /// <summary>The done rule (cb_fastpath_decide_done): <see cref="Success"/> when the report changes nothing, else <see cref="Library"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int DecideDone(ulong h, ulong w, ulong ticket, int outcome) =>
        outcome == OutcomeSuccess && IsQuiet(h, w) && ticket == h + w ? Success : Library;

    /// <summary>
    /// The cell after counting one in <paramref name="counter"/>
    /// (cb_fastpath_count_cell); <paramref name="fold"/>: fold that counter
    /// (cb_fastpath_fold) before counting in it again.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong CountCell(ulong cell, int counter, ulong foldAt, out bool fold)
    {
        int shift = counter * CounterBits;
        ulong v = cell + (1UL << shift);
        fold = ((v >> shift) & foldAt) != 0;
        return v;
    }

    // The breaker is the handle's, CLOSED, and its calls change nothing shared.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsQuiet(ulong h, ulong w) => ((h ^ w) >> IndexBits) == 0 && (long)w < 0;

    // The word is of the breaker life the handle names, in any state.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool OfLife(ulong h, ulong w) => (h >> LifeShift) == ((LifeTag << LifeBits) | ((w >> LifeShift) & LifeMask));

    // The OPEN period's deadline in ns that p caches for w's period; 0 when none.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Deadline(ulong w, ulong p) =>
        ((p ^ w) & PeriodMask) != 0 ? 0 : (p >> DeadlineShift) << DeadlineUnitShift;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Count(ulong* cells, ulong i, ulong h, int counter)
    {
        ulong* cell = cells + i;
        // This thread is the stripe's one writer: a load and a release store.
        ulong v = CountCell(*cell, counter, s_foldAt, out bool fold);
        Volatile.Write(ref *cell, v);
        if (fold) Fold(h, counter);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Fold(ulong h, int counter)
    {
        int status = s_fold(t_stripe, h, counter);
        // Only a library that broke its own rules refuses: the count would
        // be lost, and that is not to be hidden.
        if (status != Status.Ok) throw NativeErrors.FromLastError(status);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ulong* ThreadCells()
    {
        if (t_noCells) return null;
        cb_fastpath_cells c = default;
        c.struct_size = (nuint)sizeof(cb_fastpath_cells);
        if (s_threadCells(&c) != Status.Ok || c.cells == null)
        {
            // Every stripe taken: this thread counts through the library.
            t_noCells = true;
            return null;
        }
        t_stripe = c.stripe;
        t_cells = c.cells;
        return c.cells;
    }
}
