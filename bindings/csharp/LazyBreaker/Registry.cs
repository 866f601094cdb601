using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using System.Runtime.InteropServices;
using System.Threading;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>
/// A set of breakers sharing a clock, a capacity and an event queue: the
/// library's <c>cb_registry</c>. Disposing closes it: every breaker in it
/// is destroyed, and using one afterwards throws
/// <see cref="ObjectDisposedException"/>. <see cref="Default"/> is never closed.
/// </summary>
/// <remarks>
/// Every member may be called from any thread. Registry-level calls (Create,
/// PollEvents, Prometheus, ...) hold a reference on the registry's handle,
/// so Dispose closes it after them. A breaker's request path holds none
/// (that would put a shared write on every call) and needs none: Dispose
/// may run while other threads call the registry's breakers. A call in
/// flight returns what it would have or throws
/// <see cref="ObjectDisposedException"/>; every later call throws it.
/// </remarks>
public sealed class Registry : IDisposable
{
    private static readonly Lazy<Registry> s_default = new(OpenDefault, LazyThreadSafetyMode.ExecutionAndPublication);

    private readonly RegistryHandle _handle;
    private readonly bool _isDefault;
    // As opened: a shared registry's file has the clock the options ask
    // for, or the open is refused.
    private readonly RegistryClock _clock;
    // One C# object per breaker created here, so TryGet and Breakers hand
    // out the instance whose Dispose owns the native breaker. Weak GC
    // handles (structs, no finaliser of their own): a breaker dropped
    // without Dispose is still finalised, by its SafeHandle alone, which
    // frees its entry here. Under the lock: a handle is freed by the one
    // that removes it.
    private readonly Dictionary<ulong, GCHandle> _breakers = new();
    private int _disposed;

    private Registry(RegistryHandle handle, bool isDefault, RegistryClock clock)
    {
        _handle = handle;
        _isDefault = isDefault;
        _clock = clock;
    }

    /// <summary>The process-wide registry: monotonic clock, capacity 1,048,576; never closed (Dispose does nothing).</summary>
    public static Registry Default => s_default.Value;

    /// <summary>
    /// Opens a new, private registry, or with <see cref="RegistryOptions.Path"/>
    /// a shared one. Disposing a shared registry unmaps it; its breakers stay
    /// in the file.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range (ParamName: the <see cref="RegistryOptions"/> property).</exception>
    /// <exception cref="ArgumentException">Options that do not go together (<see cref="RegistryOptions.Exclusive"/> or <see cref="RegistryOptions.AnyOwner"/> without <see cref="RegistryOptions.Create"/>), or that disagree with an existing file's capacity or clock.</exception>
    /// <exception cref="InsufficientMemoryException">Its memory could not be reserved.</exception>
    /// <exception cref="RegistryFullException">The process has opened as many registries, or breakers between them, as it may.</exception>
    /// <exception cref="FileNotFoundException">The file is missing and <see cref="RegistryOptions.Create"/> is not set.</exception>
    /// <exception cref="UnauthorizedAccessException">The file may not be opened or created, or a create found a file it may not trust (CB_EPERM; <see cref="RegistryOptions.AnyOwner"/>).</exception>
    /// <exception cref="RegistryBusyException">Another process has held the file's lock for 5 s (CB_EBUSY).</exception>
    /// <exception cref="IOException">The file exists and was to be created <see cref="RegistryOptions.Exclusive"/>ly; it is no registry of this layout (CB_EVERSION) or a corrupt one (CB_ECORRUPT); another I/O error (CB_EIO). The message names the file.</exception>
    public static Registry Open(RegistryOptions? options = null)
    {
        using var o = new cb_registry_options();
        if (options?.Capacity is int capacity) o.capacity = ToUInt(capacity, nameof(RegistryOptions.Capacity));
        if (options?.Clock is RegistryClock clock) o.clock = (int)clock;
        if (options?.EventCapacity is int events) o.event_capacity = ToUInt(events, nameof(RegistryOptions.EventCapacity));
        string? path = options?.Path;
        if (path is not null)
        {
            if (path.Length == 0 || path.Contains('\0'))
                throw new ArgumentException("a registry file's path must be non-empty and without NUL", nameof(options));
            o.flags = (options!.Create ? LbNative.CB_REGISTRY_CREATE : 0u) | (options.Exclusive ? LbNative.CB_REGISTRY_EXCLUSIVE : 0u)
                      | (options.AnyOwner ? LbNative.CB_REGISTRY_ANY_OWNER : 0u);
            if (options.Mode is UnixFileMode mode) o.mode = (uint)mode;
        }
        try
        {
            return new Registry(path is null ? LbNative.lb_registry_open(o) : LbNative.lb_registry_open_at(o, path),
                                isDefault: false, options?.Clock ?? RegistryClock.Monotonic);
        }
        catch (NativeArgumentException e)
        {
            throw RegistryOptionErrors.Refused(e, options);
        }
        // CB_ENOENT and CB_EEXIST are about the file here, not a breaker,
        // and the library's words for them name its flags.
        catch (KeyNotFoundException e)
        {
            throw new FileNotFoundException(
                $"the registry file '{path}' does not exist (set RegistryOptions.Create to create it)", path, e);
        }
        catch (BreakerExistsException e)
        {
            throw new IOException($"the registry file '{path}' exists, and RegistryOptions.Exclusive asks for a new one", e);
        }
    }

