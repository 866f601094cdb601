using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Polly;
using Polly.CircuitBreaker;
using LazyBreaker;
using PollyBrokenCircuitException = Polly.CircuitBreaker.BrokenCircuitException;

namespace LazyBreaker.Bench;

/// <summary>
/// LazyBreaker against Polly.Core 8.9.1's circuit breaker strategy in a
/// ResiliencePipeline, CLOSED and OPEN, on 1 and 2 threads (2 threads: both
/// call the same breaker; the figure is wall time per call, all calls
/// counted), beside two floors: a direct delegate call and an empty
/// blittable P/Invoke (cb_version_number). Each benchmark is a loop of
/// <see cref="Ops"/> calls (OperationsPerInvoke), so per-call figures are
/// not drowned by BenchmarkDotNet's own call.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)]
[CategoriesColumn]
public class BreakerBenchmarks
{
    internal const int Ops = 100_000;
    internal const int ThrowOps = 2_000; // an exception costs microseconds

    [Params(1, 2)]
    public int Threads { get; set; }

    private Registry _registry = null!;
    private CircuitBreaker _closed = null!, _open = null!;
    private ResiliencePipeline _pollyClosed = null!, _pollyOpen = null!;
    private Func<int> _trivial = null!;
    private TwoThreads _two = null!;
    private int _sink;

    [GlobalSetup]
    public void Setup()
    {
        _registry = Registry.Open();
        _closed = _registry.Create("closed");
        _open = _registry.Create("open");
        _open.Trip(TimeSpan.FromHours(1)); // OPEN (not isolated): each call reads the clock
        _pollyClosed = Polly();
        _pollyOpen = Polly();
        for (int i = 0; i < 2; i++)
        {
            try { _pollyOpen.Execute(static () => throw new InvalidOperationException()); }
            catch (InvalidOperationException) { }
        }
        try
        {
            _pollyOpen.Execute(static () => 0);
            throw new InvalidOperationException("Polly's breaker did not open");
        }
        catch (PollyBrokenCircuitException) { }
        _trivial = static () => 1;
        _two = new TwoThreads();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _two.Dispose();
        _closed.Dispose();
        _open.Dispose();
        _registry.Dispose();
    }

    private static ResiliencePipeline Polly() =>
        new ResiliencePipelineBuilder()
            .AddCircuitBreaker(new CircuitBreakerStrategyOptions
            {
                FailureRatio = 0.5, MinimumThroughput = 2, SamplingDuration = TimeSpan.FromSeconds(30),
                BreakDuration = TimeSpan.FromHours(1),
            })
            .Build();

