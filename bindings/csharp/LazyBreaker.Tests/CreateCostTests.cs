using System;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// A create is one crossing with an interned configuration, and a breaker
/// is two small objects: the CircuitBreaker and its SafeHandle (the one
/// finaliser), with a weak GC handle (a struct) in its registry's table.
/// </summary>
public class CreateCostTests
{
    private const int Breakers = 2000;

    // CircuitBreaker (64 B) + BreakerHandle (48 B) + the registry table's
    // amortised growth (a 24 B entry, its buckets, the arrays it outgrew:
    // ~110 B at 2,000 breakers). A WeakReference and its map node (a second
    // finaliser; what a create allocated before), or a SWIG cb_config per
    // create (a third), go over it.
    private const long MostBytesPerCreate = 240;

    [Fact]
    public void A_create_allocates_only_the_breaker_and_its_SafeHandle()
    {
        using var registry = Registry.Open(new RegistryOptions { Capacity = 2 * Breakers + 8 });
        var options = new CircuitBreakerOptions { Policy = TripPolicy.CountWindow, WindowSize = 50 };
        var names = new string[Breakers];
        for (int i = 0; i < Breakers; i++) names[i] = "b" + i;
        var made = new CircuitBreaker[Breakers];
        registry.Create("warm", options).Dispose();
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Breakers; i++) made[i] = registry.Create(names[i], options);
        long perCreate = (GC.GetAllocatedBytesForCurrentThread() - before) / Breakers;
        foreach (CircuitBreaker b in made) b.Dispose();
        Assert.True(perCreate <= MostBytesPerCreate, $"{perCreate} B per create (at most {MostBytesPerCreate})");
    }

    [Fact]
    public void Equal_options_of_other_instances_reuse_the_interned_configuration()
    {
        using var registry = Registry.Open();
        registry.Create("first", new CircuitBreakerOptions { FailureThreshold = 7 }).Dispose();
        var again = new CircuitBreakerOptions { FailureThreshold = 7 };
        long before = GC.GetAllocatedBytesForCurrentThread();
        using CircuitBreaker b = registry.Create("second", again);
        long bytes = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(bytes <= MostBytesPerCreate, $"{bytes} B for a create with equal options");
        Assert.Equal(7, b.Options.FailureThreshold);
    }

    [Fact]
    public void Options_changed_after_a_create_make_a_new_configuration()
    {
        using var registry = Registry.Open();
        var options = new CircuitBreakerOptions { FailureThreshold = 3 };
        using CircuitBreaker three = registry.Create("three", options);
        options.FailureThreshold = 4;
        using CircuitBreaker four = registry.Create("four", options);
        Assert.Equal(3, three.Options.FailureThreshold);
        Assert.Equal(4, four.Options.FailureThreshold);
        options.FailureThreshold = 0;
        Assert.Throws<ArgumentOutOfRangeException>(() => registry.Create("zero", options));
        options.FailureThreshold = -1;
        Assert.Throws<ArgumentOutOfRangeException>(() => registry.Create("negative", options));
    }
}
