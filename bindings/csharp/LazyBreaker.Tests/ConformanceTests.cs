using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// Every tests/conformance/*.scn, as the step streams that lb_conformance
/// writes at build time: each file with the clock starting at 0 and at the
/// clock offset 10^18 ns (NAME.late_clock.steps; README.md, "Clock offset");
/// and the runner's own self-tests: each selftest/mismatch stream must
/// mismatch. The malformed self-tests are the C++ parser's alone.
/// </summary>
[Trait("Category", "conformance")]
public class ConformanceTests
{
    // build/tests/conformance/steps, which CTest passes.
    private static string Dir => Environment.GetEnvironmentVariable("LB_CONFORMANCE_STEPS") is { Length: > 0 } dir
        ? dir
        : throw new InvalidOperationException("LB_CONFORMANCE_STEPS is not set (CTest sets it to build/tests/conformance/steps)");

    private static IEnumerable<object[]> Files(string sub) =>
        Directory.GetFiles(Path.Combine(Dir, sub), "*.steps").OrderBy(f => f, StringComparer.Ordinal)
                 .Select(f => new object[] { Path.Combine(sub, Path.GetFileName(f)) });

    public static IEnumerable<object[]> Scenarios() => Files("");
    public static IEnumerable<object[]> Mismatching() => Files(Path.Combine("selftest", "mismatch"));

    [Fact]
    public void The_stream_directory_holds_streams()
    {
        Assert.True(Scenarios().Count() >= 20, $"too few step streams in {Dir}");
        Assert.Contains(Scenarios(), f => ((string)f[0]).EndsWith(".late_clock.steps", StringComparison.Ordinal));
        Assert.NotEmpty(Mismatching());
    }

    [Theory]
    [MemberData(nameof(Scenarios))]
    public void Every_scenario_passes(string file)
    {
        List<string> mismatches = ConformanceRunner.RunStream(Path.Combine(Dir, file));
        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches));
    }

    [Theory]
    [MemberData(nameof(Mismatching))]
    public void A_wrong_expectation_is_a_mismatch(string file)
    {
        List<string> mismatches = ConformanceRunner.RunStream(Path.Combine(Dir, file));
        Assert.NotEmpty(mismatches);
        Assert.All(mismatches, m => Assert.Contains(": mismatch: ", m));
    }
}
