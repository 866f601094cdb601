using System;
using LazyBreaker.Native;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// The C# enums take their values from the SWIG constants; these tests
/// hold them to the library's own lists (cb_state_name, cb_reason_name,
/// cb_status_name), so a state, reason or status the library adds without
/// a C# counterpart fails here.
/// </summary>
public class AbiListTests
{
    [Fact]
    public void Every_state_the_library_names_is_a_CircuitState_and_back()
    {
        int named = 0;
        for (int s = 0; LbNative.cb_state_name(s) is string; s++, named++)
            Assert.True(Enum.IsDefined(typeof(CircuitState), s), $"state {s} ({LbNative.cb_state_name(s)}) has no CircuitState");
        Assert.Equal(Enum.GetValues<CircuitState>().Length, named);
        Assert.Equal("forced_open", LbNative.cb_state_name((int)CircuitState.Isolated));
    }

    [Fact]
    public void Every_reason_the_library_names_is_a_TransitionReason_and_back()
    {
        foreach (TransitionReason r in Enum.GetValues<TransitionReason>())
            Assert.NotNull(LbNative.cb_reason_name((int)r));
        int named = 0;
        for (int r = 1; LbNative.cb_reason_name(r) is string; r++, named++)
            Assert.True(Enum.IsDefined(typeof(TransitionReason), r), $"reason {r} ({LbNative.cb_reason_name(r)}) has no TransitionReason");
        Assert.Equal(Enum.GetValues<TransitionReason>().Length, named);
        Assert.Equal("probe_lease_expired", LbNative.cb_reason_name((int)TransitionReason.ProbeLeaseExpired));
    }

    [Fact]
    public void Every_error_status_the_library_names_has_an_exception_of_its_own_but_EINTERNAL_and_ERANGE()
    {
        int named = 0;
        for (int status = -1; LbNative.cb_status_name(status) is string name; status--, named++)
        {
            // CB_ERANGE never leaves the SWIG helpers (they ask again with room).
            Exception e = NativeErrors.ToException(status, "m", null);
            Assert.True(status == LbNative.CB_EINTERNAL || status == LbNative.CB_ERANGE || e.GetType() != typeof(LazyBreakerException),
                        $"{name} ({status}) falls through to LazyBreakerException");
        }
        Assert.True(named >= -LbNative.CB_EBUSY, "the library names fewer statuses than SWIG compiled");
    }
}
