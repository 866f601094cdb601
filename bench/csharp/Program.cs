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
/// ResiliencePipeline (the real Polly, from NuGet), in one run: CLOSED
/// Execute on the count window (the issue's row) and on the consecutive
/// policy, the same on 2 threads calling one breaker (wall time per call,
/// all calls counted), OPEN rejections without and with an exception, and a
/// create; beside two floors, a direct delegate call and an empty blittable
/// P/Invoke (cb_version_number). Each benchmark is a loop of
/// <see cref="Ops"/> calls (OperationsPerInvoke), so per-call figures are
/// not drowned by BenchmarkDotNet's own call.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class BreakerBenchmarks
{
    internal const int Ops = 100_000;
    internal const int ThrowOps = 2_000; // an exception costs microseconds
    internal const int CreateOps = 1_000;

    private Registry _registry = null!, _creates = null!;
    private CircuitBreaker _count = null!, _consecutive = null!, _open = null!, _isolated = null!;
    private ResiliencePipeline _pollyClosed = null!, _pollyOpen = null!;
    private CircuitBreakerOptions _countOptions = null!;
    private CircuitBreakerStrategyOptions _pollyOptions = null!;
    private string[] _names = null!;
    private CircuitBreaker[] _made = null!;
    private ResiliencePipeline[] _built = null!;
    private Func<int> _trivial = null!;
    private TwoThreads _two = null!;
    private int _sink;

    [GlobalSetup]
    public void Setup()
    {
        _registry = Registry.Open();
        _creates = Registry.Open();
        _countOptions = new CircuitBreakerOptions { Policy = TripPolicy.CountWindow, WindowSize = 100, MinimumThroughput = 2 };
        _count = _registry.Create("count", _countOptions);
        _consecutive = _registry.Create("consecutive");
        _open = _registry.Create("open");
        _open.Trip(TimeSpan.FromHours(1)); // OPEN (not isolated), far from its deadline: each call reads the clock
        _isolated = _registry.Create("isolated");
        _isolated.Isolate();
        _pollyOptions = new CircuitBreakerStrategyOptions
        {
            FailureRatio = 0.5, MinimumThroughput = 2, SamplingDuration = TimeSpan.FromSeconds(30),
            BreakDuration = TimeSpan.FromHours(1),
        };
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
        _names = Enumerable.Range(0, CreateOps).Select(i => "created-" + i).ToArray();
        _made = new CircuitBreaker[CreateOps];
        _built = new ResiliencePipeline[CreateOps];
        _trivial = static () => 1;
        _two = new TwoThreads();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _two.Dispose();
        _creates.Dispose();
        _registry.Dispose();
    }

    private ResiliencePipeline Polly() => new ResiliencePipelineBuilder().AddCircuitBreaker(_pollyOptions).Build();

    // ---- floors ---------------------------------------------------------

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("floor")]
    public int DirectDelegateCall() => _sink = Loop(this, Ops, static (b, n) => { int s = 0; for (int i = 0; i < n; i++) s += b._trivial(); return s; });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("floor")]
    public int EmptyPInvoke() => _sink = Loop(this, Ops, static (b, n) => { int s = 0; for (int i = 0; i < n; i++) s += Native.cb_version_number(); return s; });

    // ---- CLOSED, one thread ---------------------------------------------

    private static readonly Func<BreakerBenchmarks, int, int> s_polly = static (b, n) =>
    {
        int s = 0;
        for (int i = 0; i < n; i++) s += b._pollyClosed.Execute(b._trivial);
        return s;
    };

    private static readonly Func<BreakerBenchmarks, int, int> s_countExecute = static (b, n) =>
    {
        int s = 0;
        for (int i = 0; i < n; i++) s += b._count.Execute(b._trivial);
        return s;
    };

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("closed")]
    public int Polly_Execute() => _sink = s_polly(this, Ops);

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("closed")]
    public int Ours_CountWindow_Execute() => _sink = s_countExecute(this, Ops);

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("closed")]
    public int Ours_Consecutive_Execute() => _sink = Loop(this, Ops, static (b, n) =>
    {
        int s = 0;
        for (int i = 0; i < n; i++) s += b._consecutive.Execute(b._trivial);
        return s;
    });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("closed")]
    public int Ours_CountWindow_TryAcquire_Success() => _sink = Loop(this, Ops, static (b, n) =>
    {
        int s = 0;
        for (int i = 0; i < n; i++)
        {
            if (b._count.TryAcquire(out var p)) { s += b._trivial(); p.Success(); }
        }
        return s;
    });

    // ---- CLOSED, two threads on one breaker ------------------------------

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("closed-2-threads")]
    public int Polly_Execute_2_threads() => _sink = _two.Run(s_polly, this, Ops / 2);

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("closed-2-threads")]
    public int Ours_CountWindow_Execute_2_threads() => _sink = _two.Run(s_countExecute, this, Ops / 2);

    // ---- OPEN: learning of the rejection --------------------------------

    [Benchmark(OperationsPerInvoke = Ops, Baseline = true), BenchmarkCategory("open")]
    public int Polly_ExecuteOutcomeAsync_pooled_context() => _sink = Loop(this, Ops, static (b, n) =>
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
    public int Ours_Open_TryAcquire_rejected() => _sink = Loop(this, Ops, static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            if (!b._open.TryAcquire(out _)) rejected++;
        }
        return rejected;
    });

    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("open")]
    public int Ours_Isolated_TryAcquire_rejected() => _sink = Loop(this, Ops, static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            if (!b._isolated.TryAcquire(out _)) rejected++;
        }
        return rejected;
    });

    // ---- OPEN: the rejection as an exception ----------------------------

    [Benchmark(OperationsPerInvoke = ThrowOps, Baseline = true), BenchmarkCategory("open-exception")]
    public int Polly_Execute_BrokenCircuitException() => _sink = Loop(this, ThrowOps, static (b, n) =>
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
    public int Ours_Execute_BrokenCircuitException() => _sink = Loop(this, ThrowOps, static (b, n) =>
    {
        int rejected = 0;
        for (int i = 0; i < n; i++)
        {
            try { b._open.Execute(b._trivial); }
            catch (LazyBreaker.BrokenCircuitException) { rejected++; }
        }
        return rejected;
    });

    // ---- create: what a user makes per breaker ---------------------------

    [Benchmark(OperationsPerInvoke = CreateOps, Baseline = true), BenchmarkCategory("create")]
    public int Polly_Build_pipeline_with_breaker()
    {
        for (int i = 0; i < CreateOps; i++) _built[i] = new ResiliencePipelineBuilder().AddCircuitBreaker(_pollyOptions).Build();
        return _sink = _built.Length;
    }

    // Create then Dispose (a registry holds a name once): both in the figure.
    [Benchmark(OperationsPerInvoke = CreateOps), BenchmarkCategory("create")]
    public int Ours_Create_and_Dispose()
    {
        for (int i = 0; i < CreateOps; i++) _made[i] = _creates.Create(_names[i], _countOptions);
        for (int i = 0; i < CreateOps; i++) _made[i].Dispose();
        return _sink = _made.Length;
    }

    private static int Loop(BreakerBenchmarks b, int n, Func<BreakerBenchmarks, int, int> loop) => loop(b, n);

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
        // Without one, every benchmark of both classes.
        string[] rest = args.Length > 1 ? args.Skip(1).ToArray() : new[] { "--filter", "*" };
        Summary[] summaries = BenchmarkSwitcher.FromTypes(new[] { typeof(BreakerBenchmarks), typeof(IntegrationBenchmarks) })
            .Run(rest, config).ToArray();
        return ClosingNote(summaries) ? 0 : 1;
    }

    // The issue's C# row and the other ratios, from the medians of this run.
    private static bool ClosingNote(Summary[] summaries)
    {
        var median = new Dictionary<string, double>();
        var bytes = new Dictionary<string, long>();
        foreach (BenchmarkReport r in summaries.SelectMany(s => s.Reports))
        {
            if (r.ResultStatistics == null) continue;
            string name = r.BenchmarkCase.Descriptor.WorkloadMethod.Name;
            median[name] = r.ResultStatistics.Median;
            bytes[name] = r.GcStats.GetBytesAllocatedPerOperation(r.BenchmarkCase) ?? -1;
        }
        if (median.Count == 0)
        {
            Console.WriteLine("closing note: no results");
            return false;
        }
        Console.WriteLine();
        Console.WriteLine($"LazyBreaker vs Polly.Core 8.9.1 (medians of this run; x = Polly / ours; quiet path {(LazyBreaker.Native.FastPath.Enabled ? "on" : "OFF: the library publishes none")}):");
        Console.WriteLine("| call | ours | Polly | ratio | target |");
        Console.WriteLine("|---|---|---|---|---|");
        bool met = true;
        void Row(string what, string ours, string polly, double target, bool zeroBytes)
        {
            if (!median.TryGetValue(ours, out double o) || !median.TryGetValue(polly, out double p)) return;
            double x = p / o;
            bool ok = (target == 0 || x >= target) && (!zeroBytes || bytes[ours] == 0);
            string goal = target == 0 ? "" : $">= {target:F0}x{(zeroBytes ? ", 0 B" : "")}: {(ok ? "met" : "NOT met")}";
            if (!ok) met = false;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {what} | {Show(o)}, {bytes[ours]} B | {Show(p)}, {bytes[polly]} B | {x:F1}x | {goal} |"));
        }
        Row("count window `Execute`", "Ours_CountWindow_Execute", "Polly_Execute", 10, true);
        Row("consecutive `Execute`", "Ours_Consecutive_Execute", "Polly_Execute", 10, true);
        Row("count window `TryAcquire`+`Success`", "Ours_CountWindow_TryAcquire_Success", "Polly_Execute", 0, false);
        Row("count window `Execute`, 2 threads on one breaker", "Ours_CountWindow_Execute_2_threads", "Polly_Execute_2_threads", 0, false);
        Row("OPEN `TryAcquire` (false) vs `ExecuteOutcomeAsync`", "Ours_Open_TryAcquire_rejected", "Polly_ExecuteOutcomeAsync_pooled_context", 10, true);
        Row("isolated `TryAcquire` (false) vs OPEN `ExecuteOutcomeAsync`", "Ours_Isolated_TryAcquire_rejected", "Polly_ExecuteOutcomeAsync_pooled_context", 0, false);
        Row("OPEN `Execute`, exception vs exception", "Ours_Execute_BrokenCircuitException", "Polly_Execute_BrokenCircuitException", 0, false);
        Row("create (ours: Create+Dispose; Polly: a pipeline built)", "Ours_Create_and_Dispose", "Polly_Build_pipeline_with_breaker", 0, false);
        Row("Polly pipeline: `AddLazyBreaker` vs Polly's `AddCircuitBreaker`", "Polly_pipeline_with_AddLazyBreaker", "Polly_pipeline_with_Pollys_breaker", 0, false);
        if (median.TryGetValue("Stub_upstream_bare", out double bare)
            && median.TryGetValue("Stub_upstream_through_AddLazyBreakerHandler", out double guarded)
            && median.TryGetValue("Loopback_round_trip_bare_HttpClient", out double roundTrip))
        {
            double share = (guarded - bare) / roundTrip * 100;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"AddLazyBreakerHandler: {Show(guarded - bare)} a request ({bytes["Stub_upstream_through_AddLazyBreakerHandler"] - bytes["Stub_upstream_bare"]} B), {share:F2} % of a loopback round trip ({Show(roundTrip)}): {(share < 1 ? "under 1 %" : "NOT under 1 %")}"));
        }
        if (median.TryGetValue("DirectDelegateCall", out double floor) && median.TryGetValue("EmptyPInvoke", out double pinvoke))
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"floors: a delegate call {floor:F2} ns, an empty P/Invoke {pinvoke:F2} ns"));
        Console.WriteLine(met ? "Targets met." : "Some targets were NOT met in this run (see above).");
        return true;
    }

    private static string Show(double ns) =>
        ns >= 10_000 ? string.Create(CultureInfo.InvariantCulture, $"{ns / 1000:F1} µs")
                     : string.Create(CultureInfo.InvariantCulture, $"{ns:F1} ns");
}