    // ---- floors ---------------------------------------------------------

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("floor")]
    public int DirectDelegateCall() => Run(static (b, n) => { int s = 0; for (int i = 0; i < n; i++) s += b._trivial(); return s; });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("floor")]
    public int EmptyPInvoke() => Run(static (b, n) => { int s = 0; for (int i = 0; i < n; i++) s += Native.cb_version_number(); return s; });

    // ---- CLOSED ---------------------------------------------------------

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("closed")]
    public int Polly_Execute() => Run(static (b, n) => { int s = 0; for (int i = 0; i < n; i++) s += b._pollyClosed.Execute(b._trivial); return s; });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("closed")]
    public int Ours_TryAcquire_Success() => Run(static (b, n) =>
    {
        int s = 0;
        for (int i = 0; i < n; i++)
        {
            if (b._closed.TryAcquire(out var p)) { s += b._trivial(); p.Success(); }
        }
        return s;
    });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("closed")]
    public int Ours_Execute() => Run(static (b, n) => { int s = 0; for (int i = 0; i < n; i++) s += b._closed.Execute(b._trivial); return s; });

    // ---- OPEN: learning of the rejection --------------------------------

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("open")]
    public int Polly_ExecuteOutcomeAsync_pooled_context() => Run(static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            ResilienceContext context = ResilienceContextPool.Shared.Get();
            ValueTask<Outcome<int>> pending = b._pollyOpen.ExecuteOutcomeAsync(
                static (ctx, state) => Outcome.FromResultAsValueTask(state._trivial()), context, b);
            Outcome<int> outcome = pending.IsCompleted ? pending.Result : pending.AsTask().GetAwaiter().GetResult();
            if (outcome.Exception is PollyBrokenCircuitException) rejected++;
            ResilienceContextPool.Shared.Return(context);
        }
        return rejected;
    });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("open")]
    public int Ours_TryAcquire_rejected() => Run(static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            if (!b._open.TryAcquire(out _)) rejected++;
        }
        return rejected;
    });

    // ---- OPEN: the rejection as an exception ----------------------------

    [Benchmark(OperationsPerInvoke = ThrowOps, Baseline = true), BenchmarkCategory("open-exception")]
    public int Polly_Execute_BrokenCircuitException() => RunThrowing(static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            try { b._pollyOpen.Execute(b._trivial); }
            catch (PollyBrokenCircuitException) { rejected++; }
        }
        return rejected;
    });

    [Benchmark(OperationsPerInvoke = ThrowOps), BenchmarkCategory("open-exception")]
    public int Ours_Execute_BrokenCircuitException() => RunThrowing(static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            try { b._open.Execute(b._trivial); }
            catch (LazyBreaker.BrokenCircuitException) { rejected++; }
        }
        return rejected;
    });

    // The loop on this thread, or half of it here and half on the second.
    private int Run(Func<BreakerBenchmarks, int, int> loop) => Split(loop, Ops);

    private int RunThrowing(Func<BreakerBenchmarks, int, int> loop) => Split(loop, ThrowOps);

    private int Split(Func<BreakerBenchmarks, int, int> loop, int ops)
    {
        if (Threads == 1) return _sink = loop(this, ops);
        return _sink = _two.Run(loop, this, ops / 2);
    }

    internal static class Native
    {
        [DllImport("lazybreaker_csharp", EntryPoint = "cb_version_number", ExactSpelling = true)]
        [SuppressGCTransition]
        internal static extern int cb_version_number();
    }
}

/// <summary>A second thread that runs the same loop as the caller, started and joined by a barrier (nothing allocated per run).</summary>
internal sealed class TwoThreads : IDisposable
{
    private readonly Barrier _barrier = new(2);
    private readonly Thread _thread;
    private Func<BreakerBenchmarks, int, int>? _loop;
    private BreakerBenchmarks? _bench;
    private int _ops, _result;
    private volatile bool _stop;

    internal TwoThreads()
    {
        _thread = new Thread(Work) { IsBackground = true, Name = "bench-second-thread" };
        _thread.Start();
    }

    internal int Run(Func<BreakerBenchmarks, int, int> loop, BreakerBenchmarks bench, int ops)
    {
        _loop = loop;
        _bench = bench;
        _ops = ops;
        _barrier.SignalAndWait(); // go
        int mine = loop(bench, ops);
        _barrier.SignalAndWait(); // both done
        return mine + _result;
    }

    private void Work()
    {
        while (true)
        {
            _barrier.SignalAndWait();
            if (_stop) return;
            _result = _loop!(_bench!, _ops);
            _barrier.SignalAndWait();
        }
    }

    public void Dispose()
    {
        _stop = true;
        _barrier.SignalAndWait();
        _thread.Join();
        _barrier.Dispose();
    }
}

public static class Program
{
    public static int Main(string[] args)
    {
        string artifacts = args.Length > 0 ? args[0] : "BenchmarkDotNet.Artifacts";
        // ShortRun (1 launch, 3 warm-up iterations) with 5 measured
        // iterations rather than 3 (a steadier median on a shared 2-core
        // machine), in process: the whole table in about two minutes.
        // Compare ratios, not absolute figures, between runs.
        IConfig config = DefaultConfig.Instance
            .AddJob(Job.ShortRun.WithIterationCount(5).WithToolchain(InProcessEmitToolchain.Instance)
                       .WithId("ShortRun5-InProcess"))
            .WithArtifactsPath(artifacts)
            .WithSummaryStyle(SummaryStyle.Default.WithRatioStyle(RatioStyle.Trend))
            .WithOptions(ConfigOptions.DisableLogFile);
        // Arguments after the artifacts folder go to BenchmarkDotNet (e.g. --filter).
        Summary summary = BenchmarkRunner.Run(typeof(BreakerBenchmarks), config, args.Skip(1).ToArray());
        return ClosingNote(summary) ? 0 : 1;
    }

