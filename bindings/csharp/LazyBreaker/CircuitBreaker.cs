using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using LazyBreaker.Native;

namespace LazyBreaker;

/// <summary>The state of a breaker (cb_state_t), with Polly v8's names where they exist.</summary>
public enum CircuitState
{
    /// <summary>Admitting; the trip policy is counting.</summary>
    Closed = (int)cb_state_t.CB_STATE_CLOSED,
    /// <summary>Rejecting until the break duration has passed.</summary>
    Open = (int)cb_state_t.CB_STATE_OPEN,
    /// <summary>Admitting a bounded number of probes.</summary>
    HalfOpen = (int)cb_state_t.CB_STATE_HALF_OPEN,
    /// <summary>Rejecting everything until <see cref="CircuitBreaker.Reset"/> (Polly: Isolated; C: FORCED_OPEN).</summary>
    Isolated = (int)cb_state_t.CB_STATE_FORCED_OPEN,
    /// <summary>Admitting everything, tripping never, until <see cref="CircuitBreaker.Reset"/>.</summary>
    Disabled = (int)cb_state_t.CB_STATE_DISABLED,
}

/// <summary>A breaker's counters (cb_stats), counted in every state.</summary>
/// <param name="Admitted">Calls admitted.</param>
/// <param name="Rejected">Calls rejected.</param>
/// <param name="Successes">Successes reported.</param>
/// <param name="Failures">Failures reported.</param>
/// <param name="Ignored">Ignored outcomes reported.</param>
/// <param name="Trips">Transitions into OPEN (not into Isolated).</param>
/// <param name="ConsecutiveFailures">The current failure run (CLOSED).</param>
/// <param name="Slow">Outcomes slower than the slow-call duration.</param>
/// <param name="FailureRate">Failures over calls in the window now (ratio policies).</param>
/// <param name="SlowRate">Slow calls over calls in the window now.</param>
/// <param name="StateNanoseconds">Time in the current state, on the registry's clock, in ns.</param>
public readonly record struct BreakerStatistics(
    ulong Admitted, ulong Rejected, ulong Successes, ulong Failures, ulong Ignored, ulong Trips,
    uint ConsecutiveFailures, ulong Slow, double FailureRate, double SlowRate, ulong StateNanoseconds)
{
    /// <summary>Time in the current state.</summary>
    public TimeSpan TimeInState => CircuitBreakerOptions.ToTimeSpan(StateNanoseconds);
}

/// <summary>
/// One breaker of a <see cref="Registry"/>: a handle to the library's state
/// machine. Every member may be called from any thread; the request path
/// (<see cref="TryAcquire"/> and the <see cref="Permit"/>'s verdict) takes no
/// lock and allocates nothing once the thread's pool of permit slots is warm.
/// </summary>
/// <remarks>
/// Disposing destroys the breaker in its registry (its name becomes free);
/// a breaker dropped without Dispose is destroyed when the GC finalises its
/// SafeHandle. Any call after Dispose throws <see cref="ObjectDisposedException"/>.
/// </remarks>
public sealed class CircuitBreaker : IDisposable
{
    private readonly ulong _handle;
    private readonly BreakerHandle _safeHandle;
    private readonly Registry _registry;
    private readonly Func<CallOutcome, Verdict>? _shouldHandle;
    private int _disposed;

    internal CircuitBreaker(Registry registry, ulong handle, string name, Func<CallOutcome, Verdict>? shouldHandle,
                            bool ownsHandle)
    {
        _registry = registry;
        _handle = handle;
        _safeHandle = new BreakerHandle(handle, registry, ownsHandle);
        _shouldHandle = shouldHandle;
        Name = name;
    }

    /// <summary>The breaker's name ("" when anonymous).</summary>
    public string Name { get; }

    /// <summary>The registry the breaker lives in.</summary>
    public Registry Registry => _registry;

    internal ulong Handle => _handle;

