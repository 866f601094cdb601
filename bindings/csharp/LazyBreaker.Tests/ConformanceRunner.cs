using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using LazyBreaker.Native;

namespace LazyBreaker.Tests;

/// <summary>
/// The C# conformance runner: interprets the step streams that lb_conformance writes at
/// build time from tests/conformance/*.scn (tests/conformance/README.md, "Step streams"),
/// every step through the public C# API, each scenario on its own manual-clock registry,
/// stopping at its first mismatch.
/// </summary>
internal static class ConformanceRunner
{
    private const string Header = "lbsteps 1 ";
    private const double RateTolerance = 1e-9;

    private static int Int(string v) => int.Parse(v, NumberStyles.None, CultureInfo.InvariantCulture);
    private static ulong Ns(string v) => ulong.Parse(v, NumberStyles.None, CultureInfo.InvariantCulture);
    private static double Ratio(string v) => double.Parse(v, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture);

    private static readonly Dictionary<string, TripPolicy> Policies = new()
    {
        ["consecutive"] = TripPolicy.Consecutive, ["count_window"] = TripPolicy.CountWindow,
        ["time_window"] = TripPolicy.TimeWindow,
    };

    // Each cb_config field as the option a C# user sets; durations to the
    // nanosecond (a TimeSpan counts 100 ns ticks), by the field's C name.
    private static readonly Dictionary<string, Action<CircuitBreakerOptions, string, string>> Options = new()
    {
        ["failure_threshold"] = (o, _, v) => o.FailureThreshold = Int(v),
        ["open_duration_ns"] = (o, k, v) => o.SetNanoseconds(k, Ns(v)),
        ["half_open_max_calls"] = (o, _, v) => o.HalfOpenMaxCalls = Int(v),
        ["half_open_success_threshold"] = (o, _, v) => o.HalfOpenSuccessThreshold = Int(v),
        ["half_open_timeout_ns"] = (o, k, v) => o.SetNanoseconds(k, Ns(v)),
        ["policy"] = (o, _, v) => o.Policy = Policies[v],
        ["window_size"] = (o, _, v) => o.WindowSize = Int(v),
        ["window_duration_ns"] = (o, k, v) => o.SetNanoseconds(k, Ns(v)),
        ["window_buckets"] = (o, _, v) => o.SamplingBuckets = Int(v),
        ["minimum_calls"] = (o, _, v) => o.MinimumThroughput = Int(v),
        ["failure_rate_threshold"] = (o, _, v) => o.FailureRatio = Ratio(v),
        ["slow_call_ns"] = (o, k, v) => o.SetNanoseconds(k, Ns(v)),
        ["slow_call_rate_threshold"] = (o, _, v) => o.SlowCallRatio = Ratio(v),
        ["open_backoff_multiplier"] = (o, _, v) => o.BreakDurationMultiplier = Ratio(v),
        ["open_duration_max_ns"] = (o, k, v) => o.SetNanoseconds(k, Ns(v)),
        ["open_jitter"] = (o, _, v) => o.BreakDurationJitter = Ratio(v),
    };

    private static readonly Dictionary<CircuitState, string> States = new()
    {
        [CircuitState.Closed] = "closed", [CircuitState.Open] = "open", [CircuitState.HalfOpen] = "half_open",
        [CircuitState.Isolated] = "forced_open", [CircuitState.Disabled] = "disabled",
    };

    private static readonly Dictionary<string, Verdict> Outcomes = new()
    {
        ["success"] = Verdict.Success, ["failure"] = Verdict.Failure, ["ignored"] = Verdict.Ignored,
    };

    private static readonly Dictionary<string, Func<BreakerStatistics, ulong>> Counts = new()
    {
        ["admitted"] = s => s.Admitted, ["rejected"] = s => s.Rejected, ["successes"] = s => s.Successes,
        ["failures"] = s => s.Failures, ["ignored"] = s => s.Ignored, ["trips"] = s => s.Trips,
        ["consecutive_failures"] = s => s.ConsecutiveFailures, ["slow"] = s => s.Slow,
        ["state_ns"] = s => s.StateNanoseconds,
    };

