using System;
using System.Globalization;
using System.IO;
using LazyBreaker.Native;
using Xunit;
using Xunit.Abstractions;

namespace LazyBreaker.Tests;

/// <summary>
/// The quiet path's rules as this port decides them (Native/FastPath.cs:
/// DecideAllow, DecideDone, CountCell, the functions the hot path calls)
/// against the vectors that fastpath.h's own C functions computed: the file
/// LB_QUIET_VECTORS names (CTest sets it to the build's
/// tests/quiet_vectors.txt; docs/fastpath.md gives the format).
/// </summary>
public class QuietVectorTests(ITestOutputHelper output)
{
    /// <summary>The vectors' p, lean and now as values.</summary>
    private readonly struct GivenLoads : FastPath.IRejectLoads
    {
        private readonly ulong _period, _now;
        private readonly uint _lean;

        internal GivenLoads(ulong period, uint lean, ulong now)
        {
            _period = period;
            _lean = lean;
            _now = now;
        }

        public uint Lean() => _lean;

        public ulong Period() => _period;

        public ulong Now() => _now;
    }

    private static ulong Hex(string[] t, int i, int line) =>
        ulong.TryParse(t[i], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong v)
            ? v
            : throw new FormatException($"line {line}: field {i} '{t[i]}' is not a hex number");

    private static int Decision(string word, int line) => word switch
    {
        "library" => FastPath.Library,
        "admit" => FastPath.Admit,
        "reject" => FastPath.Reject,
        "success" => FastPath.Success,
        _ => throw new FormatException($"line {line}: '{word}' is no decision"),
    };

    private static string Word(int decision) => decision switch
    {
        FastPath.Library => "library",
        FastPath.Admit => "admit",
        FastPath.Reject => "reject",
        FastPath.Success => "success",
        _ => decision.ToString(CultureInfo.InvariantCulture),
    };

    private static string[] Fields(string text, int count, int line)
    {
        string[] t = text.Split(' ');
        if (t.Length != count) throw new FormatException($"line {line}: {t.Length} fields, {count} expected: {text}");
        return t;
    }

    [Fact]
    [Trait("Category", "quiet_vectors")]
    public void Every_vector_decides_as_the_C_rules_do()
    {
        string? path = Environment.GetEnvironmentVariable("LB_QUIET_VECTORS");
        Assert.False(string.IsNullOrEmpty(path), "LB_QUIET_VECTORS is not set: it names the vectors file (tests/quiet_vectors.txt in the build)");
        Assert.True(File.Exists(path), $"LB_QUIET_VECTORS={path}: no such file");
        string[] lines = File.ReadAllLines(path!);
        int allows = 0, dones = 0, counts = 0;
        for (int n = 1; n <= lines.Length; n++)
        {
            string text = lines[n - 1];
            if (text.Length == 0 || text[0] == '#') continue;
            string kind = text.Split(' ', 2)[0];
            string? mismatch = kind switch
            {
                "allow" => CheckAllow(Fields(text, 8, n), n),
                "done" => CheckDone(Fields(text, 6, n), n),
                "count" => CheckCount(Fields(text, 6, n), n),
                _ => throw new FormatException($"line {n}: unknown kind '{kind}': {text}"),
            };
            if (mismatch != null) Assert.Fail($"{path}:{n}: {text}\n  this port: {mismatch}");
            if (kind == "allow") allows++;
            else if (kind == "done") dones++;
            else counts++;
        }
        output.WriteLine($"{path}: {allows} allow, {dones} done and {counts} count vectors checked");
        Assert.True(allows > 0 && dones > 0 && counts > 0,
                    $"{path} has {allows} allow, {dones} done and {counts} count vectors: every kind must have some");
    }

    // allow <h> <w> <p> <lean> <now> <decision> <ticket>
    private static string? CheckAllow(string[] t, int n)
    {
        ulong h = Hex(t, 1, n), w = Hex(t, 2, n), p = Hex(t, 3, n), lean = Hex(t, 4, n), now = Hex(t, 5, n);
        int expected = Decision(t[6], n);
        ulong expectedTicket = Hex(t, 7, n);
        int decision = FastPath.DecideAllow(h, w, new GivenLoads(p, (uint)lean, now), out ulong ticket);
        return decision == expected && ticket == expectedTicket
            ? null
            : $"{Word(decision)} {ticket.ToString("x", CultureInfo.InvariantCulture)}";
    }

    // done <h> <w> <ticket> <outcome> <decision>
    private static string? CheckDone(string[] t, int n)
    {
        int decision = FastPath.DecideDone(Hex(t, 1, n), Hex(t, 2, n), Hex(t, 3, n), (int)Hex(t, 4, n));
        return decision == Decision(t[5], n) ? null : Word(decision);
    }

    // count <cell> <counter> <fold_at> <new_cell> <fold>
    private static string? CheckCount(string[] t, int n)
    {
        ulong cell = FastPath.CountCell(Hex(t, 1, n), (int)Hex(t, 2, n), Hex(t, 3, n), out bool fold);
        bool expectedFold = Hex(t, 5, n) != 0;
        return cell == Hex(t, 4, n) && fold == expectedFold
            ? null
            : $"{cell.ToString("x", CultureInfo.InvariantCulture)} {(fold ? 1 : 0)}";
    }
}