    /// <summary>
    /// Asks to make a call: true admits it (report through
    /// <paramref name="permit"/>), false rejects it (fail fast). In OPEN, the
    /// first call after the break duration becomes the probe. Never throws
    /// for a rejection and allocates nothing.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The breaker (or its registry) has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public unsafe bool TryAcquire(out Permit permit)
    {
        // Also refuses a wrapper that never owned its handle (Registry.TryGet
        // of a breaker created outside C#), whose handle outlives Dispose.
        if (_disposed != 0) ThrowDisposed();
        ulong ticket;
        int quiet = FastPath.TryAllow(_handle, out ticket);
        if (quiet == FastPath.Admit)
        {
            permit = new Permit(_handle, ticket, PermitSlots.Rent());
            return true;
        }
        if (quiet == FastPath.Reject)
        {
            permit = default;
            return false;
        }
        int status = NativeMethods.cb_allow(_handle, &ticket);
        GC.KeepAlive(this); // the SafeHandle must not be finalised during the call
        if (status == Status.Ok)
        {
            permit = new Permit(_handle, ticket, PermitSlots.Rent());
            return true;
        }
        permit = default;
        if (status == Status.Rejected) return false;
        throw Failed(status);
    }

    /// <summary>Runs <paramref name="action"/> if the breaker admits it and reports how it ended.</summary>
    /// <exception cref="BrokenCircuitException">The breaker rejected the call.</exception>
    public void Execute(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        ulong ticket = Admit();
        try
        {
            action();
        }
        catch (Exception e)
        {
            Report(ticket, Classify(e));
            throw;
        }
        Report(ticket, _shouldHandle == null ? Verdict.Success : Ask(new CallOutcome(null, null)));
    }

    /// <summary>Runs <paramref name="func"/> if the breaker admits it, reports how it ended, and returns its result.</summary>
    /// <exception cref="BrokenCircuitException">The breaker rejected the call.</exception>
    public T Execute<T>(Func<T> func)
    {
        ArgumentNullException.ThrowIfNull(func);
        ulong ticket = Admit();
        T result;
        try
        {
            result = func();
        }
        catch (Exception e)
        {
            Report(ticket, Classify(e));
            throw;
        }
        Report(ticket, _shouldHandle == null ? Verdict.Success : Ask(new CallOutcome(null, result)));
        return result;
    }

