using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>Why an event happened (cb_reason_t).</summary>
public enum TransitionReason
{
    /// <summary>CLOSED to OPEN by the failure run.</summary>
    ConsecutiveFailures = (int)cb_reason_t.CB_REASON_CONSECUTIVE_FAILURES,
    /// <summary>CLOSED to OPEN by the window's failure ratio.</summary>
    FailureRate = (int)cb_reason_t.CB_REASON_FAILURE_RATE,
    /// <summary>CLOSED to OPEN by the window's slow-call ratio.</summary>
    SlowCallRate = (int)cb_reason_t.CB_REASON_SLOW_CALL_RATE,
    /// <summary>OPEN to HALF_OPEN: a call after the break duration.</summary>
    OpenElapsed = (int)cb_reason_t.CB_REASON_OPEN_ELAPSED,
    /// <summary>HALF_OPEN to OPEN: a probe failed.</summary>
    ProbeFailed = (int)cb_reason_t.CB_REASON_PROBE_FAILED,
    /// <summary>HALF_OPEN to OPEN: a probe stayed silent past its lease.</summary>
    ProbeLeaseExpired = (int)cb_reason_t.CB_REASON_PROBE_LEASE_EXPIRED,
    /// <summary>HALF_OPEN to CLOSED.</summary>
    ProbesSucceeded = (int)cb_reason_t.CB_REASON_PROBES_SUCCEEDED,
    /// <summary>Isolate, Disable or Reset.</summary>
    Manual = (int)cb_reason_t.CB_REASON_MANUAL,
    /// <summary><see cref="CircuitBreaker.Trip"/>.</summary>
    Tripped = (int)cb_reason_t.CB_REASON_TRIPPED,
    /// <summary>Not a transition: a rejected call (<see cref="EventKinds.Rejections"/>).</summary>
    Rejected = (int)cb_reason_t.CB_REASON_REJECTED,
}
