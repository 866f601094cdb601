using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>Which clock a registry reads.</summary>
public enum RegistryClock
{
    /// <summary>CLOCK_MONOTONIC, read only when a breaker needs the time.</summary>
    Monotonic = LbNative.CB_CLOCK_MONOTONIC,
    /// <summary>Starts at 0 and moves only by <see cref="Registry.Advance"/>: for deterministic tests.</summary>
    Manual = LbNative.CB_CLOCK_MANUAL,
}