    /// <summary>
    /// Runs <paramref name="func"/> if the breaker admits it and reports how
    /// it ended. An <see cref="OperationCanceledException"/> while
    /// <paramref name="cancellationToken"/> is cancelled reports
    /// <see cref="Verdict.Ignored"/> (the caller gave up; the dependency did
    /// not fail). A token cancelled before the call throws without asking the
    /// breaker.
    /// </summary>
    /// <exception cref="BrokenCircuitException">The breaker rejected the call.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled.</exception>
    public async ValueTask<T> ExecuteAsync<T>(Func<CancellationToken, ValueTask<T>> func,
                                              CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(func);
        cancellationToken.ThrowIfCancellationRequested();
        ulong ticket = Admit();
        T result;
        try
        {
            result = await func(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            Report(ticket, ClassifyAsync(e, cancellationToken));
            throw;
        }
        Report(ticket, _shouldHandle == null ? Verdict.Success : Ask(new CallOutcome(null, result)));
        return result;
    }

    /// <summary>As <see cref="ExecuteAsync{T}"/>, for a call without a result.</summary>
    /// <exception cref="BrokenCircuitException">The breaker rejected the call.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled.</exception>
    public async ValueTask ExecuteAsync(Func<CancellationToken, ValueTask> func,
                                        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(func);
        cancellationToken.ThrowIfCancellationRequested();
        ulong ticket = Admit();
        try
        {
            await func(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            Report(ticket, ClassifyAsync(e, cancellationToken));
            throw;
        }
        Report(ticket, _shouldHandle == null ? Verdict.Success : Ask(new CallOutcome(null, null)));
    }

    /// <summary>The state now. Reading never moves the state machine (an OPEN breaker past its break duration reads Open until a call arrives).</summary>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed.</exception>
    public CircuitState State
    {
        get
        {
            int state = NativeMethods.cb_state(_handle);
            GC.KeepAlive(this);
            return state >= 0 ? (CircuitState)state : throw Failed(state);
        }
    }

    /// <summary>
    /// How long until a call could be admitted: <see cref="TimeSpan.Zero"/>
    /// when one would be now, the rest of the break duration in OPEN,
    /// <c>null</c> when isolated (no time is known). Never moves the state machine.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed.</exception>
    public TimeSpan? RetryAfter
    {
        get
        {
            ulong ns = RetryAfterNanoseconds;
            return ns == ulong.MaxValue ? null : CircuitBreakerOptions.ToTimeSpan(ns);
        }
    }

    /// <summary>As <see cref="RetryAfter"/>, exact to the nanosecond; <see cref="ulong.MaxValue"/> when isolated.</summary>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed.</exception>
    public unsafe ulong RetryAfterNanoseconds
    {
        get
        {
            ulong ns;
            int status = NativeMethods.cb_retry_after(_handle, &ns);
            GC.KeepAlive(this);
            return status == Status.Ok ? ns : throw Failed(status);
        }
    }

    /// <summary>
    /// The breaker's configuration as the library holds it (cb_config_get),
    /// as options: every option set, <see cref="CircuitBreakerOptions.Policy"/>
    /// explicitly, <see cref="CircuitBreakerOptions.HalfOpenTimeout"/> as the
    /// break duration when it was left to it, and
    /// <see cref="CircuitBreakerOptions.ShouldHandle"/> this object's. A new
    /// instance each time: <see cref="Registry.GetOrCreate"/> with it finds
    /// this breaker, in any process sharing its registry.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed.</exception>
    public CircuitBreakerOptions Options
    {
        get
        {
            using var c = new cb_config();
            Call(() => LbNative.cb_config_get(_handle, c));
            return CircuitBreakerOptions.FromNative(c, _shouldHandle);
        }
    }

    /// <summary>The breaker's counters now.</summary>
    /// <exception cref="ObjectDisposedException">The breaker has been disposed.</exception>
    public BreakerStatistics Statistics
    {
        get
        {
            using var s = new cb_stats();
            Call(() => LbNative.cb_stats_get(_handle, s));
            return new BreakerStatistics(s.admitted, s.rejected, s.successes, s.failures, s.ignored, s.trips,
                                         s.consecutive_failures, s.slow, s.failure_rate, s.slow_rate, s.state_ns);
        }
    }

    /// <summary>Opens the breaker until <see cref="Reset"/>: every call is rejected (Polly: IsolateAsync).</summary>
    public void Isolate() => Call(() => LbNative.cb_force_open(_handle));

    /// <summary>Admits every call and never trips, until <see cref="Reset"/>; outcomes feed the statistics only.</summary>
    public void Disable() => Call(() => LbNative.cb_disable(_handle));

    /// <summary>CLOSED with a fresh failure run, from any state (Polly: CloseAsync).</summary>
    public void Reset() => Call(() => LbNative.cb_reset(_handle));

    /// <summary>The shortest <see cref="Trip"/> the library takes (1 µs).</summary>
    public static TimeSpan MinTripDuration { get; } = CircuitBreakerOptions.ToTimeSpan(LbNative.CB_MIN_OPEN_DURATION_NS);

    /// <summary>The longest <see cref="Trip"/> the library takes (366 days): a longer wait is capped to it by whoever reads one from outside (an HTTP Retry-After).</summary>
    public static TimeSpan MaxTripDuration { get; } = CircuitBreakerOptions.ToTimeSpan(LbNative.CB_MAX_DURATION_NS);

    /// <summary>
    /// Opens now for exactly <paramref name="openFor"/> (e.g. a "429, Retry-After: 20"
    /// answer), then probes as usual. Counts as a trip.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Outside 1 µs .. 366 days.</exception>
    public void Trip(TimeSpan openFor) =>
        TripNanoseconds(CircuitBreakerOptions.ToNs(openFor, nameof(openFor)), nameof(openFor));

    internal void TripNanoseconds(ulong ns, string paramName = "openFor")
    {
        try
        {
            Call(() => LbNative.cb_trip(_handle, ns));
        }
        catch (NativeArgumentException)
        {
            // Its one argument, open_for_ns, is out of range.
            string range = $"{ConfigErrors.Friendly(LbNative.CB_MIN_OPEN_DURATION_NS)}..{ConfigErrors.Friendly(LbNative.CB_MAX_DURATION_NS)}";
            throw new ArgumentOutOfRangeException(paramName,
                $"{paramName} must be {range}, got {ConfigErrors.Show(CircuitBreakerOptions.ToTimeSpan(ns))}");
        }
    }

    /// <summary>Destroys the breaker in its registry; its name becomes free. Idempotent.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        _registry.Forget(_handle);
        _safeHandle.Dispose();
    }

    /// <inheritdoc />
    public override string ToString() => $"CircuitBreaker '{Name}'";

    private ulong Admit()
    {
        if (TryAcquireTicket(out ulong ticket)) return ticket;
        throw CreateRejection();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private unsafe bool TryAcquireTicket(out ulong ticket)
    {
        if (_disposed != 0) ThrowDisposed();
        int quiet = FastPath.TryAllow(_handle, out ticket);
        if (quiet != FastPath.Library) return quiet == FastPath.Admit;
        ulong t;
        int status = NativeMethods.cb_allow(_handle, &t);
        GC.KeepAlive(this);
        ticket = t;
        if (status == Status.Ok) return true;
        if (status == Status.Rejected) return false;
        throw Failed(status);
    }

    /// <summary>
    /// The exception a rejected call throws, for code that rejects on
    /// <see cref="TryAcquire"/>'s false (an HTTP handler): an
    /// <see cref="IsolatedCircuitException"/> while isolated, else a
    /// <see cref="BrokenCircuitException"/> with <see cref="RetryAfter"/>.
    /// </summary>
    public BrokenCircuitException CreateRejection()
    {
        ulong ns;
        try
        {
            ns = RetryAfterNanoseconds;
        }
        catch (ObjectDisposedException)
        {
            ns = ulong.MaxValue;
        }
        return ns == ulong.MaxValue ? new IsolatedCircuitException(Name)
                                    : new BrokenCircuitException(Name, CircuitBreakerOptions.ToTimeSpan(ns));
    }

    private void Report(ulong ticket, Verdict verdict)
    {
        if (FastPath.TryDone(_handle, ticket, verdict)) return;
        int status = NativeMethods.cb_done(_handle, ticket, (int)verdict);
        GC.KeepAlive(this);
        if (status != Status.Ok) throw Failed(status);
    }

    private Verdict Classify(Exception e) => _shouldHandle == null ? Verdict.Failure : Ask(new CallOutcome(e, null));

    private Verdict ClassifyAsync(Exception e, CancellationToken token) =>
        e is OperationCanceledException && token.IsCancellationRequested ? Verdict.Ignored : Classify(e);

    private Verdict Ask(CallOutcome outcome)
    {
        Verdict verdict;
        try
        {
            verdict = _shouldHandle!(outcome);
        }
        catch
        {
            // The predicate threw: nobody can say the call went well.
            return Verdict.Failure;
        }
        // A value outside the enum is the predicate's bug too.
        return verdict is Verdict.Success or Verdict.Failure or Verdict.Ignored ? verdict : Verdict.Failure;
    }

    private void Call(Func<int> call)
    {
        ThrowIfDisposed();
        try
        {
            call();
        }
        catch (ObjectDisposedException e)
        {
            throw new ObjectDisposedException(ToString(), e.Message);
        }
        finally
        {
            GC.KeepAlive(this);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed() => throw new ObjectDisposedException(ToString());

    private void ThrowIfDisposed()
    {
        if (Volatile.Read(ref _disposed) != 0) throw new ObjectDisposedException(ToString());
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private Exception Failed(int status) =>
        Volatile.Read(ref _disposed) != 0 || status == Status.EHandle
            ? new ObjectDisposedException(ToString(), NativeMethods.LastErrorMessage())
            : NativeErrors.FromLastError(status);
}
