using System;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// The C# half of tests/cross_language, run as its own process by CTest
/// (cross_language.csharp_sees_the_c_trip, through check.sh): the registry
/// file a C program made and tripped "payments" in is opened here,
/// "payments" is open and rejects, and "tripped-by-csharp" is tripped for
/// the C program to see. The options equal the C program's configuration
/// field for field, or GetOrCreate would refuse them. csharp.binding leaves
/// this category out: without check.sh's environment it has no file.
/// </summary>
[Trait("Category", "cross_language")]
public class CrossLanguageCheck
{
    [Fact]
    public void A_breaker_a_C_program_tripped_in_a_shared_file_is_open_and_rejects_here()
    {
        string file = Environment.GetEnvironmentVariable("LB_CROSS_LANGUAGE_FILE")
                      ?? throw new InvalidOperationException("run by tests/cross_language/check.sh");
        string language = Environment.GetEnvironmentVariable("LB_CROSS_LANGUAGE")
                          ?? throw new InvalidOperationException("run by tests/cross_language/check.sh");
        var options = new CircuitBreakerOptions { FailureThreshold = 1, BreakDuration = TimeSpan.FromSeconds(300) };
        using var shared = Registry.Open(new RegistryOptions { Path = file, Clock = RegistryClock.Manual });

        var payments = shared.GetOrCreate("payments", options);
        Assert.Equal(CircuitState.Open, payments.State);
        Assert.False(payments.TryAcquire(out _));
        var rejected = Assert.Throws<BrokenCircuitException>(() => payments.Execute(() => "never"));
        Assert.Equal(TimeSpan.FromSeconds(300), rejected.RetryAfter);

        var mine = shared.GetOrCreate("tripped-by-" + language, options);
        Assert.True(mine.TryAcquire(out var permit));
        permit.Failure();
        Assert.Equal(CircuitState.Open, mine.State);
    }
}
