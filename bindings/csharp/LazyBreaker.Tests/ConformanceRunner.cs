using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using LazyBreaker.Native;

namespace LazyBreaker.Tests;

/// <summary>
/// The C# runner of tests/conformance/*.scn (format: tests/conformance/README.md):
/// the whole file is parsed first (a malformed line fails the file, naming
/// file:line), then each scenario runs on its own manual-clock registry and
/// breaker through the public C# API, stopping at its first mismatch.
/// </summary>
internal static class ConformanceRunner
{
    internal sealed class MalformedException : Exception
    {
        public MalformedException(string message) : base(message) { }
    }

    private enum Kind { U32, U64, Decimal, Policy }

    private sealed record Field(string Key, Kind Kind, ulong U, double D);

    private sealed record Step(int Line, string Op, string Name, ulong Value, IReadOnlyList<Field> Fields);

    private sealed record Scenario(string Name, int Line, List<Step> Steps);

    private static readonly Dictionary<string, int> States = new()
    {
        ["closed"] = 0, ["open"] = 1, ["half_open"] = 2, ["forced_open"] = 3, ["disabled"] = 4,
    };

    private static readonly Dictionary<string, Verdict> Outcomes = new()
    {
        ["success"] = Verdict.Success, ["failure"] = Verdict.Failure, ["ignored"] = Verdict.Ignored,
    };

    private static readonly Dictionary<string, TripPolicy> Policies = new()
    {
        ["consecutive"] = TripPolicy.Consecutive, ["count_window"] = TripPolicy.CountWindow,
        ["time_window"] = TripPolicy.TimeWindow,
    };

    private static readonly Dictionary<string, Kind> ConfigKeys = new()
    {
        ["failure_threshold"] = Kind.U32, ["open_duration_ns"] = Kind.U64, ["half_open_max_calls"] = Kind.U32,
        ["half_open_success_threshold"] = Kind.U32, ["half_open_timeout_ns"] = Kind.U64, ["policy"] = Kind.Policy,
        ["window_size"] = Kind.U32, ["window_duration_ns"] = Kind.U64, ["window_buckets"] = Kind.U32,
        ["minimum_calls"] = Kind.U32, ["failure_rate_threshold"] = Kind.Decimal, ["slow_call_ns"] = Kind.U64,
        ["slow_call_rate_threshold"] = Kind.Decimal, ["open_backoff_multiplier"] = Kind.Decimal,
        ["open_duration_max_ns"] = Kind.U64, ["open_jitter"] = Kind.Decimal,
    };

    private static readonly Dictionary<string, Kind> StatsKeys = new()
    {
        ["admitted"] = Kind.U64, ["rejected"] = Kind.U64, ["successes"] = Kind.U64, ["failures"] = Kind.U64,
        ["ignored"] = Kind.U64, ["trips"] = Kind.U64, ["consecutive_failures"] = Kind.U64, ["slow"] = Kind.U64,
        ["state_ns"] = Kind.U64, ["failure_rate"] = Kind.Decimal, ["slow_rate"] = Kind.Decimal,
    };

    private const double RateTolerance = 1e-9;
    private static readonly Regex Ident = new("^[A-Za-z_][A-Za-z0-9_]*$", RegexOptions.CultureInvariant);
    private static readonly Regex DecimalText = new("^[0-9]+(\\.[0-9]+)?$", RegexOptions.CultureInvariant);

    /// <summary>Runs a file; returns its mismatches (empty: it passed). Throws MalformedException.</summary>
    internal static List<string> RunFile(string path, ulong clockOffset)
    {
        List<Scenario> scenarios = Parse(path);
        var mismatches = new List<string>();
        foreach (Scenario s in scenarios)
        {
            string? mismatch = Run(path, s, clockOffset);
            if (mismatch != null) mismatches.Add(mismatch);
        }
        return mismatches;
    }

    // ---- parsing ----------------------------------------------------------