    /// <summary>The shared registry at <paramref name="path"/>, created (mode 0600) if it is missing.</summary>
    public static Registry OpenShared(string path) => Open(new RegistryOptions { Path = path, Create = true });

    /// <summary>Opens a registry whose clock starts at 0 and moves only by <see cref="Advance"/>.</summary>
    public static Registry WithManualClock() => Open(new RegistryOptions { Clock = RegistryClock.Manual });

    /// <summary>Moves a manual clock forward.</summary>
    /// <exception cref="InvalidOperationException">The registry's clock is not manual.</exception>
    /// <exception cref="ArgumentOutOfRangeException">Negative, or the clock would overflow.</exception>
    public void Advance(TimeSpan by) => AdvanceBy(CircuitBreakerOptions.ToNs(by, nameof(by)), nameof(by));

    /// <summary>As <see cref="Advance"/>, by exactly <paramref name="nanoseconds"/>.</summary>
    public void AdvanceNanoseconds(ulong nanoseconds) => AdvanceBy(nanoseconds, nameof(nanoseconds));

    private void AdvanceBy(ulong ns, string paramName)
    {
        ThrowIfDisposed();
        try
        {
            LbNative.cb_clock_advance(_handle, ns);
        }
        // cb_clock_advance refuses (CB_EINVAL, no field) a clock that is
        // not manual, and on a manual one only an advance past 2^64 - 1 ns.
        catch (NativeArgumentException e) when (_clock != RegistryClock.Manual)
        {
            throw new InvalidOperationException(
                $"the registry's clock is RegistryClock.{_clock}: only a RegistryClock.Manual clock is advanced", e);
        }
        catch (NativeArgumentException)
        {
            throw new ArgumentOutOfRangeException(paramName,
                $"advancing the clock (now {NowNanoseconds} ns) by {ns} ns would pass {ulong.MaxValue} ns");
        }
    }

    /// <summary>The registry's clock, in nanoseconds.</summary>
    public ulong NowNanoseconds
    {
        get
        {
            ThrowIfDisposed();
            return LbNative.cb_clock_now(_handle);
        }
    }

    /// <summary>
    /// Creates a breaker, CLOSED. <paramref name="name"/> is 1..255 bytes of
    /// UTF-8 and unique in the registry.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> is null.</exception>
    /// <exception cref="ArgumentException">The name is empty, too long, or holds a NUL or a lone surrogate (ParamName "name"); an option is set that the policy ignores (ParamName: that option).</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range: ParamName and the message name the <see cref="CircuitBreakerOptions"/> property.</exception>
    /// <exception cref="BreakerExistsException">The name is taken.</exception>
    /// <exception cref="RegistryFullException">The registry holds its capacity.</exception>
    public CircuitBreaker Create(string name, CircuitBreakerOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(name);
        ThrowIfDisposed();
        options ??= s_defaultOptions;
        ulong handle = CreateNative(name, options, getOrCreate: false);
        CircuitBreaker breaker;
        try
        {
            breaker = new CircuitBreaker(this, handle, name, options.ShouldHandle, ownsHandle: true);
        }
        catch (ObjectDisposedException)
        {
            // Disposed by another thread since the check: undo the create.
            NativeMethods.cb_destroy(handle);
            throw;
        }
        lock (_breakers) _breakers[handle] = GCHandle.Alloc(breaker, GCHandleType.Weak);
        return breaker;
    }

    // Never handed out, never changed: what a create without options uses.
    private static readonly CircuitBreakerOptions s_defaultOptions = new();