    /// <summary>Interprets one stream; returns its mismatches, one per failing scenario.</summary>
    internal static List<string> RunStream(string path)
    {
        string[] lines = File.ReadAllLines(path);
        if (lines.Length == 0 || !lines[0].StartsWith(Header, StringComparison.Ordinal))
            throw new InvalidDataException($"{path}: not a step stream of version 1");
        string source = lines[0][Header.Length..];
        var mismatches = new List<string>();
        Scenario? s = null;
        foreach (string line in lines[1..])
        {
            string[] t = line.Split(' ');
            if (t[0] == "scenario") s = new Scenario(t[2]);
            if (t[0] == "end")
            {
                s!.Breaker?.Dispose();
                s.Registry?.Dispose();
                if (s.Mismatch != null) mismatches.Add(s.Mismatch);
            }
            else if (s!.Mismatch == null) // after a mismatch, the rest of the scenario is skipped
            {
                try
                {
                    if (s.Step(t) is string m) s.Mismatch = $"{source}:{t[1]}: mismatch: {m}";
                }
                catch (Exception e) when (e is ArgumentException or LazyBreakerException or InvalidOperationException
                                              or FormatException or OverflowException)
                {
                    s.Mismatch = $"{source}:{t[1]}: mismatch: {t[0]}: {e.GetType().Name}: {e.Message}";
                }
            }
        }
        return mismatches;
    }

    private static string? Expect(string what, string want, string got) =>
        want == got ? null : $"{what}: expected {want}, got {got}";

    /// <summary>One scenario as it runs.</summary>
    private sealed class Scenario(string name)
    {
        internal Registry? Registry;
        internal CircuitBreaker? Breaker;
        internal string? Mismatch;
        private readonly CircuitBreakerOptions _options = new();
        private readonly Dictionary<string, Permit> _permits = new();

        // A mismatch, or null when the step did what the stream expects.
        internal string? Step(string[] t)
        {
            switch (t[0])
            {
                case "scenario":
                    Registry = Registry.Open(new RegistryOptions { Clock = RegistryClock.Manual, Capacity = 1 });
                    return null;
                case "config":
                    if (t[4] == "set") Options[t[2]](_options, t[2], t[3]);
                    return null;
                case "create":
                    Breaker = Registry!.Create(name, _options);
                    return null;
                case "advance":
                    Registry!.AdvanceNanoseconds(Ns(t[2]));
                    return null;
            }
            CircuitBreaker b = Breaker!;
            switch (t[0])
            {
                case "allow":
                    bool admitted = b.TryAcquire(out Permit permit);
                    if (admitted) _permits[t[3]] = permit;
                    return Expect($"allow (state {b.State})", t[2], admitted ? "ok" : "rejected");
                case "done":
                    Done(b, _permits[t[2]], Outcomes[t[3]]);
                    return null;
                case "state":
                    return Expect("state", t[2], States[b.State]);
                case "retry_after":
                    string ns = b.RetryAfterNanoseconds.ToString(CultureInfo.InvariantCulture);
                    return Expect($"retry_after (state {b.State})", t[2], ns);
                case "force_open": b.Isolate(); return null;
                case "disable": b.Disable(); return null;
                case "reset": b.Reset(); return null;
                case "trip": b.TripNanoseconds(Ns(t[2])); return null;
                case "count":
                    return Expect(t[2], t[3], Counts[t[2]](b.Statistics).ToString(CultureInfo.InvariantCulture));
                case "rate":
                    BreakerStatistics st = b.Statistics;
                    double got = t[2] == "failure_rate" ? st.FailureRate : st.SlowRate;
                    return Math.Abs(got - Ratio(t[3])) <= RateTolerance ? null : $"{t[2]}: expected {t[3]}, got {got:R}";
                default:
                    throw new InvalidDataException($"not a step: {string.Join(' ', t)}");
            }
        }

        private static void Done(CircuitBreaker b, Permit p, Verdict v)
        {
            if (p.IsReported)
            {
                // Scenarios may report a ticket twice (a probe reported twice
                // counts once); Permit refuses a second verdict by design, so
                // the repeat goes to the library as it is.
                int status = NativeMethods.cb_done(b.Handle, p.Ticket, (int)v);
                if (status != Status.Ok) throw NativeErrors.FromLastError(status);
            }
            else if (v == Verdict.Success) p.Success();
            else if (v == Verdict.Failure) p.Failure();
            else p.Ignore();
        }
    }
}
