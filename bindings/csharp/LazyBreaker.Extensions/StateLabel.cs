namespace LazyBreaker.Extensions;

/// <summary>A state as the library's Prometheus text and logs write it (docs/observability.md).</summary>
public static class StateLabel
{
    /// <summary>closed, open, half_open, forced_open or disabled.</summary>
    public static string Of(CircuitState state) => state switch
    {
        CircuitState.Closed => "closed",
        CircuitState.Open => "open",
        CircuitState.HalfOpen => "half_open",
        CircuitState.Isolated => "forced_open",
        CircuitState.Disabled => "disabled",
        _ => state.ToString(),
    };

    internal static readonly CircuitState[] All =
        { CircuitState.Closed, CircuitState.Open, CircuitState.HalfOpen, CircuitState.Isolated, CircuitState.Disabled };
}