    // cb_create or cb_get_or_create in one crossing: the interned
    // configuration, the name encoded on the stack, the registry's pointer
    // under a reference (ObjectDisposedException once it is closed).
    private unsafe ulong CreateNative(string name, CircuitBreakerOptions options, bool getOrCreate)
    {
        NativeConfig config = options.ToConfig();
        int max = Encoding.UTF8.GetMaxByteCount(name.Length) + 1;
        byte[]? rented = max > 1024 ? new byte[max] : null;
        Span<byte> utf8 = rented != null ? rented : stackalloc byte[max];
        if (name.Contains('\0')) throw new ArgumentException("a breaker's name must not contain NUL", nameof(name));
        int length;
        try
        {
            length = s_strictUtf8.GetBytes(name, utf8);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException("a breaker's name must be well-formed UTF-16 (a lone surrogate has no UTF-8)",
                                        nameof(name), e);
        }
        utf8[length] = 0;
        ulong handle;
        int status;
        bool added = false;
        try
        {
            _handle.DangerousAddRef(ref added);
            fixed (byte* p = utf8)
            {
                status = getOrCreate
                    ? NativeMethods.cb_get_or_create(_handle.DangerousGetHandle(), p, &config, &handle)
                    : NativeMethods.cb_create(_handle.DangerousGetHandle(), p, &config, &handle);
            }
        }
        finally
        {
            if (added) _handle.DangerousRelease();
        }
        if (status == Status.Ok) return handle;
        Exception error = NativeErrors.FromLastError(status);
        throw error is NativeArgumentException invalid ? ConfigErrors.Refused(invalid, options, name) : error;
    }

    /// <summary>
    /// The breaker named <paramref name="name"/> if its configuration equals
    /// <paramref name="options"/>', else a new one with them: what every
    /// worker of a pool, and every process sharing a registry file, calls at
    /// start. Of concurrent calls with one name, in any process, one creates
    /// and the others get its breaker.
    /// </summary>
    /// <remarks>
    /// The breaker is shared: the returned object's Dispose, and its
    /// finaliser, only let go of it (other processes use it; its request path
    /// throws <see cref="ObjectDisposedException"/> afterwards); it is never
    /// destroyed through this object, nor by disposing the registry.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> is null.</exception>
    /// <exception cref="ArgumentException">The name is empty, too long, or holds a NUL or a lone surrogate (ParamName "name"); an option is set that the policy ignores (ParamName: that option).</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range: ParamName and the message name the <see cref="CircuitBreakerOptions"/> property.</exception>
    /// <exception cref="BreakerExistsException">A breaker has the name with another configuration: <see cref="BreakerExistsException.Option"/> names the first option that differs.</exception>
    /// <exception cref="RegistryFullException">It must be created and the registry holds its capacity.</exception>
    public CircuitBreaker GetOrCreate(string name, CircuitBreakerOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(name);
        ThrowIfDisposed();
        options ??= s_defaultOptions;
        ulong handle;
        try
        {
            handle = CreateNative(name, options, getOrCreate: true);
        }
        catch (BreakerExistsException e)
        {
            string? option = ConfigErrors.OptionFor(e.Field);
            throw new BreakerExistsException(e.Status,
                option is null
                    ? $"a breaker named '{name}' exists with another configuration"
                    : $"a breaker named '{name}' exists with another {option} (CircuitBreaker.Options reads its configuration)",
                option);
        }
        return new CircuitBreaker(this, handle, name, options.ShouldHandle, ownsHandle: false);
    }

    /// <summary>Finds a breaker by name: the instance <see cref="Create"/> returned, while it lives.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> is null.</exception>
    public bool TryGet(string name, out CircuitBreaker breaker)
    {
        CheckName(name);
        ThrowIfDisposed();
        ulong handle = LbNative.cb_lookup(_handle, name);
        if (handle == 0)
        {
            breaker = null!;
            return false;
        }
        breaker = Wrap(handle, name);
        return true;
    }

    /// <summary>The registry's live breakers, at one moment.</summary>
    public IReadOnlyList<CircuitBreaker> Breakers
    {
        get
        {
            ThrowIfDisposed();
            using var list = new lb_handle_list(_handle);
            var result = new List<CircuitBreaker>((int)list.count);
            for (ulong i = 0; i < list.count; i++)
            {
                ulong handle = list.get(i);
                string name;
                try
                {
                    name = LbNative.lb_name(handle);
                }
                catch (ObjectDisposedException)
                {
                    continue; // destroyed since the list was taken
                }
                result.Add(Wrap(handle, name));
            }
            return result;
        }
    }

