using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using LazyBreaker.Native;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// Which options a policy reads comes from the library (cb_policy_reads),
/// asked about every cb_config field under this binding's names: the
/// refusals and the inferred policy follow its answers, and a name it does
/// not know is refused by it.
/// </summary>
public class PolicyTableTests
{
    private static int LibraryAnswer(TripPolicy policy, string field) => LbNative.cb_policy_reads((int)policy, field);

    [Fact]
    public void The_fields_asked_about_are_cb_configs_in_its_order()
    {
        string[] native = typeof(NativeConfig).GetFields(BindingFlags.Instance | BindingFlags.NonPublic)
            .Where(f => f.Name != nameof(NativeConfig.struct_size))
            .OrderBy(f => (long)Marshal.OffsetOf<NativeConfig>(f.Name))
            .Select(f => f.Name).ToArray();
        Assert.Equal(native, ConfigFields.All.Select(f => f.Name).ToArray());
        Assert.Equal(Enumerable.Range(0, ConfigFields.All.Length), ConfigFields.All.Select(f => f.Index));
    }

    [Fact]
    public void Every_answer_the_binding_checks_is_the_librarys()
    {
        var seen = new HashSet<int>();
        foreach (TripPolicy p in PolicyReads.Policies)
        {
            foreach (ConfigField f in ConfigFields.All)
            {
                int answer = LibraryAnswer(p, f.Name);
                Assert.True(answer == LbNative.CB_FIELD_READ || answer == LbNative.CB_FIELD_IGNORED ||
                            answer == LbNative.CB_FIELD_READ_WITH_SLOW_CALLS, $"{p} {f.Name}: {answer}");
                Assert.True(answer == PolicyReads.Answer(p, f), $"{p} {f.Name}: the library says {answer}, the binding {PolicyReads.Answer(p, f)}");
                seen.Add(answer);
            }
        }
        Assert.Equal(3, seen.Count); // each kind of answer is asked about
    }

    [Fact]
    public void A_field_or_policy_the_library_does_not_know_is_CB_EINVAL()
    {
        var e = Assert.Throws<NativeArgumentException>(() => LbNative.cb_policy_reads((int)TripPolicy.CountWindow, "window_length"));
        Assert.Equal("field", e.Field);
        e = Assert.Throws<NativeArgumentException>(() => LbNative.cb_policy_reads((int)TripPolicy.CountWindow, null));
        Assert.Equal("field", e.Field);
        e = Assert.Throws<NativeArgumentException>(() => LbNative.cb_policy_reads(3, "window_size"));
        Assert.Equal("policy", e.Field);
    }

    // The option of `field` set to the library's default: valid under every policy.
    private static void SetToDefault(CircuitBreakerOptions o, string field)
    {
        NativeConfig d = NativeConfig.Defaults;
        switch (field)
        {
            case "failure_threshold": o.FailureThreshold = (int)d.failure_threshold; break;
            case "half_open_max_calls": o.HalfOpenMaxCalls = (int)d.half_open_max_calls; break;
            case "half_open_success_threshold": o.HalfOpenSuccessThreshold = (int)d.half_open_success_threshold; break;
            case "policy": break;
            case "window_size": o.WindowSize = (int)d.window_size; break;
            case "window_buckets": o.SamplingBuckets = (int)d.window_buckets; break;
            case "minimum_calls": o.MinimumThroughput = (int)d.minimum_calls; break;
            case "failure_rate_threshold": o.FailureRatio = d.failure_rate_threshold; break;
            case "slow_call_rate_threshold": o.SlowCallRatio = d.slow_call_rate_threshold; break;
            case "open_backoff_multiplier": o.BreakDurationMultiplier = d.open_backoff_multiplier; break;
            case "open_jitter": o.BreakDurationJitter = d.open_jitter; break;
            case "open_duration_ns": o.SetNanoseconds(field, d.open_duration_ns); break;
            case "half_open_timeout_ns": o.SetNanoseconds(field, d.half_open_timeout_ns); break;
            case "window_duration_ns": o.SetNanoseconds(field, d.window_duration_ns); break;
            case "slow_call_ns": o.SetNanoseconds(field, d.slow_call_ns); break;
            case "open_duration_max_ns": o.SetNanoseconds(field, d.open_duration_max_ns); break;
            default: throw new ArgumentException($"no option for cb_config field {field}", nameof(field));
        }
    }

    [Fact]
    public void An_explicit_policy_refuses_exactly_the_options_the_library_says_it_ignores()
    {
        using var registry = Registry.WithManualClock();
        int refused = 0, made = 0;
        foreach (TripPolicy p in PolicyReads.Policies)
        {
            foreach (ConfigField f in ConfigFields.All)
            {
                if (f.Name == "policy") continue;
                int answer = LibraryAnswer(p, f.Name);
                foreach (bool slowCalls in new[] { false, true })
                {
                    var o = new CircuitBreakerOptions { Policy = p };
                    SetToDefault(o, f.Name);
                    if (slowCalls) o.SlowCallDuration = TimeSpan.FromSeconds(1);
                    bool read = answer == LbNative.CB_FIELD_READ || (answer == LbNative.CB_FIELD_READ_WITH_SLOW_CALLS && slowCalls);
                    string name = $"{p}-{f.Name}-{slowCalls}";
                    if (read)
                    {
                        registry.Create(name, o).Dispose();
                        made++;
                        continue;
                    }
                    var e = Assert.Throws<ArgumentException>(() => registry.Create(name, o));
                    Assert.Equal(f.Option, e.ParamName);
                    Assert.StartsWith($"{f.Option} is ignored by Policy = TripPolicy.{p}", e.Message);
                    refused++;
                }
            }
        }
        Assert.True(refused > 0 && made > 0, $"{refused} refused, {made} made");
    }

    [Fact]
    public void An_option_set_alone_gives_the_first_policy_the_library_says_reads_it()
    {
        foreach (ConfigField f in ConfigFields.All)
        {
            if (f.Name == "policy") continue;
            var o = new CircuitBreakerOptions();
            SetToDefault(o, f.Name);
            // Polly's model: a ratio or a throughput alone samples a duration.
            var set = f.Name is "failure_rate_threshold" or "minimum_calls" ? new[] { f.Name, "window_duration_ns" } : new[] { f.Name };
            TripPolicy expected = PolicyReads.Policies.First(
                p => set.All(field => LibraryAnswer(p, field) == LbNative.CB_FIELD_READ));
            Assert.True(expected == o.EffectivePolicy, $"{f.Option} alone gives {o.EffectivePolicy}, the library's answers {expected}");
        }
    }
}
