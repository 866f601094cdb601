using System;
using System.IO;
using System.Linq;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// Shared registries through the C# API: the options pass through to
/// cb_registry_open, and GetOrCreate's breakers are shared, so disposing
/// them destroys nothing. The file's own behaviour is pinned in
/// tests/capi/test_shared.cpp.
/// </summary>
public sealed class SharedRegistryTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("lazybreaker-csharp-").FullName;

    private static readonly CircuitBreakerOptions OneFailureTrips =
        new() { FailureThreshold = 1, BreakDuration = TimeSpan.FromMinutes(5) };

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private string File(string name) => System.IO.Path.Combine(_dir, name);

    private static RegistryOptions Shared(string path, bool create = false) =>
        new() { Path = path, Create = create, Clock = RegistryClock.Manual };

    [Fact]
    public void A_breaker_tripped_through_one_registry_object_is_open_through_a_second_on_the_same_file()
    {
        string path = File("breakers.lbr");
        using var first = Registry.Open(Shared(path, create: true));
        using var second = Registry.Open(Shared(path));
        var payments = first.GetOrCreate("payments", OneFailureTrips);
        Assert.True(payments.TryAcquire(out var permit));
        permit.Failure();
        Assert.Equal(CircuitState.Open, payments.State);

        var seen = second.GetOrCreate("payments", OneFailureTrips);
        Assert.Equal(CircuitState.Open, seen.State);
        Assert.False(seen.TryAcquire(out _));
        Assert.Throws<BrokenCircuitException>(() => seen.Execute(() => 1));
    }

    [Fact]
    public void A_create_refuses_a_file_others_may_write_unless_AnyOwner()
    {
        string path = File("writable.lbr");
        var readWriteAll = (UnixFileMode)Convert.ToInt32("666", 8);
        Registry.Open(new RegistryOptions { Path = path, Create = true, Mode = readWriteAll, Clock = RegistryClock.Manual }).Dispose();
        var refused = Assert.Throws<UnauthorizedAccessException>(() => Registry.Open(Shared(path, create: true)));
        Assert.Contains("mode 0666", refused.Message);
        var options = Shared(path, create: true);
        options.AnyOwner = true;
        using (var registry = Registry.Open(options))
            Assert.Equal(CircuitState.Closed, registry.GetOrCreate("p", OneFailureTrips).State);
        var withoutCreate = Shared(path);
        withoutCreate.AnyOwner = true;
        var needsCreate = Assert.Throws<ArgumentException>(() => Registry.Open(withoutCreate));
        Assert.Equal(nameof(RegistryOptions.AnyOwner), needsCreate.ParamName);
        Assert.StartsWith("AnyOwner needs Create as well", needsCreate.Message);
    }

    [Fact]
    public void A_file_locked_by_another_process_is_RegistryBusyException()
    {
        // The 5 s wait itself is pinned once, in tests/shared/test_trust.cpp.
        var busy = Assert.IsType<RegistryBusyException>(NativeErrors.ToException(-14, "f: a process holds it", null));
        Assert.Equal(-14, busy.Status);
        Assert.IsAssignableFrom<IOException>(busy);
        Assert.Equal("f: a process holds it", busy.Message);
    }

    [Fact]
    public void Disposing_a_shared_breaker_or_its_registry_leaves_the_breaker_in_the_file()
    {
        string path = File("kept.lbr");
        using (var registry = Registry.Open(Shared(path, create: true)))
        {
            var breaker = registry.GetOrCreate("kept", OneFailureTrips);
            breaker.Trip(TimeSpan.FromMinutes(1));
            breaker.Dispose();
            Assert.Throws<ObjectDisposedException>(() => breaker.TryAcquire(out _));
            Assert.True(registry.TryGet("kept", out _));
        }
        using var again = Registry.Open(Shared(path));
        Assert.True(again.TryGet("kept", out var found));
        Assert.Equal(CircuitState.Open, found.State);
    }

    [Fact]
    public void A_missing_file_without_Create_is_FileNotFoundException_naming_it()
    {
        string path = File("missing.lbr");
        var e = Assert.Throws<FileNotFoundException>(() => Registry.Open(Shared(path)));
        Assert.Equal(path, e.FileName);
        Assert.Equal($"the registry file '{path}' does not exist (set RegistryOptions.Create to create it)", e.Message);
        Assert.False(System.IO.File.Exists(path));
    }

    [Fact]
    public void An_existing_file_opened_Exclusive_is_IOException()
    {
        string path = File("taken.lbr");
        Registry.Open(Shared(path, create: true)).Dispose();
        var options = Shared(path, create: true);
        options.Exclusive = true;
        var e = Assert.Throws<IOException>(() => Registry.Open(options));
        Assert.IsType<IOException>(e); // not a FileNotFoundException
        Assert.Equal($"the registry file '{path}' exists, and RegistryOptions.Exclusive asks for a new one", e.Message);
    }

    [Fact]
    public void GetOrCreate_with_another_configuration_is_BreakerExistsException()
    {
        using var registry = Registry.Open(Shared(File("cfg.lbr"), create: true));
        registry.GetOrCreate("inventory", OneFailureTrips);
        var e = Assert.Throws<BreakerExistsException>(
            () => registry.GetOrCreate("inventory", new CircuitBreakerOptions { FailureThreshold = 7 }));
        Assert.Equal(nameof(CircuitBreakerOptions.FailureThreshold), e.Option);
        Assert.Equal("a breaker named 'inventory' exists with another FailureThreshold (CircuitBreaker.Options reads its configuration)", e.Message);
        Assert.Equal(CircuitState.Closed, registry.GetOrCreate("inventory", OneFailureTrips).State);
    }

    [Fact]
    public void A_file_that_is_no_registry_is_IOException()
    {
        string path = File("notes.txt");
        System.IO.File.WriteAllText(path, string.Concat(Enumerable.Repeat("not a registry\n", 1000)));
        var e = Assert.Throws<IOException>(() => Registry.Open(Shared(path)));
        Assert.Contains("not a lazybreaker registry file", e.Message);
    }

    [Fact]
    [System.Runtime.Versioning.SupportedOSPlatform("linux")] // the package is linux-x64 only
    public void Mode_gives_the_created_file_its_permission_bits()
    {
        string group = File("group.lbr");
        var options = Shared(group, create: true);
        options.Mode = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead;
        Registry.Open(options).Dispose();
        Assert.Equal(options.Mode, System.IO.File.GetUnixFileMode(group));
        string byDefault = File("private.lbr");
        Registry.Open(Shared(byDefault, create: true)).Dispose();
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, System.IO.File.GetUnixFileMode(byDefault));
    }
}