    /// <summary>Chooses what the event queue records.</summary>
    public void SelectEvents(EventKinds kinds)
    {
        ThrowIfDisposed();
        try
        {
            LbNative.cb_events_select(_handle, (uint)kinds);
        }
        catch (NativeArgumentException)
        {
            throw new ArgumentOutOfRangeException(nameof(kinds),
                $"kinds must be a combination of EventKinds.{EventKinds.Transitions} and EventKinds.{EventKinds.Rejections}, got {(int)kinds}");
        }
    }

    /// <summary>Takes up to <paramref name="max"/> events, oldest first (the order in which each breaker's transitions happened).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="max"/> is not positive.</exception>
    public IReadOnlyList<StateTransition> PollEvents(int max = 1024)
    {
        if (max <= 0) throw new ArgumentOutOfRangeException(nameof(max), max, "max must be positive");
        ThrowIfDisposed();
        using var batch = new lb_event_batch((ulong)max);
        int count = batch.poll(_handle);
        var events = new StateTransition[count];
        for (int i = 0; i < count; i++)
        {
            cb_event e = batch.get((ulong)i);
            events[i] = new StateTransition(e.sequence, e.name, (CircuitState)e.from, (CircuitState)e.to,
                                            (TransitionReason)e.reason, e.at_ns);
        }
        return events;
    }

    /// <summary>How many events the queue has dropped since the registry opened (it drops the oldest when full).</summary>
    public ulong EventsDropped
    {
        get
        {
            ThrowIfDisposed();
            return LbNative.cb_events_dropped(_handle);
        }
    }

    /// <summary>Every breaker's metrics in the Prometheus text format 0.0.4 (docs/observability.md). Allocates: for a scrape endpoint.</summary>
    public string Prometheus()
    {
        ThrowIfDisposed();
        return LbNative.lb_prometheus(_handle);
    }

    /// <summary>
    /// Closes the registry: its breakers are destroyed and throw
    /// <see cref="ObjectDisposedException"/> from then on. Idempotent; does
    /// nothing for <see cref="Default"/>.
    /// </summary>
    /// <remarks>
    /// Each breaker's SafeHandle holds a reference on the registry's until
    /// it has destroyed its breaker, so the native registry closes once the
    /// last of them is released: here for the breakers still referenced,
    /// or by the GC's finaliser for a breaker dropped without Dispose.
    /// </remarks>
    public void Dispose()
    {
        if (_isDefault || Interlocked.Exchange(ref _disposed, 1) != 0) return;
        var live = new List<CircuitBreaker>();
        lock (_breakers)
        {
            foreach (GCHandle weak in _breakers.Values)
            {
                if (weak.Target is CircuitBreaker breaker) live.Add(breaker);
                weak.Free();
            }
            _breakers.Clear();
        }
        foreach (CircuitBreaker breaker in live) breaker.Dispose();
        _handle.Dispose();
    }

    internal RegistryHandle NativeHandle => _handle;

    /// <summary>Drops the entry of a breaker destroyed by its Dispose or its SafeHandle's finaliser.</summary>
    internal void Forget(ulong handle)
    {
        lock (_breakers)
        {
            if (_breakers.Remove(handle, out GCHandle weak)) weak.Free();
        }
    }

    private CircuitBreaker Wrap(ulong handle, string name)
    {
        lock (_breakers)
        {
            if (_breakers.TryGetValue(handle, out GCHandle weak) && weak.Target is CircuitBreaker known) return known;
        }
        // Created outside this object (native code sharing the default
        // registry), or dropped without Dispose and collected (its
        // finaliser destroys the native breaker): a wrapper that does not
        // own the handle.
        return new CircuitBreaker(this, handle, name, shouldHandle: null, ownsHandle: false);
    }

    private static Registry OpenDefault()
    {
        // The marshaller's handle would close the registry when finalised:
        // keep its pointer in one that does not own it.
        RegistryHandle returned = LbNative.lb_default_registry();
        IntPtr raw = returned.DangerousGetHandle();
        returned.SetHandleAsInvalid();
        return new Registry(new RegistryHandle(raw, ownsHandle: false), isDefault: true, RegistryClock.Monotonic);
    }

    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private static void CheckName(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (name.Contains('\0')) throw new ArgumentException("a breaker's name must not contain NUL", nameof(name));
        try
        {
            s_strictUtf8.GetByteCount(name);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException("a breaker's name must be well-formed UTF-16 (a lone surrogate has no UTF-8)",
                                        nameof(name), e);
        }
    }

    private static uint ToUInt(int value, string option) =>
        value >= 0 ? (uint)value : throw ConfigErrors.Negative(option, value);

    private void ThrowIfDisposed()
    {
        if (Volatile.Read(ref _disposed) != 0) throw new ObjectDisposedException(nameof(Registry));
    }
}
