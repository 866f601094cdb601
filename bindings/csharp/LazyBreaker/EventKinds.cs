using System;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>What the registry records in its event queue.</summary>
[Flags]
public enum EventKinds
{
    /// <summary>Nothing.</summary>
    None = 0,
    /// <summary>State transitions (on by default).</summary>
    Transitions = (int)LbNative.CB_EVENTS_TRANSITIONS,
    /// <summary>Every rejected call (off by default).</summary>
    Rejections = (int)LbNative.CB_EVENTS_REJECTIONS,
}
