using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// Every tests/conformance/*.scn, read from the source tree (the files the
/// C++ runner reads), run with the clock starting at 0 and, once the README
/// specifies it, at the clock offset 10^18 ns (README.md, "Clock offset");
/// and the runner's own
/// self-tests: each selftest/malformed file must be refused, each
/// selftest/mismatch file must mismatch. known_bugs/ is skipped, as the
/// README asks of bindings.
/// </summary>
[Trait("Category", "conformance")]
public class ConformanceTests
{
    internal const ulong ClockOffset = 1_000_000_000_000_000_000;

    // The source tree's tests/conformance (baked in at build time), or
    // LB_CONFORMANCE_DIR to run another checkout's scenarios.
    private static string Dir => Environment.GetEnvironmentVariable("LB_CONFORMANCE_DIR") is { Length: > 0 } dir
        ? dir
        : typeof(ConformanceTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
              .Single(a => a.Key == "ConformanceDir").Value!;

    private static IEnumerable<object[]> Files(string sub) =>
        Directory.GetFiles(Path.Combine(Dir, sub), "*.scn").OrderBy(f => f, StringComparer.Ordinal)
                 .Select(f => new object[] { Path.GetFileName(f) });

    public static IEnumerable<object[]> Scenarios() => Files("");
    public static IEnumerable<object[]> Malformed() => Files(Path.Combine("selftest", "malformed"));
    public static IEnumerable<object[]> Mismatching() => Files(Path.Combine("selftest", "mismatch"));

    [Fact]
    public void The_scenario_directory_holds_scenarios()
    {
        Assert.True(Scenarios().Count() >= 10, $"too few scenarios in {Dir}");
        Assert.NotEmpty(Malformed());
        Assert.NotEmpty(Mismatching());
    }

    /// <summary>
    /// Each file at clock start 0 and, where the README specifies the clock
    /// offset run (its "Clock offset" section), at 10^18 ns too: the runner
    /// implements the options the README documents, no more.
    /// </summary>
    public static IEnumerable<object[]> ScenarioRuns() =>
        Scenarios().SelectMany(f => ClockOffsetSpecified
                                        ? new[] { new object[] { f[0], 0UL }, new object[] { f[0], ClockOffset } }
                                        : new[] { new object[] { f[0], 0UL } });

    internal static bool ClockOffsetSpecified =>
        File.ReadAllText(Path.Combine(Dir, "README.md")).Contains("## Clock offset", StringComparison.Ordinal);

    [Theory]
    [MemberData(nameof(ScenarioRuns))]
    public void Every_scenario_passes(string file, ulong clockOffset) =>
        AssertPasses(Path.Combine(Dir, file), clockOffset);

    [Fact]
    public void The_runner_honours_the_clock_offset_it_is_given()
    {
        // Whether or not the README asks for the second run yet: a manual
        // clock advanced by the offset before the breaker is created.
        string path = Path.Combine(Dir, "closed.scn");
        Assert.Empty(ConformanceRunner.RunFile(path, ClockOffset));
    }

    [Theory]
    [MemberData(nameof(Malformed))]
    public void A_malformed_file_is_refused(string file)
    {
        string path = Path.Combine(Dir, "selftest", "malformed", file);
        var e = Assert.Throws<ConformanceRunner.MalformedException>(() => ConformanceRunner.RunFile(path, 0));
        Assert.Contains(path + ":", e.Message);
    }

    [Theory]
    [MemberData(nameof(Mismatching))]
    public void A_wrong_expectation_is_a_mismatch(string file)
    {
        string path = Path.Combine(Dir, "selftest", "mismatch", file);
        List<string> mismatches = ConformanceRunner.RunFile(path, 0);
        Assert.NotEmpty(mismatches);
        Assert.All(mismatches, m => Assert.Contains(": mismatch: ", m));
    }

    private static void AssertPasses(string path, ulong offset)
    {
        List<string> mismatches = ConformanceRunner.RunFile(path, offset);
        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches));
    }
}