    private static List<Scenario> Parse(string path)
    {
        var scenarios = new List<Scenario>();
        var names = new HashSet<string>();
        var tickets = new HashSet<string>();
        var errors = new List<string>();
        string[] lines = File.ReadAllLines(path);
        for (int i = 0; i < lines.Length; i++)
        {
            string raw = lines[i];
            int hash = raw.IndexOf('#');
            if (hash >= 0) raw = raw[..hash];
            string[] t = raw.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries);
            if (t.Length == 0) continue;
            string? why = ParseLine(i + 1, t, scenarios, names, tickets);
            if (why != null) errors.Add($"{path}:{i + 1}: malformed: {why}");
        }
        if (scenarios.Count == 0) errors.Add($"{path}: malformed: no scenario in the file");
        foreach (Scenario s in scenarios)
        {
            if (s.Steps.Count == 0 || (s.Steps.Count == 1 && s.Steps[0].Op == "config"))
                errors.Add($"{path}:{s.Line}: malformed: scenario '{s.Name}' has no steps");
        }
        if (errors.Count > 0) throw new MalformedException(string.Join(Environment.NewLine, errors));
        return scenarios;
    }

    private static string? ParseLine(int line, string[] t, List<Scenario> scenarios, HashSet<string> names,
                                     HashSet<string> tickets)
    {
        string cmd = t[0];
        string? Arity(int want) => t.Length == want ? null : $"'{cmd}' takes {want - 1} argument(s), got {t.Length - 1}";
        if (cmd == "scenario")
        {
            if (Arity(2) is string a) return a;
            if (!Ident.IsMatch(t[1])) return "a scenario name is [A-Za-z_][A-Za-z0-9_]*";
            if (!names.Add(t[1])) return $"scenario '{t[1]}' is already defined in this file";
            scenarios.Add(new Scenario(t[1], line, new List<Step>()));
            tickets.Clear();
            return null;
        }
        if (scenarios.Count == 0) return "a step before the first 'scenario' line";
        Scenario sc = scenarios[^1];
        Step step;
        switch (cmd)
        {
            case "config":
            {
                if (sc.Steps.Count != 0) return "'config' must come first in a scenario, once";
                if (t.Length < 2) return "'config' needs at least one key=value";
                string? why = Fields(t, ConfigKeys, out var fields);
                if (why != null) return why;
                step = new Step(line, cmd, "", 0, fields);
                break;
            }
            case "allow":
                if (t.Length < 3 || t[1] != "->") return "expected 'allow -> ok TICKET' or 'allow -> rejected'";
                if (t[2] == "rejected")
                {
                    if (Arity(3) is string a) return a;
                    step = new Step(line, "allow_rejected", "", 0, Array.Empty<Field>());
                }
                else if (t[2] == "ok")
                {
                    if (Arity(4) is string a) return a;
                    if (!Ident.IsMatch(t[3])) return "a ticket name is [A-Za-z_][A-Za-z0-9_]*";
                    if (!tickets.Add(t[3])) return $"ticket '{t[3]}' is already bound in this scenario";
                    step = new Step(line, "allow_ok", t[3], 0, Array.Empty<Field>());
                }
                else
                {
                    return $"allow expects 'ok' or 'rejected', got '{t[2]}'";
                }
                break;
            case "done":
            {
                if (Arity(3) is string a) return a;
                if (!tickets.Contains(t[1])) return $"ticket '{t[1]}' is not bound by an earlier 'allow -> ok'";
                if (!Outcomes.TryGetValue(t[2], out Verdict v)) return $"outcome must be success, failure or ignored, got '{t[2]}'";
                step = new Step(line, cmd, t[1], (ulong)v, Array.Empty<Field>());
                break;
            }
            case "advance":
            case "trip":
            {
                if (Arity(2) is string a) return a;
                if (!TryU64(t[1], out ulong ns)) return $"{cmd} takes nanoseconds as a plain decimal, got '{t[1]}'";
                step = new Step(line, cmd, "", ns, Array.Empty<Field>());
                break;
            }
            case "state":
            {
                if (Arity(2) is string a) return a;
                if (!States.TryGetValue(t[1], out int s)) return $"unknown state '{t[1]}'";
                step = new Step(line, cmd, "", (ulong)s, Array.Empty<Field>());
                break;
            }
            case "retry_after":
            {
                if (Arity(2) is string a) return a;
                ulong ns = ulong.MaxValue;
                if (t[1] != "max" && !TryU64(t[1], out ns)) return $"retry_after takes nanoseconds or 'max', got '{t[1]}'";
                step = new Step(line, cmd, "", ns, Array.Empty<Field>());
                break;
            }
            case "force_open":
            case "disable":
            case "reset":
                if (Arity(1) is string r) return r;
                step = new Step(line, cmd, "", 0, Array.Empty<Field>());
                break;
            case "stats":
            {
                if (t.Length < 2) return "'stats' needs at least one key=value";
                string? why = Fields(t, StatsKeys, out var fields);
                if (why != null) return why;
                step = new Step(line, cmd, "", 0, fields);
                break;
            }
            default:
                return $"unknown step '{cmd}'";
        }
        sc.Steps.Add(step);
        return null;
    }

    private static string? Fields(string[] t, Dictionary<string, Kind> keys, out List<Field> fields)
    {
        fields = new List<Field>();
        var seen = new HashSet<string>();
        for (int i = 1; i < t.Length; i++)
        {
            int eq = t[i].IndexOf('=');
            if (eq < 0) return $"expected key=value, got '{t[i]}'";
            string key = t[i][..eq], val = t[i][(eq + 1)..];
            if (!keys.TryGetValue(key, out Kind kind)) return $"unknown key '{key}'";
            if (!seen.Add(key)) return $"key '{key}' given twice";
            switch (kind)
            {
                case Kind.U32:
                case Kind.U64:
                    if (!TryU64(val, out ulong u)) return $"value of '{key}' must be a plain integer, got '{val}'";
                    fields.Add(new Field(key, kind, u, 0));
                    break;
                case Kind.Decimal:
                    if (!DecimalText.IsMatch(val)) return $"value of '{key}' must be digits or digits.digits, got '{val}'";
                    double d = double.Parse(val, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture);
                    if (!double.IsFinite(d)) return $"value of '{key}' is not finite";
                    fields.Add(new Field(key, kind, 0, d));
                    break;
                default:
                    if (!Policies.TryGetValue(val, out TripPolicy p)) return $"policy must be consecutive, count_window or time_window, got '{val}'";
                    fields.Add(new Field(key, kind, (ulong)p, 0));
                    break;
            }
        }
        return null;
    }

    private static bool TryU64(string s, out ulong value)
    {
        value = 0;
        if (s.Length == 0 || s.Any(c => c < '0' || c > '9')) return false;
        return ulong.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out value);
    }

    // ---- running ----------------------------------------------------------

    private static string? Run(string path, Scenario sc, ulong clockOffset)
    {
        string Fail(int line, string what) => $"{path}:{line}: mismatch: {what}";
        using Registry registry = Registry.Open(new RegistryOptions { Clock = RegistryClock.Manual, Capacity = 1 });
        var options = new CircuitBreakerOptions { Policy = TripPolicy.Consecutive }; // cb_config_init's policy
        int first = 0;
        if (sc.Steps.Count > 0 && sc.Steps[0].Op == "config")
        {
            foreach (Field f in sc.Steps[0].Fields)
            {
                string? why = SetOption(options, f);
                if (why != null) return Fail(sc.Steps[0].Line, $"{f.Key}={f.U}: {why}");
            }
            first = 1;
        }
        if (clockOffset != 0)
        {
            // Time-window buckets start at multiples of their width: an offset
            // that is not one moves the boundaries the scenario relies on.
            if (options.Policy == TripPolicy.TimeWindow)
            {
                using var defaults = new cb_config();
                ulong duration = ConfigValue(sc, "window_duration_ns") ?? defaults.window_duration_ns;
                ulong buckets = ConfigValue(sc, "window_buckets") ?? defaults.window_buckets;
                if (buckets != 0 && clockOffset % Math.Max(1, duration / buckets) != 0)
                    return Fail(sc.Line, $"the time window's bucket width does not divide the clock offset {clockOffset}");
            }
            registry.AdvanceNanoseconds(clockOffset);
        }
        CircuitBreaker breaker;
        try
        {
            breaker = registry.Create(sc.Name, options);
        }
        catch (Exception e) when (e is ArgumentException or LazyBreakerException)
        {
            return Fail(first == 1 ? sc.Steps[0].Line : sc.Line, $"Create: {e.GetType().Name}: {e.Message}");
        }
        using (breaker)
        {
            var permits = new Dictionary<string, Permit>();
            for (int i = first; i < sc.Steps.Count; i++)
            {
                Step s = sc.Steps[i];
                try
                {
                    string? mismatch = Apply(registry, breaker, permits, s);
                    if (mismatch != null) return Fail(s.Line, mismatch);
                }
                catch (Exception e) when (e is ArgumentException or LazyBreakerException or InvalidOperationException)
                {
                    return Fail(s.Line, $"{s.Op}: {e.GetType().Name}: {e.Message}");
                }
            }
        }
        return null;
    }

    private static string? Apply(Registry registry, CircuitBreaker breaker, Dictionary<string, Permit> permits, Step s)
    {
        switch (s.Op)
        {
            case "allow_ok":
            case "allow_rejected":
            {
                bool admitted = breaker.TryAcquire(out Permit permit);
                bool want = s.Op == "allow_ok";
                if (admitted != want)
                    return $"allow: expected {(want ? "ok" : "rejected")}, got {(admitted ? "ok" : "rejected")} (state {breaker.State})";
                if (admitted) permits[s.Name] = permit;
                return null;
            }
            case "done":
            {
                Permit p = permits[s.Name];
                if (p.IsReported)
                {
                    // Scenarios may report a ticket twice (a probe reported
                    // twice counts once); Permit refuses a second verdict by
                    // design, so the repeat goes to the library as it is.
                    int status = NativeMethods.cb_done(breaker.Handle, p.Ticket, (int)s.Value);
                    if (status != Status.Ok) throw NativeErrors.FromLastError(status);
                    return null;
                }
                switch ((Verdict)s.Value)
                {
                    case Verdict.Success: p.Success(); break;
                    case Verdict.Failure: p.Failure(); break;
                    default: p.Ignore(); break;
                }
                return null;
            }
            case "advance":
                registry.AdvanceNanoseconds(s.Value);
                return null;
            case "state":
            {
                int got = (int)breaker.State;
                return got == (int)s.Value ? null : $"state: expected {(CircuitState)(int)s.Value}, got {(CircuitState)got}";
            }
            case "retry_after":
            {
                ulong got = breaker.RetryAfterNanoseconds;
                return got == s.Value ? null : $"retry_after: expected {s.Value}, got {got} (state {breaker.State})";
            }
            case "force_open": breaker.Isolate(); return null;
            case "disable": breaker.Disable(); return null;
            case "reset": breaker.Reset(); return null;
            case "trip": breaker.TripNanoseconds(s.Value); return null;
            case "stats":
            {
                BreakerStatistics st = breaker.Statistics;
                foreach (Field f in s.Fields)
                {
                    if (f.Kind == Kind.Decimal)
                    {
                        double v = f.Key == "failure_rate" ? st.FailureRate : st.SlowRate;
                        if (!(Math.Abs(v - f.D) <= RateTolerance))
                            return $"stats: expected {f.Key}={f.D:R}, got {v:R}";
                    }
                    else
                    {
                        ulong v = f.Key switch
                        {
                            "admitted" => st.Admitted, "rejected" => st.Rejected, "successes" => st.Successes,
                            "failures" => st.Failures, "ignored" => st.Ignored, "trips" => st.Trips,
                            "slow" => st.Slow, "state_ns" => st.StateNanoseconds, _ => st.ConsecutiveFailures,
                        };
                        if (v != f.U) return $"stats: expected {f.Key}={f.U}, got {v}";
                    }
                }
                return null;
            }
            default:
                return $"runner bug: unexpected step {s.Op}";
        }
    }

    private static ulong? ConfigValue(Scenario sc, string key) =>
        sc.Steps.Count > 0 && sc.Steps[0].Op == "config" ? sc.Steps[0].Fields.FirstOrDefault(f => f.Key == key)?.U : null;

    // One option per cb_config field; null when the value fits, else why not.
    private static string? SetOption(CircuitBreakerOptions o, Field f)
    {
        if (f.Kind == Kind.U32 && f.U > int.MaxValue)
            return "out of range"; // over every library maximum, and over what an int option holds
        int i = (int)Math.Min(f.U, int.MaxValue);
        switch (f.Key)
        {
            case "failure_threshold": o.FailureThreshold = i; break;
            case "half_open_max_calls": o.HalfOpenMaxCalls = i; break;
            case "half_open_success_threshold": o.HalfOpenSuccessThreshold = i; break;
            case "policy": o.Policy = (TripPolicy)(int)f.U; break;
            case "window_size": o.WindowSize = i; break;
            case "window_buckets": o.SamplingBuckets = i; break;
            case "minimum_calls": o.MinimumThroughput = i; break;
            case "failure_rate_threshold": o.FailureRatio = f.D; break;
            case "slow_call_rate_threshold": o.SlowCallRatio = f.D; break;
            case "open_backoff_multiplier": o.BreakDurationMultiplier = f.D; break;
            case "open_jitter": o.BreakDurationJitter = f.D; break;
            default: o.SetNanoseconds(f.Key, f.U); break;
        }
        return null;
    }
}