    // The ratios the issue asks for, from the medians of this run.
    private static bool ClosingNote(Summary summary)
    {
        var median = new Dictionary<(string, int), double>();
        var bytes = new Dictionary<(string, int), long>();
        foreach (BenchmarkReport r in summary.Reports)
        {
            if (r.ResultStatistics == null) continue;
            string name = r.BenchmarkCase.Descriptor.WorkloadMethod.Name;
            int threads = (int)r.BenchmarkCase.Parameters["Threads"];
            median[(name, threads)] = r.ResultStatistics.Median;
            bytes[(name, threads)] = r.GcStats.GetBytesAllocatedPerOperation(r.BenchmarkCase) ?? -1;
        }
        if (median.Count == 0)
        {
            Console.WriteLine("closing note: no results");
            return false;
        }
        Console.WriteLine();
        Console.WriteLine("Closing note (medians of this run, ns per call; x = Polly / ours):");
        bool targets = true;
        foreach (int t in new[] { 1, 2 })
        {
            void Ratio(string ours, string polly, string what, bool target)
            {
                if (!median.TryGetValue((ours, t), out double o) || !median.TryGetValue((polly, t), out double p)) return;
                double x = p / o;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  {t} thread(s) {what}: ours {o:F1} ns, {bytes[(ours, t)]} B/call; Polly {p:F1} ns, {bytes[(polly, t)]} B/call: {x:F1}x{(target ? (x >= 10 ? " (target >= 10x: met)" : " (target >= 10x: NOT met)") : "")}"));
                if (target && x < 10) targets = false;
            }
            Ratio("Ours_TryAcquire_Success", "Polly_Execute", "CLOSED TryAcquire+Success vs Polly Execute", true);
            Ratio("Ours_Execute", "Polly_Execute", "CLOSED Execute vs Polly Execute", true);
            Ratio("Ours_TryAcquire_rejected", "Polly_ExecuteOutcomeAsync_pooled_context", "OPEN TryAcquire=false vs Polly ExecuteOutcomeAsync", true);
            Ratio("Ours_TryAcquire_rejected", "Polly_Execute_BrokenCircuitException", "OPEN TryAcquire=false vs Polly BrokenCircuitException", true);
            Ratio("Ours_Execute_BrokenCircuitException", "Polly_Execute_BrokenCircuitException", "OPEN Execute exception vs Polly exception", false);
            if (median.TryGetValue(("DirectDelegateCall", t), out double floor) && median.TryGetValue(("EmptyPInvoke", t), out double pinvoke)
                && median.TryGetValue(("Ours_TryAcquire_Success", t), out double pair))
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  {t} thread(s) floors: delegate {floor:F2} ns, empty P/Invoke {pinvoke:F2} ns; TryAcquire+Success = {pair / pinvoke:F1} empty P/Invokes"));
            foreach (string ours in new[] { "Ours_TryAcquire_Success", "Ours_TryAcquire_rejected" })
            {
                if (bytes.TryGetValue((ours, t), out long b) && b != 0)
                {
                    Console.WriteLine($"  {t} thread(s) {ours}: {b} B/call (target 0: NOT met)");
                    targets = false;
                }
            }
        }
        Console.WriteLine(targets ? "  Targets met: >= 10x Polly CLOSED and OPEN, 0 B per call on TryAcquire."
                                  : "  Some targets were NOT met in this run (see above).");
        return true;
    }
}
